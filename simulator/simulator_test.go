package simulator_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/llmslo/llm_slo_exporter/simulator"
)

// fastConfig is the default configuration with zero latencies, so that tests
// run at full speed and never depend on wall-clock timing.
func fastConfig() simulator.Config {
	c := simulator.DefaultConfig()
	c.TTFT, c.ITL = 0, 0
	c.OutputTokens = 8
	return c
}

type harness struct {
	t       *testing.T
	sim     *simulator.Server
	srv     *httptest.Server
	records chan simulator.TruthRecord
}

func newHarness(t *testing.T, mutate func(*simulator.Config)) *harness {
	t.Helper()
	cfg := fastConfig()
	if mutate != nil {
		mutate(&cfg)
	}
	h := &harness{t: t, records: make(chan simulator.TruthRecord, 64)}
	sim, err := simulator.New(simulator.Options{
		Config:        cfg,
		TruthCapacity: 100,
		Seed:          1,
		OnRecord:      func(r simulator.TruthRecord) { h.records <- r },
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.sim = sim
	h.srv = httptest.NewServer(sim.Handler())
	t.Cleanup(h.srv.Close)
	return h
}

// post sends a JSON body and returns the response with its body read in full.
// A read error (expected for truncated streams) is returned, not fatal.
func (h *harness) post(path, body string, header map[string]string) (*http.Response, []byte, error) {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// record waits for the next finished request's truth record.
func (h *harness) record() simulator.TruthRecord {
	h.t.Helper()
	select {
	case r := <-h.records:
		return r
	case <-time.After(5 * time.Second):
		h.t.Fatal("no truth record within 5s")
		return simulator.TruthRecord{}
	}
}

// sseData is a tiny SSE parser, independent of the prober's: it splits the
// body into events on blank lines and returns each event's data field. It
// fails the test on anything llmsim should never send.
func sseData(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	s := string(body)
	for s != "" {
		ev, rest, ok := strings.Cut(s, "\n\n")
		if !ok {
			t.Fatalf("unterminated event %q", s)
		}
		s = rest
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("event is not a single data line: %q", ev)
		}
		out = append(out, data)
	}
	return out
}

type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta *struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Message *struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		Text         *string `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
	Error *apiError `json:"error"`
	raw   map[string]json.RawMessage
}

type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Param   json.RawMessage `json:"param"`
	Code    int             `json:"code"`
}

func decodeChunk(t *testing.T, data string) chunk {
	t.Helper()
	var c chunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		t.Fatalf("bad JSON %q: %v", data, err)
	}
	if err := json.Unmarshal([]byte(data), &c.raw); err != nil {
		t.Fatalf("bad JSON %q: %v", data, err)
	}
	return c
}

// streamSummary is what a stream says, reduced for comparison.
type streamSummary struct {
	roleOnly     int      // role-only chunks seen
	roleWithText bool     // the role arrived on a content chunk
	content      []string // content (or text) of each content chunk
	finish       string   // finish_reason of the finish chunk
	usage        *[3]int  // prompt, completion, total of the usage chunk
	usageNulls   int      // chunks with "usage": null
	errs         []apiError
	done         bool // ended with [DONE]
}

func summarize(t *testing.T, api string, events []string) streamSummary {
	t.Helper()
	var s streamSummary
	for i, data := range events {
		if data == "[DONE]" {
			if i != len(events)-1 {
				t.Fatalf("[DONE] is not the last event")
			}
			s.done = true
			continue
		}
		c := decodeChunk(t, data)
		if c.Error != nil {
			s.errs = append(s.errs, *c.Error)
			continue
		}
		wantObj := "chat.completion.chunk"
		if api == "completions" {
			wantObj = "text_completion"
		}
		if c.Object != wantObj {
			t.Errorf("chunk %d: object %q, want %q", i, c.Object, wantObj)
		}
		if string(c.raw["usage"]) == "null" {
			s.usageNulls++
		}
		if len(c.Choices) == 0 {
			if c.Usage == nil {
				t.Fatalf("chunk %d: no choices and no usage: %s", i, data)
			}
			if s.usage != nil {
				t.Fatalf("two usage chunks")
			}
			s.usage = &[3]int{c.Usage.PromptTokens, c.Usage.CompletionTokens, c.Usage.TotalTokens}
			continue
		}
		ch := c.Choices[0]
		if ch.FinishReason != nil {
			s.finish = *ch.FinishReason
			continue
		}
		var text string
		if api == "chat" {
			if ch.Delta == nil || ch.Delta.Content == nil {
				t.Fatalf("chunk %d: no delta content: %s", i, data)
			}
			text = *ch.Delta.Content
			if ch.Delta.Role != nil {
				if text == "" {
					s.roleOnly++
					continue
				}
				s.roleWithText = true
			}
		} else {
			if ch.Text == nil {
				t.Fatalf("chunk %d: no text: %s", i, data)
			}
			text = *ch.Text
		}
		s.content = append(s.content, text)
	}
	return s
}

func countTokens(content []string) int {
	n := 0
	for _, c := range content {
		n += len(strings.Fields(c))
	}
	return n
}

// checkTruth checks the invariants of a truth record: received <= first
// byte <= chunks (in order) <= end, and the chunk and token counts.
func checkTruth(t *testing.T, r simulator.TruthRecord, chunks, tokens int) {
	t.Helper()
	if len(r.ChunksWritten) != chunks {
		t.Errorf("truth: %d chunks written, want %d", len(r.ChunksWritten), chunks)
	}
	if r.OutputTokens != tokens {
		t.Errorf("truth: %d output tokens, want %d", r.OutputTokens, tokens)
	}
	prev := r.Received
	if chunks > 0 {
		if r.FirstByteWritten != r.ChunksWritten[0] {
			t.Errorf("truth: first_byte_written %d != first chunk %d", r.FirstByteWritten, r.ChunksWritten[0])
		}
		for i, ts := range r.ChunksWritten {
			if ts < prev {
				t.Errorf("truth: chunk %d at %d before %d", i, ts, prev)
			}
			prev = ts
		}
	} else if r.FirstByteWritten != 0 {
		t.Errorf("truth: first_byte_written %d with no chunk", r.FirstByteWritten)
	}
	if r.EndWritten < prev {
		t.Errorf("truth: end_written %d before %d", r.EndWritten, prev)
	}
}

const chatPath, complPath = "/v1/chat/completions", "/v1/completions"

func TestChatStream(t *testing.T) {
	const prompt = `"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"one two three"}]}]`
	for _, tc := range []struct {
		name       string
		mutate     func(*simulator.Config)
		body       string
		wantChunks []string
		wantFinish string
		wantUsage  bool
		wantRole   bool // role-only chunk first
	}{
		{
			name:       "ignore_eos forces max_tokens, usage requested",
			body:       `{"model":"m","stream":true,"max_tokens":5,"ignore_eos":true,"stream_options":{"include_usage":true},` + prompt + `}`,
			wantChunks: []string{" tok", " tok", " tok", " tok", " tok"},
			wantFinish: "length",
			wantUsage:  true,
			wantRole:   true,
		},
		{
			name:       "no include_usage, no usage",
			body:       `{"model":"m","stream":true,"max_tokens":2,"ignore_eos":true,` + prompt + `}`,
			wantChunks: []string{" tok", " tok"},
			wantFinish: "length",
			wantRole:   true,
		},
		{
			name:       "usage disabled in config",
			mutate:     func(c *simulator.Config) { c.Usage = false },
			body:       `{"model":"m","stream":true,"max_tokens":2,"ignore_eos":true,"stream_options":{"include_usage":true},` + prompt + `}`,
			wantChunks: []string{" tok", " tok"},
			wantFinish: "length",
			wantRole:   true,
		},
		{
			name:       "role chunk off",
			mutate:     func(c *simulator.Config) { c.RoleChunk = false },
			body:       `{"model":"m","stream":true,"max_tokens":2,"ignore_eos":true,` + prompt + `}`,
			wantChunks: []string{" tok", " tok"},
			wantFinish: "length",
		},
		{
			name:       "tokens per chunk, short last chunk",
			mutate:     func(c *simulator.Config) { c.TokensPerChunk = 3 },
			body:       `{"model":"m","stream":true,"max_tokens":7,"ignore_eos":true,"stream_options":{"include_usage":true},` + prompt + `}`,
			wantChunks: []string{" tok tok tok", " tok tok tok", " tok"},
			wantFinish: "length",
			wantUsage:  true,
			wantRole:   true,
		},
		{
			name:       "max_completion_tokens wins over max_tokens",
			body:       `{"model":"m","stream":true,"max_tokens":9,"max_completion_tokens":3,"ignore_eos":true,` + prompt + `}`,
			wantChunks: []string{" tok", " tok", " tok"},
			wantFinish: "length",
			wantRole:   true,
		},
		{
			name:       "without ignore_eos the drawn length is shorter",
			mutate:     func(c *simulator.Config) { c.OutputTokens = 4 },
			body:       `{"model":"m","stream":true,"max_tokens":10,` + prompt + `}`,
			wantChunks: []string{" tok", " tok", " tok", " tok"},
			wantFinish: "stop",
			wantRole:   true,
		},
		{
			name:       "without ignore_eos max_tokens still caps",
			mutate:     func(c *simulator.Config) { c.OutputTokens = 4 },
			body:       `{"model":"m","stream":true,"max_tokens":2,` + prompt + `}`,
			wantChunks: []string{" tok", " tok"},
			wantFinish: "length",
			wantRole:   true,
		},
		{
			name:       "no max_tokens uses output_tokens",
			mutate:     func(c *simulator.Config) { c.OutputTokens = 3 },
			body:       `{"model":"m","stream":true,` + prompt + `}`,
			wantChunks: []string{" tok", " tok", " tok"},
			wantFinish: "stop",
			wantRole:   true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.mutate)
			resp, body, err := h.post(chatPath, tc.body, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("Content-Type %q", ct)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
				t.Errorf("Cache-Control %q", cc)
			}
			s := summarize(t, "chat", sseData(t, body))
			if !s.done {
				t.Error("no [DONE]")
			}
			if got := strings.Join(s.content, "|"); got != strings.Join(tc.wantChunks, "|") {
				t.Errorf("content chunks %q, want %q", s.content, tc.wantChunks)
			}
			if s.finish != tc.wantFinish {
				t.Errorf("finish_reason %q, want %q", s.finish, tc.wantFinish)
			}
			if tc.wantRole {
				if s.roleOnly != 1 || s.roleWithText {
					t.Errorf("role-only chunks %d, role with text %v; want one role-only chunk", s.roleOnly, s.roleWithText)
				}
			} else if s.roleOnly != 0 || !s.roleWithText {
				t.Errorf("role-only chunks %d, role with text %v; want the role on the first content chunk", s.roleOnly, s.roleWithText)
			}
			n := countTokens(s.content)
			if tc.wantUsage {
				if s.usage == nil {
					t.Fatal("no usage chunk")
				}
				if want := [3]int{5, n, 5 + n}; *s.usage != want { // "be brief" + "one two three"
					t.Errorf("usage %v, want %v", *s.usage, want)
				}
				// Every chunk but the usage chunk carries "usage": null.
				if want := len(tc.wantChunks) + 2; s.usageNulls != want {
					t.Errorf("%d chunks with usage null, want %d", s.usageNulls, want)
				}
			} else if s.usage != nil || s.usageNulls != 0 {
				t.Errorf("usage chunk %v, %d usage nulls; want none", s.usage, s.usageNulls)
			}
			r := h.record()
			checkTruth(t, r, len(tc.wantChunks), n)
			if r.Outcome != simulator.OutcomeSuccess || r.Status != 200 || r.FinishReason != tc.wantFinish || r.API != simulator.APIChat || r.Model != "m" || !r.Stream {
				t.Errorf("truth record %+v", r)
			}
		})
	}
}

// TestContinuousUsage checks vLLM's stream_options.continuous_usage_stats:
// every chunk carries the cumulative usage instead of "usage": null.
func TestContinuousUsage(t *testing.T) {
	h := newHarness(t, func(c *simulator.Config) { c.TokensPerChunk = 3 })
	_, body, err := h.post(chatPath, `{"model":"m","stream":true,"max_tokens":7,"ignore_eos":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true},"messages":[{"role":"user","content":"a b"}]}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, data := range sseData(t, body) {
		if data == "[DONE]" {
			continue
		}
		c := decodeChunk(t, data)
		if c.Usage == nil {
			t.Fatalf("chunk without usage: %s", data)
		}
		if c.Usage.PromptTokens != 2 || c.Usage.TotalTokens != 2+c.Usage.CompletionTokens {
			t.Errorf("usage %+v", *c.Usage)
		}
		got = append(got, c.Usage.CompletionTokens)
	}
	// role, three content chunks (3+3+1), finish, final usage chunk.
	if want := []int{0, 3, 6, 7, 7, 7}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("cumulative completion_tokens %v, want %v", got, want)
	}
	checkTruth(t, h.record(), 3, 7)
}

func TestCompletionsStream(t *testing.T) {
	h := newHarness(t, func(c *simulator.Config) { c.TokensPerChunk = 2 })
	resp, body, err := h.post(complPath, `{"model":"c","stream":true,"max_tokens":5,"ignore_eos":true,"stream_options":{"include_usage":true},"prompt":"a b c"}`, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %v, err %v: %s", resp, err, body)
	}
	s := summarize(t, "completions", sseData(t, body))
	if got := strings.Join(s.content, "|"); got != " tok tok| tok tok| tok" {
		t.Errorf("content %q", s.content)
	}
	if s.roleOnly != 0 || s.roleWithText {
		t.Error("completions stream carries a role")
	}
	if s.finish != "length" || !s.done {
		t.Errorf("finish %q, done %v", s.finish, s.done)
	}
	if s.usage == nil || *s.usage != [3]int{3, 5, 8} {
		t.Errorf("usage %v", s.usage)
	}
	r := h.record()
	checkTruth(t, r, 3, 5)
	if r.API != simulator.APICompletions || r.TokensPerChunk != 2 || r.PromptTokens != 3 {
		t.Errorf("truth record %+v", r)
	}
}

func TestNonStreaming(t *testing.T) {
	for _, tc := range []struct {
		name, path, body, object, text string
	}{
		{"chat", chatPath, `{"model":"m","max_tokens":3,"ignore_eos":true,"messages":[{"role":"user","content":"hi"}]}`, "chat.completion", " tok tok tok"},
		{"completions", complPath, `{"model":"m","max_tokens":2,"prompt":["x y","z"]}`, "text_completion", " tok tok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			resp, body, err := h.post(tc.path, tc.body, nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("status %v, err %v: %s", resp, err, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			c := decodeChunk(t, string(body))
			if c.Object != tc.object || len(c.Choices) != 1 {
				t.Fatalf("response %s", body)
			}
			ch := c.Choices[0]
			text := ""
			if ch.Message != nil {
				text = ch.Message.Content
			} else if ch.Text != nil {
				text = *ch.Text
			}
			n := countTokens([]string{text})
			if text != tc.text || ch.FinishReason == nil || *ch.FinishReason != "length" {
				t.Errorf("response %s", body)
			}
			if c.Usage == nil || c.Usage.CompletionTokens != n || c.Usage.TotalTokens != n+c.Usage.PromptTokens {
				t.Errorf("usage %+v", c.Usage)
			}
			checkTruth(t, h.record(), 1, n)
		})
	}
}

func TestRequestID(t *testing.T) {
	h := newHarness(t, nil)
	body := `{"model":"m","stream":true,"max_tokens":1,"messages":[]}`
	resp, _, err := h.post(chatPath, body, map[string]string{"X-Request-Id": "probe-42"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get("X-Request-Id"); got != "probe-42" {
		t.Errorf("echoed request id %q", got)
	}
	if r := h.record(); r.RequestID != "probe-42" {
		t.Errorf("truth request id %q", r.RequestID)
	}
	seen := map[string]bool{}
	for range 3 {
		resp, _, err := h.post(chatPath, body, nil)
		if err != nil {
			t.Fatal(err)
		}
		id := resp.Header.Get("X-Request-Id")
		if id == "" || seen[id] {
			t.Errorf("generated request id %q empty or repeated", id)
		}
		seen[id] = true
		if r := h.record(); r.RequestID != id {
			t.Errorf("truth request id %q, header %q", r.RequestID, id)
		}
	}
}

func TestBadRequest(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"invalid JSON", `{"model":`, "invalid JSON"},
		{"max_tokens zero", `{"model":"m","max_tokens":0}`, "max_tokens must be at least 1"},
		{"max_completion_tokens too large", `{"model":"m","max_completion_tokens":99999999}`, "max_completion_tokens exceeds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			resp, body, err := h.post(chatPath, tc.body, nil)
			if err != nil {
				t.Fatal(err)
			}
			e := checkErrorBody(t, resp, body, 400)
			if !strings.Contains(e.Message, tc.want) || e.Type != "BadRequestError" {
				t.Errorf("error %+v, want message containing %q", e, tc.want)
			}
			if r := h.record(); r.Outcome != simulator.OutcomeBadRequest || r.Status != 400 {
				t.Errorf("truth record %+v", r)
			}
		})
	}
}

func checkErrorBody(t *testing.T, resp *http.Response, body []byte, status int) apiError {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var e struct {
		Error *apiError `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil {
		t.Fatalf("error body %s: %v", body, err)
	}
	if e.Error.Code != status || string(e.Error.Param) != "null" || e.Error.Message == "" {
		t.Errorf("error object %+v", *e.Error)
	}
	return *e.Error
}

func TestFailureInjection(t *testing.T) {
	const body = `{"model":"m","stream":true,"max_tokens":8,"ignore_eos":true,"stream_options":{"include_usage":true},"messages":[]}`
	t.Run("error status 500", func(t *testing.T) {
		h := newHarness(t, func(c *simulator.Config) { c.ErrorRate = 1 })
		resp, b, err := h.post(chatPath, body, nil)
		if err != nil {
			t.Fatal(err)
		}
		if e := checkErrorBody(t, resp, b, 500); e.Type != "InternalServerError" {
			t.Errorf("type %q", e.Type)
		}
		r := h.record()
		checkTruth(t, r, 0, 0)
		if r.Outcome != simulator.OutcomeErrorStatus || r.Status != 500 {
			t.Errorf("truth record %+v", r)
		}
	})
	t.Run("error status 429", func(t *testing.T) {
		h := newHarness(t, func(c *simulator.Config) { c.ErrorRate, c.ErrorStatus = 1, 429 })
		resp, b, err := h.post(complPath, `{"model":"m","stream":true,"prompt":"x"}`, nil)
		if err != nil {
			t.Fatal(err)
		}
		if e := checkErrorBody(t, resp, b, 429); e.Type != "RateLimitError" {
			t.Errorf("type %q", e.Type)
		}
		if resp.Header.Get("Retry-After") == "" {
			t.Error("no Retry-After on 429")
		}
		if r := h.record(); r.Outcome != simulator.OutcomeErrorStatus || r.Status != 429 {
			t.Errorf("truth record %+v", r)
		}
	})
	t.Run("mid-stream error", func(t *testing.T) {
		h := newHarness(t, func(c *simulator.Config) { c.MidstreamErrorRate = 1 })
		resp, b, err := h.post(chatPath, body, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("status %v, err %v", resp, err)
		}
		events := sseData(t, b)
		s := summarize(t, "chat", events)
		if len(events) < 2 || !strings.HasPrefix(events[len(events)-2], `{"error":`) || !s.done {
			t.Fatalf("stream does not end with an error event then [DONE]: %q", events)
		}
		if len(s.errs) != 1 || s.errs[0].Code != 500 || s.errs[0].Type != "InternalServerError" {
			t.Errorf("error events %+v", s.errs)
		}
		if n := countTokens(s.content); n != 4 || s.finish != "" || s.usage != nil {
			t.Errorf("%d tokens, finish %q, usage %v; want 4 tokens, no finish, no usage", n, s.finish, s.usage)
		}
		r := h.record()
		checkTruth(t, r, 4, 4)
		if r.Outcome != simulator.OutcomeMidstreamError || r.Status != 200 || r.FinishReason != "" {
			t.Errorf("truth record %+v", r)
		}
	})
	t.Run("truncation", func(t *testing.T) {
		h := newHarness(t, func(c *simulator.Config) { c.TruncateRate, c.TokensPerChunk = 1, 3 })
		resp, b, err := h.post(chatPath, body, nil)
		if resp == nil || resp.StatusCode != 200 {
			t.Fatalf("status %v, err %v", resp, err)
		}
		// The body ends early: the client sees an unexpected EOF.
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("read error %v, want unexpected EOF", err)
		}
		if bytes.Contains(b, []byte("[DONE]")) || bytes.Contains(b, []byte("finish_reason\":\"")) {
			t.Errorf("truncated stream has an end: %s", b)
		}
		// ⌊8/2⌋ = 4 tokens, rounded down to whole chunks of 3: one chunk.
		if s := summarize(t, "chat", sseData(t, b)); countTokens(s.content) != 3 {
			t.Errorf("content %q, want one chunk of 3 tokens", s.content)
		}
		r := h.record()
		checkTruth(t, r, 1, 3)
		if r.Outcome != simulator.OutcomeTruncated {
			t.Errorf("truth record %+v", r)
		}
	})
	t.Run("stall", func(t *testing.T) {
		const stall = 30 * time.Millisecond
		h := newHarness(t, func(c *simulator.Config) { c.StallRate, c.Stall = 1, stall })
		resp, b, err := h.post(chatPath, body, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("status %v, err %v", resp, err)
		}
		s := summarize(t, "chat", sseData(t, b))
		if countTokens(s.content) != 8 || !s.done || s.finish != "length" {
			t.Errorf("stalled stream incomplete: %+v", s)
		}
		r := h.record()
		checkTruth(t, r, 8, 8)
		if r.Outcome != simulator.OutcomeStalled {
			t.Errorf("outcome %q", r.Outcome)
		}
		// The schedule puts chunk 1 no earlier than received + stall
		// (TTFT and ITL are zero): a lower bound, not a timing assertion.
		if gap := time.Duration(r.ChunksWritten[1] - r.Received); gap < stall {
			t.Errorf("chunk 1 written %s after receipt, before the %s stall ended", gap, stall)
		}
	})
	t.Run("stall forever until the client leaves", func(t *testing.T) {
		h := newHarness(t, func(c *simulator.Config) { c.StallRate, c.Stall = 1, 0 })
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.srv.URL+chatPath, strings.NewReader(body))
		resp, err := h.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		// Read up to the end of the first content chunk, then leave.
		var got []byte
		buf := make([]byte, 4096)
		for bytes.Count(got, []byte("\n\n")) < 2 {
			n, err := resp.Body.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				t.Fatalf("read: %v after %q", err, got)
			}
		}
		if s := summarize(t, "chat", sseData(t, got)); countTokens(s.content) != 1 {
			t.Fatalf("before the stall: %q", got)
		}
		cancel()
		r := h.record()
		checkTruth(t, r, 1, 1)
		if r.Outcome != simulator.OutcomeCanceled {
			t.Errorf("outcome %q", r.Outcome)
		}
	})
}

func TestFailureInjectionNonStreaming(t *testing.T) {
	const body = `{"model":"m","max_tokens":8,"ignore_eos":true,"messages":[]}`
	t.Run("mid-stream error becomes a 500", func(t *testing.T) {
		h := newHarness(t, func(c *simulator.Config) { c.MidstreamErrorRate = 1 })
		resp, b, err := h.post(chatPath, body, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkErrorBody(t, resp, b, 500)
		if r := h.record(); r.Outcome != simulator.OutcomeMidstreamError {
			t.Errorf("truth record %+v", r)
		}
	})
	t.Run("truncation aborts before headers", func(t *testing.T) {
		h := newHarness(t, func(c *simulator.Config) { c.TruncateRate = 1 })
		if resp, _, err := h.post(chatPath, body, nil); err == nil {
			t.Errorf("got a response (status %d), want a transport error", resp.StatusCode)
		}
		if r := h.record(); r.Outcome != simulator.OutcomeTruncated || r.Status != 0 {
			t.Errorf("truth record %+v", r)
		}
	})
}

func getConfig(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/admin/config")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /admin/config: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

func TestAdminConfig(t *testing.T) {
	h := newHarness(t, nil)
	var got map[string]any
	if err := json.Unmarshal([]byte(getConfig(t, h.srv.URL)), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ttft", "itl", "ttft_distribution", "ttft_stddev", "itl_distribution", "itl_stddev",
		"output_tokens", "tokens_per_chunk", "usage", "role_chunk", "error_rate", "error_status",
		"midstream_error_rate", "truncate_rate", "stall_rate", "stall"} {
		if _, ok := got[k]; !ok {
			t.Errorf("GET /admin/config lacks %q", k)
		}
	}

	resp, b, err := h.post("/admin/config", `{"ttft":"50ms","itl_distribution":"lognormal","itl_stddev":"2ms","error_rate":0.25,"usage":false}`, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("partial update: %v %v %s", resp, err, b)
	}
	want := fastConfig()
	want.TTFT = 50 * time.Millisecond
	want.ITLDistribution = simulator.LogNormal
	want.ITLStddev = 2 * time.Millisecond
	want.ErrorRate = 0.25
	want.Usage = false
	if c := h.sim.Config(); c != want {
		t.Errorf("after partial update\n got %+v\nwant %+v", c, want)
	}
	before := getConfig(t, h.srv.URL)
	if string(b) != before {
		t.Errorf("POST answered %s, GET says %s", b, before)
	}

	for _, tc := range []struct{ name, body, want string }{
		{"unknown field", `{"ttft":"1ms","bogus":1}`, "bogus"},
		{"bad duration", `{"ttft":"fast"}`, "fast"},
		{"duration as number", `{"itl":5}`, "duration string"},
		{"negative duration", `{"itl":"-1ms"}`, "itl"},
		{"rate above 1", `{"ttft":"1ms","truncate_rate":1.5}`, "truncate_rate"},
		{"bad distribution", `{"ttft_distribution":"pareto"}`, "pareto"},
		{"bad status", `{"error_status":200}`, "error_status"},
		{"zero tokens per chunk", `{"tokens_per_chunk":0}`, "tokens_per_chunk"},
		{"wrong type", `{"usage":"yes"}`, "usage"},
		{"not JSON", `ttft=1ms`, "invalid"},
		{"trailing data", `{"ttft":"1ms"} {}`, "after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b, err := h.post("/admin/config", tc.body, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), tc.want) {
				t.Errorf("status %d body %q; want 400 mentioning %q", resp.StatusCode, b, tc.want)
			}
			if after := getConfig(t, h.srv.URL); after != before {
				t.Errorf("rejected update changed the config:\n%s", after)
			}
		})
	}

	// The new configuration applies to the next request.
	resp, b, err = h.post("/admin/config", `{"ttft":"0s","itl":"0s","error_rate":0,"output_tokens":2}`, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("update: %v %v %s", resp, err, b)
	}
	_, b, err = h.post(chatPath, `{"model":"m","stream":true,"messages":[]}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := summarize(t, "chat", sseData(t, b)); countTokens(s.content) != 2 {
		t.Errorf("after output_tokens=2: %q", s.content)
	}
}

func getTruth(t *testing.T, url, query string) (int, []simulator.TruthRecord) {
	t.Helper()
	resp, err := http.Get(url + "/admin/truth" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var recs []simulator.TruthRecord
	dec := json.NewDecoder(resp.Body)
	for resp.StatusCode == 200 {
		var r simulator.TruthRecord
		if err := dec.Decode(&r); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return resp.StatusCode, recs
}

func TestTruthAPI(t *testing.T) {
	h := newHarness(t, func(c *simulator.Config) { c.TokensPerChunk = 2 })
	for _, id := range []string{"a", "b", "c"} {
		if _, _, err := h.post(complPath, `{"model":"m","stream":true,"max_tokens":5,"prompt":"p"}`, map[string]string{"X-Request-Id": id}); err != nil {
			t.Fatal(err)
		}
		h.record()
	}
	status, recs := getTruth(t, h.srv.URL, "")
	if status != 200 || len(recs) != 3 {
		t.Fatalf("GET /admin/truth: %d, %d records", status, len(recs))
	}
	for i, id := range []string{"a", "b", "c"} {
		if recs[i].RequestID != id {
			t.Errorf("record %d is %q, want %q (oldest first)", i, recs[i].RequestID, id)
		}
		checkTruth(t, recs[i], 3, 5)
	}
	if status, recs := getTruth(t, h.srv.URL, "?request_id=b"); status != 200 || len(recs) != 1 || recs[0].RequestID != "b" {
		t.Errorf("?request_id=b: %d %+v", status, recs)
	}
	if status, _ := getTruth(t, h.srv.URL, "?request_id=zzz"); status != 404 {
		t.Errorf("unknown request_id: status %d, want 404", status)
	}
	req, _ := http.NewRequest(http.MethodDelete, h.srv.URL+"/admin/truth", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if status, recs := getTruth(t, h.srv.URL, ""); status != 200 || len(recs) != 0 {
		t.Errorf("after DELETE: %d, %d records", status, len(recs))
	}
}

func TestMetrics(t *testing.T) {
	h := newHarness(t, nil)
	for _, body := range []string{
		`{"model":"m1","stream":true,"max_tokens":4,"ignore_eos":true,"messages":[]}`,
		`{"model":"m1","stream":true,"max_tokens":3,"ignore_eos":true,"messages":[]}`,
		`{"model":"m2","stream":true,"max_tokens":1,"ignore_eos":true,"messages":[]}`,
	} {
		if _, _, err := h.post(chatPath, body, nil); err != nil {
			t.Fatal(err)
		}
		h.record()
	}
	if _, _, err := h.post(chatPath, `{`, nil); err != nil {
		t.Fatal(err)
	}
	h.record()

	reg := h.sim.Registry()
	const counters = `
# HELP llmsim_output_tokens_total Content tokens written, all outcomes.
# TYPE llmsim_output_tokens_total counter
llmsim_output_tokens_total{model=""} 0
llmsim_output_tokens_total{model="m1"} 7
llmsim_output_tokens_total{model="m2"} 1
# HELP llmsim_requests_total Generation requests finished, by outcome (success, stalled, error_status, midstream_error, truncated, canceled, bad_request).
# TYPE llmsim_requests_total counter
llmsim_requests_total{model="",outcome="bad_request"} 1
llmsim_requests_total{model="m1",outcome="success"} 2
llmsim_requests_total{model="m2",outcome="success"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(counters), "llmsim_requests_total", "llmsim_output_tokens_total"); err != nil {
		t.Error(err)
	}
	// One histogram series per model; ITL has one observation per gap
	// between content chunks: 3 + 2 for m1, none (so no series) for m2.
	for name, want := range map[string]int{
		"llmsim_time_to_first_token_seconds": 2,
		"llmsim_inter_token_latency_seconds": 1,
		"llmsim_request_duration_seconds":    2,
	} {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != want {
			t.Errorf("%s: %d series (err %v), want %d", name, n, err, want)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "llmsim_inter_token_latency_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if got, want := m.GetHistogram().GetSampleCount(), uint64(5); got != want {
				t.Errorf("ITL count for %v: %d, want %d", m.GetLabel(), got, want)
			}
		}
	}
	// The HTTP endpoint serves the same registry.
	resp, err := http.Get(h.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, s := range []string{
		`llmsim_time_to_first_token_seconds_bucket{model="m1",le="0.001"}`,
		`llmsim_time_to_first_token_seconds_bucket{model="m1",le="2560"}`,
		`llmsim_inter_token_latency_seconds_bucket{model="m1",le="0.0005"}`,
		`llmsim_request_duration_seconds_count{model="m2"} 1`,
	} {
		if !bytes.Contains(b, []byte(s)) {
			t.Errorf("/metrics lacks %s", s)
		}
	}
}

func TestNewRejectsInvalidOptions(t *testing.T) {
	if _, err := simulator.New(simulator.Options{}); err == nil {
		t.Error("zero Config accepted")
	}
	if _, err := simulator.New(simulator.Options{Config: fastConfig(), TruthCapacity: -1}); err == nil {
		t.Error("negative truth capacity accepted")
	}
	s, err := simulator.New(simulator.Options{Config: fastConfig()})
	if err != nil {
		t.Fatal(err)
	}
	bad := fastConfig()
	bad.ErrorRate = -0.5
	if err := s.SetConfig(bad); err == nil || s.Config() != fastConfig() {
		t.Errorf("SetConfig(invalid): err %v, config %+v", err, s.Config())
	}
}

func TestSeedReproducesLengths(t *testing.T) {
	lengths := func() []int {
		h := newHarness(t, func(c *simulator.Config) { c.OutputTokens, c.OutputTokensStddev = 20, 5 })
		var out []int
		for range 5 {
			if _, _, err := h.post(complPath, `{"model":"m","stream":true,"prompt":"p"}`, nil); err != nil {
				t.Fatal(err)
			}
			out = append(out, h.record().OutputTokens)
		}
		return out
	}
	a, b := lengths(), lengths()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different lengths: %v vs %v", a, b)
		}
	}
	varied := false
	for i := range a {
		varied = varied || a[i] != a[0]
	}
	if !varied {
		t.Errorf("lengths %v do not vary with output_tokens_stddev 5", a)
	}
}
