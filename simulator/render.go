package simulator

import (
	"strconv"
	"unicode/utf8"
)

// TokenText is the text of every generated token: one token is one word, so a
// client that counts whitespace-separated words counts tokens exactly.
const TokenText = " tok"

// Fixed SSE events.
const (
	doneEvent           = "data: [DONE]\n\n"
	midstreamErrorEvent = `data: {"error":{"message":"llmsim: injected mid-stream error","type":"InternalServerError","param":null,"code":500}}` + "\n\n"
)

// renderer renders the SSE events and JSON bodies of one request by
// appending bytes: no encoding/json or fmt on the streaming path. The parts
// that are the same for every chunk (id, object, created, model) are rendered
// once per request.
type renderer struct {
	chat bool
	id   string // e.g. "chatcmpl-<request id>"
	// model and created are kept for the non-streaming body.
	model   string
	created int64
	// head is `data: {"id":..,"object":..,"created":..,"model":..,"choices":[`.
	head []byte
	// tail closes a chunk: `]` plus `,"usage":null` when usage is reported,
	// then `}` and the blank line.
	tail []byte
	// continuous, with prompt, replaces "usage":null by the cumulative
	// usage on every chunk (vLLM's stream_options.continuous_usage_stats).
	continuous bool
	prompt     int
	// usage reports whether the stream ends with a usage chunk.
	usage bool
}

func newRenderer(api, requestID, model string, created int64, includeUsage, continuous bool, prompt int) renderer {
	r := renderer{chat: api == APIChat, model: model, created: created, continuous: includeUsage && continuous, prompt: prompt, usage: includeUsage}
	object := "text_completion"
	if r.chat {
		r.id = "chatcmpl-" + requestID
		object = "chat.completion.chunk"
	} else {
		r.id = "cmpl-" + requestID
	}
	h := make([]byte, 0, 128+len(r.id)+len(model))
	h = append(h, `data: {"id":`...)
	h = appendJSONString(h, r.id)
	h = append(h, `,"object":"`...)
	h = append(h, object...)
	h = append(h, `","created":`...)
	h = strconv.AppendInt(h, created, 10)
	h = append(h, `,"model":`...)
	h = appendJSONString(h, model)
	h = append(h, `,"choices":[`...)
	r.head = h
	if includeUsage {
		r.tail = []byte("],\"usage\":null}\n\n")
	} else {
		r.tail = []byte("]}\n\n")
	}
	return r
}

func appendTokens(dst []byte, n int) []byte {
	for range n {
		dst = append(dst, TokenText...)
	}
	return dst
}

// appendTail closes a chunk; cum is the number of tokens written so far,
// reported only with continuous usage.
func (r *renderer) appendTail(dst []byte, cum int) []byte {
	if !r.continuous {
		return append(dst, r.tail...)
	}
	dst = append(dst, `],"usage":`...)
	dst = appendUsageObject(dst, r.prompt, cum)
	return append(dst, "}\n\n"...)
}

// appendRole appends the chat role-only chunk.
func (r *renderer) appendRole(dst []byte) []byte {
	dst = append(dst, r.head...)
	dst = append(dst, `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}`...)
	return r.appendTail(dst, 0)
}

// appendContent appends a content chunk carrying n tokens, cum tokens in all
// so far; withRole puts the assistant role in the same (chat) delta.
func (r *renderer) appendContent(dst []byte, n, cum int, withRole bool) []byte {
	dst = append(dst, r.head...)
	if r.chat {
		dst = append(dst, `{"index":0,"delta":{`...)
		if withRole {
			dst = append(dst, `"role":"assistant",`...)
		}
		dst = append(dst, `"content":"`...)
		dst = appendTokens(dst, n)
		dst = append(dst, `"},"logprobs":null,"finish_reason":null}`...)
	} else {
		dst = append(dst, `{"index":0,"text":"`...)
		dst = appendTokens(dst, n)
		dst = append(dst, `","logprobs":null,"finish_reason":null}`...)
	}
	return r.appendTail(dst, cum)
}

// appendReasoning appends a chat chunk carrying n reasoning tokens in
// delta.reasoning (vLLM's field since v0.16; DeepSeek and SGLang call it
// reasoning_content), cum tokens in all so far. Completions have no
// reasoning channel: their reasoning tokens are plain text.
func (r *renderer) appendReasoning(dst []byte, n, cum int, withRole bool) []byte {
	if !r.chat {
		return r.appendContent(dst, n, cum, withRole)
	}
	dst = append(dst, r.head...)
	dst = append(dst, `{"index":0,"delta":{`...)
	if withRole {
		dst = append(dst, `"role":"assistant",`...)
	}
	dst = append(dst, `"reasoning":"`...)
	dst = appendTokens(dst, n)
	dst = append(dst, `"},"logprobs":null,"finish_reason":null}`...)
	return r.appendTail(dst, cum)
}

// appendFinish appends the chunk that carries finish_reason and no content;
// cum is the number of tokens written.
func (r *renderer) appendFinish(dst []byte, reason string, cum int) []byte {
	dst = append(dst, r.head...)
	if r.chat {
		dst = append(dst, `{"index":0,"delta":{},"logprobs":null,"finish_reason":"`...)
	} else {
		dst = append(dst, `{"index":0,"text":"","logprobs":null,"finish_reason":"`...)
	}
	dst = append(dst, reason...)
	dst = append(dst, `"}`...)
	return r.appendTail(dst, cum)
}

// appendUsage appends the usage chunk: "choices":[] and the usage object.
func (r *renderer) appendUsage(dst []byte, completion int) []byte {
	dst = append(dst, r.head...)
	dst = append(dst, `],"usage":`...)
	dst = appendUsageObject(dst, r.prompt, completion)
	return append(dst, "}\n\n"...)
}

func appendUsageObject(dst []byte, prompt, completion int) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, int64(prompt), 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, int64(completion), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(prompt+completion), 10)
	return append(dst, '}')
}

// appendResponse appends a complete non-streaming response body.
func (r *renderer) appendResponse(dst []byte, tokens int, reason string, usage bool) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, r.id)
	if r.chat {
		dst = append(dst, `,"object":"chat.completion","created":`...)
	} else {
		dst = append(dst, `,"object":"text_completion","created":`...)
	}
	dst = strconv.AppendInt(dst, r.created, 10)
	dst = append(dst, `,"model":`...)
	dst = appendJSONString(dst, r.model)
	if r.chat {
		dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":"`...)
		dst = appendTokens(dst, tokens)
		dst = append(dst, `"},"logprobs":null,"finish_reason":"`...)
	} else {
		dst = append(dst, `,"choices":[{"index":0,"text":"`...)
		dst = appendTokens(dst, tokens)
		dst = append(dst, `","logprobs":null,"finish_reason":"`...)
	}
	dst = append(dst, reason...)
	dst = append(dst, `"}]`...)
	if usage {
		dst = append(dst, `,"usage":`...)
		dst = appendUsageObject(dst, r.prompt, tokens)
	}
	return append(dst, "}\n"...)
}

// appendErrorBody appends {"error":{"message":..,"type":..,"param":null,"code":status}}.
func appendErrorBody(dst []byte, status int, msg string) []byte {
	dst = append(dst, `{"error":{"message":`...)
	dst = appendJSONString(dst, msg)
	dst = append(dst, `,"type":"`...)
	dst = append(dst, errorType(status)...)
	dst = append(dst, `","param":null,"code":`...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	return append(dst, "}}\n"...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string literal. Invalid UTF-8 becomes
// U+FFFD, as encoding/json does.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
