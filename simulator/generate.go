package simulator

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"time"
	"unicode"
)

// maxRequestBody bounds the size of a generation request body.
const maxRequestBody = 16 << 20

// genRequest is the part of an OpenAI chat or completions request the
// simulator reads. Unknown fields are ignored, as vLLM does.
type genRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
	IgnoreEOS           bool `json:"ignore_eos"`
	Messages            []struct {
		Content any `json:"content"`
	} `json:"messages"`
	Prompt any `json:"prompt"`
}

// failure is the kind of injected failure a request gets.
type failure int

const (
	failNone failure = iota
	failStatus
	failMidstream
	failTruncate
)

// plan is what the simulator decided to do with one request.
type plan struct {
	outputTokens int    // tokens to generate if nothing fails
	finishReason string // "length" or "stop"
	// reasoningTokens is how many of the output tokens, at the start,
	// are reasoning (APIs with a reasoning channel only).
	reasoningTokens int
	failure         failure
	stall           bool
	includeUsage    bool // streaming: report token counts (OpenAI: the usage chunk and "usage":null)
}

// cutTokens is the number of tokens written before a mid-stream error or a
// truncation: half the output, rounded down.
func (p *plan) cutTokens() int { return p.outputTokens / 2 }

// makePlan draws a request's fate. It always makes the same draws in the same
// order, so a seed reproduces a sequence of requests whatever the rates are.
func makePlan(cfg *compiled, req *norm, api *apiSpec, r *rand.Rand) plan {
	uErr, uMid, uTrunc, uStall := r.Float64(), r.Float64(), r.Float64(), r.Float64()
	drawn := cfg.drawOutputTokens(r)

	p := plan{outputTokens: drawn, finishReason: "stop"}
	if limit := req.limit; limit != nil {
		if req.exact || *limit <= drawn {
			p.outputTokens = *limit
			p.finishReason = "length"
		}
	}
	switch {
	case uErr < cfg.ErrorRate:
		p.failure = failStatus
	case uMid < cfg.MidstreamErrorRate:
		p.failure = failMidstream
	case uTrunc < cfg.TruncateRate:
		p.failure = failTruncate
	}
	p.stall = uStall < cfg.StallRate
	p.includeUsage = cfg.Usage && req.usage
	if api.reasoning {
		p.reasoningTokens = min(cfg.ReasoningTokens, p.outputTokens)
	}
	return p
}

// promptTokens estimates the prompt length as the number of
// whitespace-separated words in the prompt (completions) or in the text of
// every message (chat). A completions prompt given as token IDs counts one
// token per ID.
func (req *genRequest) promptTokens() int {
	n := countWords(req.Prompt)
	for i := range req.Messages {
		n += countWords(req.Messages[i].Content)
	}
	return n
}

func countWords(v any) int {
	switch v := v.(type) {
	case string:
		n, inWord := 0, false
		for _, c := range v {
			if unicode.IsSpace(c) {
				inWord = false
			} else if !inWord {
				inWord = true
				n++
			}
		}
		return n
	case float64: // a token ID
		return 1
	case []any:
		n := 0
		for _, e := range v {
			n += countWords(e)
		}
		return n
	case map[string]any: // a content part such as {"type":"text","text":"..."}
		return countWords(v["text"])
	}
	return 0
}

// serveGenerate handles a generation request of any simulated API.
func (s *Server) serveGenerate(w http.ResponseWriter, r *http.Request, api *apiSpec) {
	received := time.Now()
	cfg := s.cfg.Load()
	s.metrics.inFlight.Inc()
	defer s.metrics.inFlight.Dec()

	id := r.Header.Get("X-Request-Id")
	if id == "" {
		id = s.newRequestID()
	}
	w.Header().Set("X-Request-Id", id)
	rec := &TruthRecord{
		RequestID:      id,
		API:            api.name,
		Received:       received.UnixNano(),
		TokensPerChunk: cfg.TokensPerChunk,
	}

	var req norm
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	msg := ""
	if err != nil {
		msg = "reading the request body: " + err.Error()
	} else {
		req, msg = api.decode(r, body)
	}
	rec.Model = req.model
	rec.Stream = req.stream
	if msg != "" {
		s.logger.Debug("Bad request", "request_id", id, "err", msg)
		rec.Status = http.StatusBadRequest
		writeError(w, api, http.StatusBadRequest, msg, id)
		rec.EndWritten = stamp(received, rec.Received)
		rec.Outcome = OutcomeBadRequest
		s.finish(rec)
		return
	}
	rec.PromptTokens = req.prompt

	rng := s.newRand()
	p := makePlan(cfg, &req, api, rng)
	if p.failure == failStatus {
		rec.Status = cfg.ErrorStatus
		writeError(w, api, cfg.ErrorStatus, "llmsim: injected error", id)
		rec.EndWritten = stamp(received, rec.Received)
		rec.Outcome = OutcomeErrorStatus
		s.finish(rec)
		return
	}
	g := &generation{
		s:        s,
		cfg:      cfg,
		rng:      rng,
		plan:     p,
		rec:      rec,
		w:        w,
		rc:       http.NewResponseController(w),
		ctx:      r.Context(),
		received: received,
	}
	defer g.stopTimer()
	if !req.stream {
		// Only the OpenAI APIs answer without streaming; the others
		// rejected the request above.
		g.rend = newRenderer(api.name, id, req.model, received.Unix(), false, false, rec.PromptTokens)
		g.respond()
		return
	}
	g.wire = api.newWire(wireContext{
		api:        api.name,
		requestID:  id,
		model:      req.model,
		created:    received.Unix(),
		createdAt:  received.UTC().Format(time.RFC3339Nano),
		usage:      p.includeUsage,
		continuous: req.continuous,
		prompt:     rec.PromptTokens,
		roleChunk:  cfg.RoleChunk,
		reasoning:  p.reasoningTokens,
	})
	g.stream()
}

// writeError writes an error response with the API's error body; 429 and
// 503 add Retry-After: 1.
func writeError(w http.ResponseWriter, api *apiSpec, status int, msg, requestID string) {
	body, ct := api.appendError(nil, status, msg, requestID)
	h := w.Header()
	h.Set("Content-Type", ct)
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		h.Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// stamp returns now as Unix nanoseconds, computed as recvNS plus the
// monotonic time elapsed since received.
func stamp(received time.Time, recvNS int64) int64 {
	return recvNS + int64(time.Since(received))
}

// generation is the state of one request being served.
type generation struct {
	s        *Server
	cfg      *compiled
	rng      *rand.Rand
	plan     plan
	rec      *TruthRecord
	w        http.ResponseWriter
	rc       *http.ResponseController
	ctx      context.Context
	received time.Time
	timer    *time.Timer // created on first wait, then Reset: one per request
	wire     wire        // streaming responses
	rend     renderer    // non-streaming (OpenAI) responses
	stalled  bool        // an injected stall was applied
}

func (g *generation) now() int64 { return stamp(g.received, g.rec.Received) }

// waitUntil sleeps until the absolute deadline, or returns errClientGone if
// the client goes away first.
func (g *generation) waitUntil(deadline time.Time) error {
	d := time.Until(deadline)
	if d <= 0 {
		return nil
	}
	if g.timer == nil {
		g.timer = time.NewTimer(d)
	} else {
		g.timer.Reset(d)
	}
	select {
	case <-g.timer.C:
		return nil
	case <-g.ctx.Done():
		return errClientGone
	}
}

// hang blocks until the client goes away.
func (g *generation) hang() error {
	<-g.ctx.Done()
	return errClientGone
}

func (g *generation) stopTimer() {
	if g.timer != nil {
		g.timer.Stop()
	}
}

// send writes b, flushes it and returns the time the flush returned.
func (g *generation) send(b []byte) (int64, error) {
	if len(b) > 0 {
		if _, err := g.w.Write(b); err != nil {
			return 0, errors.Join(errClientGone, err)
		}
	}
	if err := g.rc.Flush(); err != nil {
		return 0, errors.Join(errClientGone, err)
	}
	return g.now(), nil
}

// canceled records a request whose client went away.
func (g *generation) canceled() {
	g.rec.EndWritten = g.now()
	g.rec.Outcome = OutcomeCanceled
	g.s.finish(g.rec)
}

// truncate records a truncated request and aborts the response: the
// connection is closed (HTTP/1) or the stream reset (HTTP/2) without the end
// of the body, so the client sees an unexpected EOF. It does not return.
func (g *generation) truncate() {
	g.rec.EndWritten = g.now()
	g.rec.Outcome = OutcomeTruncated
	g.s.finish(g.rec)
	panic(http.ErrAbortHandler)
}

// chunkAt returns the size of chunk i and whether it carries reasoning:
// the first r of the n tokens are reasoning, each phase cut into chunks of
// k tokens (the last of a phase may carry fewer), so no chunk mixes the
// two; rc is the number of reasoning chunks.
func chunkAt(i, n, r, k, rc int) (tokens int, reasoning bool) {
	if i < rc {
		return min(k, r-i*k), true
	}
	return min(k, n-r-(i-rc)*k), false
}

// stream writes a streamed response following the plan, in the wire's
// format.
func (g *generation) stream() {
	cfg, p, rec := g.cfg, &g.plan, g.rec
	h := g.w.Header()
	h.Set("Content-Type", g.wire.contentType())
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	g.w.WriteHeader(http.StatusOK)
	rec.Status = http.StatusOK

	// Headers, and what the API sends before the first token (OpenAI's
	// role-only chunk, Anthropic's message_start), go out at once, well
	// before the first token (Starlette-based servers such as vLLM send
	// headers early too): a client must take none of it for the first
	// token.
	buf := g.wire.appendStart(make([]byte, 0, 512))
	if _, err := g.send(buf); err != nil {
		g.canceled()
		return
	}

	n, r, k := p.outputTokens, p.reasoningTokens, cfg.TokensPerChunk
	rc := (r + k - 1) / k
	chunks := rc + (n-r+k-1)/k
	stop := chunks // chunk index at which the stream ends
	if p.failure != failNone {
		// The failure strikes when the first chunk that would pass half
		// the tokens was due.
		stop = 0
		for sum := 0; stop < chunks; stop++ {
			t, _ := chunkAt(stop, n, r, k, rc)
			if sum+t > p.cutTokens() {
				break
			}
			sum += t
		}
	}
	rec.ChunksWritten = make([]int64, 0, stop)
	deadline := g.received.Add(cfg.ttft.draw(g.rng))
	for i := 0; i < chunks; i++ {
		tokens, reasoning := chunkAt(i, n, r, k, rc)
		if i > 0 {
			deadline = deadline.Add(cfg.itl.drawSum(g.rng, tokens))
		}
		if err := g.waitUntil(deadline); err != nil {
			g.canceled()
			return
		}
		if i == stop {
			break // the failure strikes when chunk i was due
		}
		buf = g.wire.appendChunk(buf[:0], chunk{
			n: tokens, cum: rec.OutputTokens + tokens, reasoning: reasoning,
			last: i == chunks-1, finish: p.finishReason,
		})
		t, err := g.send(buf)
		if err != nil {
			g.canceled()
			return
		}
		if i == 0 {
			rec.FirstByteWritten = t
		}
		rec.ChunksWritten = append(rec.ChunksWritten, t)
		rec.OutputTokens += tokens
		if reasoning {
			rec.ReasoningTokens += tokens
		}
		if i == 0 && p.stall {
			if err := g.stall(&deadline); err != nil {
				g.canceled()
				return
			}
		}
	}

	switch p.failure {
	case failTruncate:
		g.truncate()
	case failMidstream:
		t, err := g.send(g.wire.appendStreamError(buf[:0]))
		if err != nil {
			g.canceled()
			return
		}
		rec.EndWritten = t
		rec.Outcome = OutcomeMidstreamError
	default:
		t, err := g.send(g.wire.appendEnd(buf[:0], p.finishReason, rec.OutputTokens))
		if err != nil {
			g.canceled()
			return
		}
		rec.EndWritten = t
		rec.FinishReason = p.finishReason
		rec.Outcome = OutcomeSuccess
		if g.stalled {
			rec.Outcome = OutcomeStalled
		}
	}
	g.s.finish(rec)
}

// stall applies an injected stall after the first token: it shifts the
// schedule by the stall and waits it out, or hangs if the stall is zero.
func (g *generation) stall(deadline *time.Time) error {
	g.stalled = true
	if g.cfg.Stall == 0 {
		return g.hang()
	}
	*deadline = deadline.Add(g.cfg.Stall)
	return g.waitUntil(*deadline)
}

// respond serves a non-streaming request: it waits for the whole generation
// (TTFT plus one ITL per further token) and writes one JSON response.
// Mid-stream errors become a 500 error body and truncation aborts the
// connection before any header, both at the time half the tokens were due.
func (g *generation) respond() {
	cfg, p, rec := g.cfg, &g.plan, g.rec
	tokens := p.outputTokens
	if p.failure != failNone {
		tokens = p.cutTokens() + 1 // the failure strikes when this token was due
	}
	deadline := g.received.Add(cfg.ttft.draw(g.rng)).Add(cfg.itl.drawSum(g.rng, tokens-1))
	if p.stall && tokens > 1 {
		if err := g.stall(&deadline); err != nil {
			g.canceled()
			return
		}
	}
	if err := g.waitUntil(deadline); err != nil {
		g.canceled()
		return
	}
	switch p.failure {
	case failTruncate:
		g.truncate()
	case failMidstream:
		rec.Status = http.StatusInternalServerError
		writeError(g.w, apiChat, http.StatusInternalServerError, "llmsim: injected mid-stream error", g.rec.RequestID)
		rec.EndWritten = g.now()
		rec.Outcome = OutcomeMidstreamError
		g.s.finish(rec)
		return
	}
	body := g.rend.appendResponse(nil, p.outputTokens, p.finishReason, g.cfg.Usage)
	h := g.w.Header()
	h.Set("Content-Type", "application/json")
	g.w.WriteHeader(http.StatusOK)
	rec.Status = http.StatusOK
	t, err := g.send(body)
	if err != nil {
		g.canceled()
		return
	}
	rec.FirstByteWritten, rec.EndWritten = t, t
	rec.ChunksWritten = []int64{t}
	rec.OutputTokens = p.outputTokens
	rec.FinishReason = p.finishReason
	rec.Outcome = OutcomeSuccess
	if g.stalled {
		rec.Outcome = OutcomeStalled
	}
	g.s.finish(rec)
}

// errorType maps a status to the error type names vLLM uses.
func errorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "BadRequestError"
	case http.StatusUnauthorized:
		return "AuthenticationError"
	case http.StatusForbidden:
		return "PermissionDeniedError"
	case http.StatusNotFound:
		return "NotFoundError"
	case http.StatusRequestEntityTooLarge:
		return "RequestEntityTooLargeError"
	case http.StatusUnprocessableEntity:
		return "UnprocessableEntityError"
	case http.StatusTooManyRequests:
		return "RateLimitError"
	case http.StatusNotImplemented:
		return "NotImplementedError"
	case http.StatusServiceUnavailable:
		return "ServiceUnavailableError"
	}
	if status < 500 {
		return "BadRequestError"
	}
	return "InternalServerError"
}
