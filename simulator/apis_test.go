package simulator_test

import (
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/llmslo/llm_slo_exporter/simulator"
)

// This file tests the API modes other than OpenAI's: their wire format,
// token counts, usage switch, reasoning, and failure injection in each
// API's own error shapes.

// wireEvent is one event of a stream: its SSE event name (empty for
// NDJSON or unnamed events) and its data.
type wireEvent struct {
	name, data string
}

// wireEvents splits a body into events, independently of the prober's
// readers. SSE events end with a blank line, hold one data line (with or
// without the space after the colon) and an optional event line; NDJSON
// has one JSON value per line. It fails the test on anything else.
func wireEvents(t *testing.T, body []byte, ndjson bool) []wireEvent {
	t.Helper()
	var out []wireEvent
	s := string(body)
	if ndjson {
		for _, line := range strings.SplitAfter(s, "\n") {
			if line == "" {
				continue
			}
			if !strings.HasSuffix(line, "\n") || !json.Valid([]byte(line)) {
				t.Fatalf("bad NDJSON line %q", line)
			}
			out = append(out, wireEvent{data: strings.TrimSuffix(line, "\n")})
		}
		return out
	}
	for s != "" {
		ev, rest, ok := strings.Cut(s, "\n\n")
		if !ok {
			t.Fatalf("unterminated event %q", s)
		}
		s = rest
		var e wireEvent
		for _, line := range strings.Split(ev, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				e.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data:"):
				if e.data != "" {
					t.Fatalf("two data lines in %q", ev)
				}
				e.data = strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")
			default:
				t.Fatalf("unexpected line %q", line)
			}
		}
		if e.data != "[DONE]" && !json.Valid([]byte(e.data)) {
			t.Fatalf("event data is not JSON: %q", e.data)
		}
		out = append(out, e)
	}
	return out
}

// TestNativeWireGolden pins the exact bytes of a small stream of each API
// (two tokens, one prompt word, request ID r1).
func TestNativeWireGolden(t *testing.T) {
	createdAt := regexp.MustCompile(`"created_at":"[^"]*"`)
	for _, tc := range []struct {
		name, path, body string
		reasoning        int
		contentType      string
		want             string
	}{
		{"anthropic", "/v1/messages", `{"model":"claude","max_tokens":2,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, 0,
			"text/event-stream", `event: message_start
data: {"type":"message_start","message":{"id":"msg_r1","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" tok"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" tok"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":2}}

event: message_stop
data: {"type":"message_stop"}

`},
		{"anthropic thinking", "/v1/messages", `{"model":"claude","max_tokens":3,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, 1,
			"text/event-stream", `event: message_start
data: {"type":"message_start","message":{"id":"msg_r1","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" tok"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"bGxtc2ltIHNpZ25hdHVyZQ=="}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" tok"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}

event: message_stop
data: {"type":"message_stop"}

`},
		{"tgi at max_new_tokens", "/generate_stream", `{"inputs":"hi","parameters":{"max_new_tokens":2,"details":true}}`, 0,
			"text/event-stream", `data:{"index":1,"token":{"id":1000,"text":" tok","logprob":-0.1,"special":false},"generated_text":null,"details":null}

data:{"index":2,"token":{"id":1001,"text":" tok","logprob":-0.1,"special":false},"generated_text":" tok tok","details":{"finish_reason":"length","generated_tokens":2,"seed":null,"input_length":1}}

`},
		{"tgi at EOS", "/generate_stream", `{"inputs":"hi","parameters":{"max_new_tokens":20,"details":true}}`, 0,
			"text/event-stream", `data:{"index":1,"token":{"id":1000,"text":" tok","logprob":-0.1,"special":false},"generated_text":null,"details":null}

data:{"index":2,"token":{"id":1001,"text":" tok","logprob":-0.1,"special":false},"generated_text":null,"details":null}

data:{"index":3,"token":{"id":2,"text":"</s>","logprob":-0.01,"special":true},"generated_text":" tok tok","details":{"finish_reason":"eos_token","generated_tokens":3,"seed":null,"input_length":1}}

`},
		{"triton", "/v2/models/ensemble/generate_stream", `{"text_input":"hi","max_tokens":2,"stream":true}`, 0,
			"text/event-stream; charset=utf-8", `data: {"model_name":"ensemble","model_version":"1","sequence_end":false,"sequence_id":0,"sequence_start":false,"text_output":" tok"}

data: {"model_name":"ensemble","model_version":"1","sequence_end":false,"sequence_id":0,"sequence_start":false,"text_output":" tok"}

`},
		{"triton with counts", "/v2/models/vllm_model/generate_stream", `{"text_input":"hi","stream":true,"return_num_output_tokens":true}`, 0,
			"text/event-stream; charset=utf-8", `data: {"model_name":"vllm_model","model_version":"1","sequence_end":false,"sequence_id":0,"sequence_start":false,"num_output_tokens":1,"text_output":" tok"}

data: {"model_name":"vllm_model","model_version":"1","sequence_end":false,"sequence_id":0,"sequence_start":false,"num_output_tokens":1,"text_output":" tok"}

`},
		{"llamacpp", "/completion", `{"prompt":"hi","n_predict":2,"stream":true}`, 0,
			"text/event-stream", `data: {"index":0,"content":" tok","tokens":[1000],"stop":false,"id_slot":0,"tokens_predicted":1,"tokens_evaluated":1}

data: {"index":0,"content":" tok","tokens":[1001],"stop":false,"id_slot":0,"tokens_predicted":2,"tokens_evaluated":1}

data: {"index":0,"content":"","tokens":[],"id_slot":0,"stop":true,"model":"","tokens_predicted":2,"tokens_evaluated":1,"has_new_line":false,"truncated":false,"stop_type":"limit","stopping_word":"","tokens_cached":3,"timings":{"cache_n":0,"prompt_n":1,"prompt_ms":0,"prompt_per_token_ms":0,"prompt_per_second":0,"predicted_n":2,"predicted_ms":0,"predicted_per_token_ms":0,"predicted_per_second":0}}

`},
		{"ollama thinking", "/api/chat", `{"model":"llama3","messages":[{"role":"user","content":"hi"}],"options":{"num_predict":3}}`, 1,
			"application/x-ndjson", `{"model":"llama3","created_at":"T","message":{"role":"assistant","content":"","thinking":" tok"},"done":false}
{"model":"llama3","created_at":"T","message":{"role":"assistant","content":" tok"},"done":false}
{"model":"llama3","created_at":"T","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":1,"load_duration":1,"prompt_eval_count":1,"prompt_eval_duration":1,"eval_count":2,"eval_duration":1}
`},
		{"sglang", "/generate", `{"text":"hi","sampling_params":{"max_new_tokens":2},"stream":true}`, 0,
			"text/event-stream", `data: {"text":" tok","meta_info":{"id":"r1","finish_reason":null,"prompt_tokens":1,"completion_tokens":1,"cached_tokens":0},"index":0}

data: {"text":" tok tok","meta_info":{"id":"r1","finish_reason":{"type":"length","length":2},"prompt_tokens":1,"completion_tokens":2,"cached_tokens":0},"index":0}

data: [DONE]

`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *simulator.Config) { c.OutputTokens, c.ReasoningTokens = 2, tc.reasoning })
			resp, body, err := h.post(tc.path, tc.body, map[string]string{"X-Request-Id": "r1"})
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != tc.contentType {
				t.Errorf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			got := createdAt.ReplaceAllString(string(body), `"created_at":"T"`)
			if got != tc.want {
				t.Errorf("body =\n%s\nwant\n%s", got, tc.want)
			}
			wireEvents(t, body, strings.HasPrefix(tc.contentType, "application/x-ndjson"))
			r := h.record()
			if r.Outcome != simulator.OutcomeSuccess || r.OutputTokens != 2 || r.ReasoningTokens != tc.reasoning || r.PromptTokens != 1 || !r.Stream {
				t.Errorf("truth record %+v", r)
			}
		})
	}
}

// nativeAPI describes how to request and read one API in the tests.
type nativeAPI struct {
	name, path string
	ndjson     bool
	// body returns a request for n tokens: forced when the API can,
	// capped otherwise (the tests set output_tokens above n).
	body func(n int) string
	// text returns the output text of an event and whether it is
	// reasoning; ok is false for events without output text.
	text func(t *testing.T, e wireEvent) (s string, reasoning, ok bool)
	// count returns the output-token count an event reports, or -1.
	count func(t *testing.T, e wireEvent) int
	// cumulative: each event's text is the whole text so far.
	cumulative bool
	// midstream recognises the API's mid-stream error event.
	midstream func(e wireEvent) bool
	// errBody checks the API's error body shape.
	errBody func(t *testing.T, b []byte, status int)
}

func decodeMap(t *testing.T, data string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("bad JSON %q: %v", data, err)
	}
	return m
}

func str(m map[string]any, path ...string) (string, bool) {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		v = mm[p]
	}
	s, ok := v.(string)
	return s, ok
}

func num(m map[string]any, path ...string) int {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return -1
		}
		v = mm[p]
	}
	f, ok := v.(float64)
	if !ok {
		return -1
	}
	return int(f)
}

// errorStringBody checks {"error": "<message>"} (plus extra members).
func errorStringBody(extra string) func(*testing.T, []byte, int) {
	return func(t *testing.T, b []byte, _ int) {
		m := decodeMap(t, string(b))
		if s, _ := str(m, "error"); s != "llmsim: injected error" {
			t.Errorf("error body %s", b)
		}
		if extra != "" {
			if _, ok := str(m, extra); !ok {
				t.Errorf("error body %s lacks %s", b, extra)
			}
		}
	}
}

var nativeAPIs = []nativeAPI{
	{
		name: "anthropic", path: "/v1/messages",
		body: func(n int) string {
			return `{"model":"claude","max_tokens":` + itoa(n) + `,"stream":true,"messages":[{"role":"user","content":"a b"}]}`
		},
		text: func(t *testing.T, e wireEvent) (string, bool, bool) {
			if e.name != "content_block_delta" {
				return "", false, false
			}
			m := decodeMap(t, e.data)
			if s, ok := str(m, "delta", "text"); ok {
				return s, false, true
			}
			if s, ok := str(m, "delta", "thinking"); ok {
				return s, true, true
			}
			return "", false, false
		},
		count: func(t *testing.T, e wireEvent) int {
			if e.name != "message_delta" {
				return -1
			}
			return num(decodeMap(t, e.data), "usage", "output_tokens")
		},
		midstream: func(e wireEvent) bool {
			return e.name == "error" && strings.Contains(e.data, `"type":"overloaded_error"`)
		},
		errBody: func(t *testing.T, b []byte, status int) {
			m := decodeMap(t, string(b))
			typ, _ := str(m, "error", "type")
			msg, _ := str(m, "error", "message")
			want := map[int]string{500: "api_error", 529: "overloaded_error", 429: "rate_limit_error"}[status]
			if m["type"] != "error" || typ != want || msg != "llmsim: injected error" || !strings.HasPrefix(m["request_id"].(string), "req_") {
				t.Errorf("error body %s, want type %s", b, want)
			}
		},
	},
	{
		name: "tgi", path: "/generate_stream",
		body: func(n int) string {
			return `{"inputs":"a b","parameters":{"max_new_tokens":` + itoa(n) + `,"details":true}}`
		},
		text: func(t *testing.T, e wireEvent) (string, bool, bool) {
			m := decodeMap(t, e.data)
			if sp, _ := m["token"].(map[string]any)["special"].(bool); sp {
				return "", false, false
			}
			s, ok := str(m, "token", "text")
			return s, false, ok
		},
		count:     func(t *testing.T, e wireEvent) int { return num(decodeMap(t, e.data), "details", "generated_tokens") },
		midstream: func(e wireEvent) bool { return strings.Contains(e.data, `"error_type":"generation"`) },
		errBody:   errorStringBody("error_type"),
	},
	{
		name: "triton", path: "/v2/models/ensemble/generate_stream",
		body: func(n int) string {
			return `{"text_input":"a b","max_tokens":` + itoa(n) + `,"min_length":` + itoa(n) + `,"stream":true,"return_num_output_tokens":true}`
		},
		text: func(t *testing.T, e wireEvent) (string, bool, bool) {
			s, ok := str(decodeMap(t, e.data), "text_output")
			return s, false, ok
		},
		count:     func(t *testing.T, e wireEvent) int { return num(decodeMap(t, e.data), "num_output_tokens") },
		midstream: func(e wireEvent) bool { return strings.Contains(e.data, `"error":"llmsim: injected mid-stream error"`) },
		errBody:   errorStringBody(""),
	},
	{
		name: "llamacpp", path: "/completion",
		body: func(n int) string {
			return `{"prompt":"a b","n_predict":` + itoa(n) + `,"ignore_eos":true,"stream":true}`
		},
		text: func(t *testing.T, e wireEvent) (string, bool, bool) {
			s, ok := str(decodeMap(t, e.data), "content")
			return s, false, ok && s != ""
		},
		count: func(t *testing.T, e wireEvent) int {
			m := decodeMap(t, e.data)
			if m["stop"] != true {
				return -1
			}
			return num(m, "timings", "predicted_n")
		},
		midstream: func(e wireEvent) bool { return strings.Contains(e.data, `"type":"server_error"`) },
		errBody: func(t *testing.T, b []byte, status int) {
			m := decodeMap(t, string(b))
			msg, _ := str(m, "error", "message")
			typ, _ := str(m, "error", "type")
			if num(m, "error", "code") != status || msg != "llmsim: injected error" || typ == "" {
				t.Errorf("error body %s", b)
			}
		},
	},
	{
		name: "ollama", path: "/api/chat", ndjson: true,
		body: func(n int) string {
			return `{"model":"llama3","messages":[{"role":"user","content":"a b"}],"options":{"num_predict":` + itoa(n) + `}}`
		},
		text: func(t *testing.T, e wireEvent) (string, bool, bool) {
			m := decodeMap(t, e.data)
			if s, _ := str(m, "message", "thinking"); s != "" {
				return s, true, true
			}
			s, _ := str(m, "message", "content")
			return s, false, s != ""
		},
		count:     func(t *testing.T, e wireEvent) int { return num(decodeMap(t, e.data), "eval_count") },
		midstream: func(e wireEvent) bool { return e.data == `{"error":"llmsim: injected mid-stream error"}` },
		errBody:   errorStringBody(""),
	},
	{
		name: "sglang", path: "/generate", cumulative: true,
		body: func(n int) string {
			return `{"text":"a b","sampling_params":{"max_new_tokens":` + itoa(n) + `,"ignore_eos":true},"stream":true}`
		},
		text: func(t *testing.T, e wireEvent) (string, bool, bool) {
			if e.data == "[DONE]" {
				return "", false, false
			}
			s, ok := str(decodeMap(t, e.data), "text")
			return s, false, ok
		},
		count: func(t *testing.T, e wireEvent) int {
			if e.data == "[DONE]" {
				return -1
			}
			return num(decodeMap(t, e.data), "meta_info", "completion_tokens")
		},
		midstream: func(e wireEvent) bool { return e.data == `{"error":{"message":"llmsim: injected mid-stream error"}}` },
		errBody: func(t *testing.T, b []byte, status int) {
			m := decodeMap(t, string(b))
			msg, _ := str(m, "message")
			if m["object"] != "error" || msg != "llmsim: injected error" || num(m, "code") != status {
				t.Errorf("error body %s", b)
			}
		},
	},
}

func itoa(n int) string { return strconv.Itoa(n) }

// streamText joins the output of a stream's events and reports the last
// count seen and the tokens sent as reasoning.
func streamText(t *testing.T, a nativeAPI, evs []wireEvent) (text string, chunks, reasoning, lastCount int) {
	t.Helper()
	lastCount = -1
	prev := ""
	for _, e := range evs {
		if c := a.count(t, e); c >= 0 {
			lastCount = c
		}
		s, r, ok := a.text(t, e)
		if !ok {
			continue
		}
		if a.cumulative {
			if !strings.HasPrefix(s, prev) {
				t.Fatalf("cumulative text %q does not extend %q", s, prev)
			}
			s, prev = s[len(prev):], s
			if s == "" {
				continue
			}
		}
		chunks++
		if r {
			reasoning += len(strings.Fields(s))
		}
		text += s
	}
	return text, chunks, reasoning, lastCount
}

func TestNativeStreams(t *testing.T) {
	for _, a := range nativeAPIs {
		for _, tc := range []struct {
			name      string
			tpc       int
			reasoning int
			usage     bool
		}{
			{"one token per chunk", 1, 0, true},
			{"three tokens per chunk", 3, 0, true},
			{"usage off", 2, 0, false},
			{"reasoning", 3, 4, true},
		} {
			t.Run(a.name+"/"+tc.name, func(t *testing.T) {
				const n = 7
				h := newHarness(t, func(c *simulator.Config) {
					c.OutputTokens, c.TokensPerChunk, c.ReasoningTokens, c.Usage = 50, tc.tpc, tc.reasoning, tc.usage
				})
				resp, body, err := h.post(a.path, a.body(n), nil)
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("status %v, err %v: %s", resp, err, body)
				}
				text, chunks, reasoning, count := streamText(t, a, wireEvents(t, body, a.ndjson))
				if got := len(strings.Fields(text)); got != n || strings.ReplaceAll(text, simulator.TokenText, "") != "" {
					t.Errorf("output %q: %d tokens, want %d", text, got, n)
				}
				wantReasoning := 0
				if a.name == "anthropic" || a.name == "ollama" {
					wantReasoning = tc.reasoning
				}
				if reasoning != wantReasoning {
					t.Errorf("%d reasoning tokens, want %d", reasoning, wantReasoning)
				}
				wantChunks := (wantReasoning+tc.tpc-1)/tc.tpc + (n-wantReasoning+tc.tpc-1)/tc.tpc
				if a.name != "tgi" && chunks != wantChunks {
					t.Errorf("%d output events, want %d", chunks, wantChunks)
				}
				if a.name == "tgi" && chunks != n {
					t.Errorf("%d token events, want one per token (%d)", chunks, n)
				}
				switch {
				case !tc.usage && count != -1:
					t.Errorf("count %d reported with usage off", count)
				case tc.usage && a.name != "triton" && count != n:
					t.Errorf("reported count %d, want %d", count, n)
				case tc.usage && a.name == "triton" && count != min(tc.tpc, n-(wantChunks-1)*tc.tpc):
					// Triton reports each response's tokens: the last
					// chunk's.
					t.Errorf("last response's count %d", count)
				}
				r := h.record()
				checkTruth(t, r, wantChunks, n)
				if r.Outcome != simulator.OutcomeSuccess || r.API != a.name || r.ReasoningTokens != wantReasoning || r.FinishReason != "length" {
					t.Errorf("truth record %+v", r)
				}
			})
		}
	}
}

func TestNativeFailures(t *testing.T) {
	for _, a := range nativeAPIs {
		t.Run(a.name+"/error status", func(t *testing.T) {
			for _, status := range []int{500, 429} {
				h := newHarness(t, func(c *simulator.Config) { c.ErrorRate, c.ErrorStatus = 1, status })
				resp, b, err := h.post(a.path, a.body(8), nil)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != status || resp.Header.Get("Content-Type") != "application/json" {
					t.Errorf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				if status == 429 && resp.Header.Get("Retry-After") != "1" {
					t.Error("no Retry-After on 429")
				}
				a.errBody(t, b, status)
				if r := h.record(); r.Outcome != simulator.OutcomeErrorStatus || r.Status != status || r.API != a.name {
					t.Errorf("truth record %+v", r)
				}
			}
		})
		t.Run(a.name+"/mid-stream error", func(t *testing.T) {
			h := newHarness(t, func(c *simulator.Config) { c.OutputTokens, c.MidstreamErrorRate = 50, 1 })
			resp, b, err := h.post(a.path, a.body(8), nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("status %v, err %v", resp, err)
			}
			evs := wireEvents(t, b, a.ndjson)
			last := evs[len(evs)-1]
			if a.name == "sglang" {
				if last.data != "[DONE]" {
					t.Errorf("SGLang's error is not followed by [DONE]")
				}
				last = evs[len(evs)-2]
			}
			if !a.midstream(last) {
				t.Errorf("last event %+v is not the API's error", last)
			}
			text, _, _, _ := streamText(t, a, evs[:len(evs)-1])
			if n := len(strings.Fields(text)); n != 4 {
				t.Errorf("%d tokens before the error, want 4", n)
			}
			r := h.record()
			checkTruth(t, r, 4, 4)
			if r.Outcome != simulator.OutcomeMidstreamError || r.FinishReason != "" {
				t.Errorf("truth record %+v", r)
			}
		})
		t.Run(a.name+"/truncation", func(t *testing.T) {
			h := newHarness(t, func(c *simulator.Config) { c.OutputTokens, c.TruncateRate = 50, 1 })
			resp, b, err := h.post(a.path, a.body(8), nil)
			if resp == nil || resp.StatusCode != 200 || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("status %v, err %v, want a 200 and an unexpected EOF", resp, err)
			}
			text, _, _, _ := streamText(t, a, wireEvents(t, b, a.ndjson))
			if n := len(strings.Fields(text)); n != 4 {
				t.Errorf("%d tokens before the cut, want 4", n)
			}
			if r := h.record(); r.Outcome != simulator.OutcomeTruncated {
				t.Errorf("truth record %+v", r)
			}
		})
	}
}

func TestNativeBadRequests(t *testing.T) {
	for _, tc := range []struct {
		name, path, body, want string
	}{
		{"anthropic without max_tokens", "/v1/messages", `{"model":"c","stream":true,"messages":[]}`, `"message":"max_tokens: Field required"`},
		{"anthropic without stream", "/v1/messages", `{"model":"c","max_tokens":4,"messages":[]}`, `"type":"invalid_request_error","message":"llmsim simulates this API in streaming mode only"`},
		{"tgi bad max_new_tokens", "/generate_stream", `{"inputs":"x","parameters":{"max_new_tokens":0}}`, `{"error":"max_new_tokens must be at least 1","error_type":"validation"}`},
		{"triton bad JSON", "/v2/models/m/generate_stream", `{"text_input":`, `{"error":"invalid JSON request body: unexpected end of JSON input"}`},
		{"llamacpp without stream", "/completion", `{"prompt":"x"}`, `"code":400,"message":"llmsim simulates this API in streaming mode only","type":"invalid_request_error"`},
		{"ollama stream false", "/api/chat", `{"model":"m","stream":false}`, `{"error":"llmsim simulates this API in streaming mode only"}`},
		{"ollama num_predict 0", "/api/chat", `{"model":"m","options":{"num_predict":0}}`, `{"error":"num_predict must be at least 1"}`},
		{"sglang without stream", "/generate", `{"text":"x"}`, `"object":"error","message":"llmsim simulates this API in streaming mode only"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			resp, b, err := h.post(tc.path, tc.body, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 400 || !strings.Contains(string(b), tc.want) {
				t.Errorf("status %d, body %s; want 400 with %s", resp.StatusCode, b, tc.want)
			}
			if r := h.record(); r.Outcome != simulator.OutcomeBadRequest {
				t.Errorf("truth record %+v", r)
			}
		})
	}
}

// TestChatReasoning checks OpenAI chat's reasoning channel: reasoning
// chunks in delta.reasoning, then content, never mixed in one chunk.
func TestChatReasoning(t *testing.T) {
	h := newHarness(t, func(c *simulator.Config) { c.ReasoningTokens, c.TokensPerChunk = 3, 2 })
	_, body, err := h.post(chatPath, `{"model":"m","stream":true,"max_tokens":6,"ignore_eos":true,"messages":[]}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, data := range sseData(t, body) {
		if data == "[DONE]" {
			continue
		}
		m := decodeMap(t, data)
		delta := m["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
		if s, ok := delta["reasoning"].(string); ok {
			got = append(got, "r"+s)
		}
		if s, _ := delta["content"].(string); s != "" {
			got = append(got, "c"+s)
		}
	}
	if want := []string{"r tok tok", "r tok", "c tok tok", "c tok"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("chunks %q, want %q", got, want)
	}
	if r := h.record(); r.ReasoningTokens != 3 || r.OutputTokens != 6 || len(r.ChunksWritten) != 4 {
		t.Errorf("truth record %+v", r)
	}
}
