package simulator

// wire renders the body of one streamed response in one API's format. A
// wire belongs to one request and may keep state between calls; every
// method appends to dst and returns the extended slice, which the caller
// writes and flushes as one write.
type wire interface {
	// contentType is the response's Content-Type.
	contentType() string
	// appendStart appends what is written with the response headers,
	// before the first token (OpenAI's role-only chunk, Anthropic's
	// message_start); most APIs write nothing.
	appendStart(dst []byte) []byte
	// appendChunk appends one content chunk.
	appendChunk(dst []byte, c chunk) []byte
	// appendEnd appends what follows the last chunk of a complete
	// stream: finish, usage and end marker, as the API has them.
	appendEnd(dst []byte, finish string, tokens int) []byte
	// appendStreamError appends the API's mid-stream error and what
	// follows it (OpenAI-style APIs: [DONE]).
	appendStreamError(dst []byte) []byte
}

// chunk is one content chunk of a stream.
type chunk struct {
	// n is the number of tokens the chunk carries and cum the number
	// written once it is (reasoning tokens included).
	n, cum int
	// reasoning marks a chunk of reasoning tokens (APIs with a reasoning
	// channel only).
	reasoning bool
	// last marks the last chunk of a stream that ends normally, with
	// finish ("length" or "stop"): TGI and SGLang put the end of the
	// generation on it.
	last   bool
	finish string
}

// wireContext is what a wire needs to know about its request.
type wireContext struct {
	api       string
	requestID string
	model     string
	created   int64 // Unix seconds
	createdAt string
	// usage reports whether counts go into the stream: the request asked
	// (where that is optional) and Config.Usage is on.
	usage bool
	// continuous is OpenAI's continuous usage stats (with usage).
	continuous bool
	prompt     int
	// roleChunk is Config.RoleChunk.
	roleChunk bool
	// reasoning is the number of reasoning tokens the stream starts with.
	reasoning int
}

// openAIWire renders OpenAI chat and completions streams with renderer.
type openAIWire struct {
	rend      renderer
	roleChunk bool
	first     bool // no content chunk written yet
}

func newOpenAIWire(c wireContext) wire {
	return &openAIWire{
		rend:      newRenderer(c.api, c.requestID, c.model, c.created, c.usage, c.continuous, c.prompt),
		roleChunk: c.roleChunk,
		first:     true,
	}
}

func (w *openAIWire) contentType() string { return "text/event-stream" }

// appendStart writes the role-only chunk of a chat stream (with
// Config.RoleChunk): it goes out with the headers, well before the first
// token, as many gateways send it, so a client must not take it for the
// first token.
func (w *openAIWire) appendStart(dst []byte) []byte {
	if w.rend.chat && w.roleChunk {
		return w.rend.appendRole(dst)
	}
	return dst
}

func (w *openAIWire) appendChunk(dst []byte, c chunk) []byte {
	withRole := w.first && w.rend.chat && !w.roleChunk
	w.first = false
	if c.reasoning {
		return w.rend.appendReasoning(dst, c.n, c.cum, withRole)
	}
	return w.rend.appendContent(dst, c.n, c.cum, withRole)
}

func (w *openAIWire) appendEnd(dst []byte, finish string, tokens int) []byte {
	dst = w.rend.appendFinish(dst, finish, tokens)
	if w.rend.usage {
		dst = w.rend.appendUsage(dst, tokens)
	}
	return append(dst, doneEvent...)
}

func (w *openAIWire) appendStreamError(dst []byte) []byte {
	return append(append(dst, midstreamErrorEvent...), doneEvent...)
}
