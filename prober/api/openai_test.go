// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"errors"
	"strings"
	"testing"

	"github.com/llmslo/llm_slo_exporter/record"
)

// Chunks as servers send them (see shared/reference/stream-formats.md §2).
const (
	chatRole     = `{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`
	chatRoleNull = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}`
	chatContent  = `{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}]}`
	chatFinish   = `{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`
	chatUsage    = `{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":75,"completion_tokens":31,"total_tokens":106,"completion_tokens_details":{"reasoning_tokens":0}}}`
)

type eventCase struct {
	name   string
	typ    string // "" for no event type
	data   string
	want   Info
	reason record.Reason // OK: no failure
	detail string        // exact Failure.Detail when reason is not OK
	usage  Usage         // Usage() after this one event on a fresh parser
	finish string        // FinishReason() after it
}

var chatCases = []eventCase{
	{name: "role-only first chunk, content empty", data: chatRole, usage: NoUsage},
	{name: "role-only first chunk, content null", data: chatRoleNull, usage: NoUsage},
	{name: "role chunk without content", data: `{"choices":[{"index":0,"delta":{"role":"assistant"}}]}`, usage: NoUsage},
	{name: "role together with first content (Ollama /v1)", data: `{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "content chunk", data: chatContent, want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "reasoning first (vLLM, Ollama)", data: `{"choices":[{"index":0,"delta":{"reasoning":"Let me think"},"finish_reason":null}]}`,
		want: Info{Output: true}, usage: NoUsage},
	{name: "reasoning_content first (DeepSeek, SGLang)", data: `{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"Hmm"},"finish_reason":null}]}`,
		want: Info{Output: true}, usage: NoUsage},
	{name: "empty reasoning is not output", data: `{"choices":[{"index":0,"delta":{"reasoning":"","reasoning_content":null,"content":""}}]}`, usage: NoUsage},
	{name: "reasoning and content in one delta", data: `{"choices":[{"delta":{"reasoning_content":"a","content":"b"}}]}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "tool_calls only", data: `{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "tool_calls argument delta", data: `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "empty tool_calls is not output", data: `{"choices":[{"index":0,"delta":{"content":"","tool_calls":[ ]}}]}`, usage: NoUsage},
	{name: "deprecated function_call", data: `{"choices":[{"index":0,"delta":{"function_call":{"name":"f","arguments":""}}}]}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "empty function_call is not output", data: `{"choices":[{"index":0,"delta":{"function_call":{}}}]}`, usage: NoUsage},
	{name: "refusal", data: `{"choices":[{"index":0,"delta":{"refusal":"I can't help with that."}}]}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "refusal null", data: `{"choices":[{"index":0,"delta":{"content":"","refusal":null}}]}`, usage: NoUsage},
	{name: "finish chunk carrying content (vLLM)", data: `{"choices":[{"index":0,"delta":{"content":" end."},"logprobs":null,"finish_reason":"length","stop_reason":null}]}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage, finish: "length"},
	{name: "finish chunk with empty delta", data: chatFinish, usage: NoUsage, finish: "stop"},
	{name: "finish chunk with tool_calls reason", data: `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, usage: NoUsage, finish: "tool_calls"},
	{name: "usage chunk with empty choices", data: chatUsage, usage: Usage{CompletionTokens: 31, PromptTokens: 75}},
	{name: "usage chunk without choices", data: `{"usage":{"prompt_tokens":5,"completion_tokens":7}}`, usage: Usage{CompletionTokens: 7, PromptTokens: 5}},
	{name: "usage null on a normal chunk", data: `{"id":"x","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],"usage":null}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "usage on the finish chunk (old llama.cpp)", data: `{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1,"model":"m","object":"chat.completion.chunk","usage":{"completion_tokens":12,"prompt_tokens":4,"total_tokens":16},"timings":{"predicted_n":12}}`,
		usage: Usage{CompletionTokens: 12, PromptTokens: 4}, finish: "stop"},
	{name: "usage on a content chunk as the first output", data: `{"choices":[{"index":0,"delta":{"content":"abc"}}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`,
		want: Info{Output: true, Answer: true, Tokens: 3}, usage: Usage{CompletionTokens: 3, PromptTokens: 9}},
	{name: "usage without prompt_tokens", data: `{"choices":[],"usage":{"completion_tokens":2}}`, usage: Usage{CompletionTokens: 2, PromptTokens: -1}},
	{name: "usage with non-integer counts is ignored", data: `{"choices":[],"usage":{"completion_tokens":2.5,"prompt_tokens":"3"}}`, usage: NoUsage},
	{name: "usage with negative count is ignored", data: `{"choices":[],"usage":{"completion_tokens":-1,"prompt_tokens":1e2}}`, usage: NoUsage},
	{name: "absurd token increase is not attributed", data: `{"choices":[{"delta":{"content":"x"}}],"usage":{"completion_tokens":1000000}}`,
		want: Info{Output: true, Answer: true}, usage: Usage{CompletionTokens: 1000000, PromptTokens: -1}},
	{name: "error null is not an error", data: `{"id":"x","choices":[{"index":0,"delta":{"content":"ok"}}],"error":null}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "error zero values are not errors", data: `{"choices":[{"delta":{"content":"ok"}}],"error":"","error":{}}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "error false is not an error", data: `{"choices":[],"error":false}`, usage: NoUsage},
	{name: "vLLM mid-stream error object", data: `{"error":{"message":"The model ran out of KV cache.","type":"InternalServerError","param":null,"code":500}}`,
		reason: record.StreamError, detail: "The model ran out of KV cache.", usage: NoUsage},
	{name: "error with string code", data: `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
		reason: record.StreamError, detail: "Rate limit reached", usage: NoUsage},
	{name: "error as a string (TGI)", data: `{"error":"Request failed during generation: Server error: CUDA out of memory","error_type":"generation"}`,
		reason: record.StreamError, detail: "Request failed during generation: Server error: CUDA out of memory", usage: NoUsage},
	{name: "error object without message", data: `{"error":{"code":503,"http_status_code":503}}`,
		reason: record.StreamError, detail: `{"code":503,"http_status_code":503}`, usage: NoUsage},
	{name: "error true", data: `{"error":true}`, reason: record.StreamError, detail: "true", usage: NoUsage},
	{name: "error with escaped multi-line message", data: `{"error":{"message":"line1\nline2\t\"q\" \u00e9"}}`,
		reason: record.StreamError, detail: `line1 line2 "q" é`, usage: NoUsage},
	{name: "error beats output in the same chunk", data: `{"choices":[{"delta":{"content":"x"}}],"error":{"message":"boom"}}`,
		reason: record.StreamError, detail: "boom", usage: NoUsage},
	{name: "error event type", typ: "error", data: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		reason: record.StreamError, detail: "Overloaded", usage: NoUsage},
	{name: "error event type with plain text", typ: "error", data: "upstream\nclosed",
		reason: record.StreamError, detail: "upstream closed", usage: NoUsage},
	{name: "error event type without data", typ: "error", data: "",
		reason: record.StreamError, detail: "error event without data", usage: NoUsage},
	{name: "other event type is read as usual", typ: "message", data: chatContent, want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "[DONE]", data: "[DONE]", want: Info{Done: true}, usage: NoUsage},
	{name: "[DONE] with spaces around", data: " [DONE] \r\n", want: Info{Done: true}, usage: NoUsage},
	{name: "[DONE] from data:[DONE] without a space", data: "[DONE]", want: Info{Done: true}, usage: NoUsage},
	{name: "[DONE] in lower case is not the marker", data: "[done]", reason: record.Decode,
		detail: "event data is not a JSON object: [done]", usage: NoUsage},
	{name: "blank data", data: " \n", usage: NoUsage},
	{name: "malformed JSON", data: `{"choices":[{"delta":{"content":"a"}]}`, reason: record.Decode,
		detail: "malformed JSON in event data: jsonscan: invalid character, expected ',' or '}' after object member at offset 36", usage: NoUsage},
	{name: "truncated JSON", data: `{"choices":[{"delta":{"content":"a`, reason: record.Decode,
		detail: "malformed JSON in event data: jsonscan: unexpected end of input in string at offset 34", usage: NoUsage},
	{name: "malformed after the usage", data: `{"usage":{"completion_tokens":3},"x":tru}`, reason: record.Decode,
		detail: "malformed JSON in event data: jsonscan: invalid literal at offset 40", usage: NoUsage},
	{name: "non-object JSON", data: "42", reason: record.Decode, detail: "event data is not a JSON object: 42", usage: NoUsage},
	{name: "array JSON", data: `[{"choices":[]}]`, reason: record.Decode, detail: `event data is not a JSON object: [{"choices":[]}]`, usage: NoUsage},
	{name: "HTML", data: "<html>\n<body>502 Bad Gateway</body>", reason: record.Decode,
		detail: "event data is not a JSON object: <html> <body>502 Bad Gateway</body>", usage: NoUsage},
	{name: "n>1 interleaved choice 1", data: `{"choices":[{"index":1,"delta":{"content":"B"},"finish_reason":null}]}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "n>1 two choices in one chunk, one role-only", data: `{"choices":[{"index":0,"delta":{"role":"assistant","content":""}},{"index":1,"delta":{"content":"B"}}]}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "n>1 reasoning in one choice, answer in another", data: `{"choices":[{"index":0,"delta":{"reasoning":"r"}},{"index":1,"delta":{"content":"B"}}]}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "keys in unusual order", data: `{"usage":null,"choices":[{"finish_reason":null,"delta":{"content":"x","role":"assistant"},"index":0}],"object":"chat.completion.chunk","id":"1"}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "whitespace everywhere", data: " {\n \"choices\" : [ { \"delta\" : { \"content\" : \"x\" } } ] }\n",
		want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "escaped key", data: `{"ch\u006fices":[{"delta":{"c\u006Fntent":"x"}}]}`, want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "content NUL escape", data: `{"choices":[{"delta":{"content":"\u0000"}}]}`, want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "content escaped quote", data: `{"choices":[{"delta":{"content":"\""}}]}`, want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "content escaped backslash before quote", data: `{"choices":[{"delta":{"content":"\\"}}]}`, want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "content of whitespace only is output", data: `{"choices":[{"delta":{"content":" "}}]}`, want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "content newline is output", data: `{"choices":[{"delta":{"content":"\n"}}]}`, want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "duplicate content key: last wins", data: `{"choices":[{"delta":{"content":"x","content":""}}]}`, usage: NoUsage},
	{name: "duplicate choices key: last wins", data: `{"choices":[{"delta":{"content":"x"}}],"choices":[]}`, usage: NoUsage},
	{name: "content not a string", data: `{"choices":[{"delta":{"content":["x"]}}]}`, usage: NoUsage},
	{name: "delta not an object", data: `{"choices":[{"delta":"x"},null,1]}`, usage: NoUsage},
	{name: "choices null", data: `{"choices":null,"usage":null}`, usage: NoUsage},
	{name: "choices an object", data: `{"choices":{"delta":{"content":"x"}}}`, usage: NoUsage},
	{name: "completions text is not chat output", data: `{"choices":[{"text":"x","index":0}]}`, usage: NoUsage},
	{name: "long error message is clipped", data: `{"error":{"message":"` + strings.Repeat("é", 150) + `"}}`,
		reason: record.StreamError, detail: strings.Repeat("é", 100) + "…", usage: NoUsage},
}

var completionsCases = []eventCase{
	{name: "text chunk", data: `{"id":"cmpl-7iA7","object":"text_completion","created":1690759702,"choices":[{"text":"This","index":0,"logprobs":null,"finish_reason":null}],"model":"gpt-3.5-turbo-instruct"}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "empty text (special token)", data: `{"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":null}]}`, usage: NoUsage},
	{name: "whitespace text is output", data: `{"choices":[{"text":" ","index":0}]}`, want: Info{Output: true, Answer: true}, usage: NoUsage},
	{name: "null text", data: `{"choices":[{"text":null,"index":0}]}`, usage: NoUsage},
	{name: "finish with text", data: `{"choices":[{"text":"!","index":0,"finish_reason":"length"}],"usage":null}`,
		want: Info{Output: true, Answer: true}, usage: NoUsage, finish: "length"},
	{name: "usage chunk", data: `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":16,"total_tokens":19}}`,
		usage: Usage{CompletionTokens: 16, PromptTokens: 3}},
	{name: "chat delta is not completions output", data: `{"choices":[{"delta":{"content":"x"}}]}`, usage: NoUsage},
	{name: "error", data: `{"object":"error","error":{"message":"bad","code":400}}`, reason: record.StreamError, detail: "bad", usage: NoUsage},
	{name: "[DONE]", data: "[DONE]", want: Info{Done: true}, usage: NoUsage},
	{name: "malformed", data: `{"choices":[`, reason: record.Decode,
		detail: "malformed JSON in event data: jsonscan: unexpected end of input at offset 12", usage: NoUsage},
}

func runEventCases(t *testing.T, a Adapter, cases []eventCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := a.NewParser()
			var typ []byte
			if tc.typ != "" {
				typ = []byte(tc.typ)
			}
			got, err := p.Event(typ, []byte(tc.data))
			if got != tc.want {
				t.Errorf("Info = %+v, want %+v", got, tc.want)
			}
			if tc.reason == record.OK {
				if err != nil {
					t.Errorf("error = %v, want none", err)
				}
			} else {
				var f *Failure
				if !errors.As(err, &f) {
					t.Fatalf("error = %v, want a *Failure", err)
				}
				if f.Reason != tc.reason || f.Detail != tc.detail {
					t.Errorf("Failure = {%v %q}, want {%v %q}", f.Reason, f.Detail, tc.reason, tc.detail)
				}
			}
			if u := p.Usage(); u != tc.usage {
				t.Errorf("Usage() = %+v, want %+v", u, tc.usage)
			}
			if fr := p.(FinishReasoner).FinishReason(); fr != tc.finish {
				t.Errorf("FinishReason() = %q, want %q", fr, tc.finish)
			}
		})
	}
}

func TestChatEvent(t *testing.T) {
	a, _ := Lookup("openai-chat")
	runEventCases(t, a, chatCases)
}

func TestCompletionsEvent(t *testing.T) {
	a, _ := Lookup("openai-completions")
	runEventCases(t, a, completionsCases)
}

type step struct {
	data string
	want Info
}

func TestStreams(t *testing.T) {
	content := func(s string) string {
		return `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"` + s + `"},"finish_reason":null}],"usage":null}`
	}
	cont := func(delta string, completion int) string {
		return `{"id":"c","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}],"usage":{"prompt_tokens":10,"total_tokens":0,"completion_tokens":` + itoa(completion) + `}}`
	}
	out := Info{Output: true, Answer: true}
	tests := []struct {
		name    string
		adapter string
		steps   []step
		usage   Usage
		finish  string
	}{
		{"OpenAI with include_usage", "openai-chat", []step{
			{chatRole, Info{}},
			{content("Hello"), out},
			{content("!"), out},
			{chatFinish, Info{}},
			{chatUsage, Info{}},
			{"[DONE]", Info{Done: true}},
		}, Usage{CompletionTokens: 31, PromptTokens: 75}, "stop"},
		{"vLLM continuous usage stats", "openai-chat", []step{
			{cont(`{"role":"assistant","content":""}`, 0), Info{}},
			{cont(`{"content":"The"}`, 1), Info{Output: true, Answer: true, Tokens: 1}},
			{cont(`{"content":" quick brown"}`, 4), Info{Output: true, Answer: true, Tokens: 3}},
			{cont(`{"content":""}`, 5), Info{}}, // a special token: no text
			{cont(`{"content":" fox"}`, 6), Info{Output: true, Answer: true, Tokens: 1}},
			{`{"id":"c","choices":[{"index":0,"delta":{"content":"."},"finish_reason":"length"}],"usage":{"prompt_tokens":10,"completion_tokens":7}}`,
				Info{Output: true, Answer: true, Tokens: 1}},
			{`{"id":"c","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":7,"total_tokens":17}}`, Info{}},
			{"[DONE]", Info{Done: true}},
		}, Usage{CompletionTokens: 7, PromptTokens: 10}, "length"},
		{"vLLM reasoning then answer", "openai-chat", []step{
			{`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`, Info{}},
			{`{"choices":[{"index":0,"delta":{"reasoning":"Let"}}]}`, Info{Output: true}},
			{`{"choices":[{"index":0,"delta":{"reasoning":" me"}}]}`, Info{Output: true}},
			{`{"choices":[{"index":0,"delta":{"content":"Yes"}}]}`, out},
			{`{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}]}`, Info{}},
			{"[DONE]", Info{Done: true}},
		}, NoUsage, "stop"},
		{"old llama.cpp: usage on the finish chunk only", "openai-chat", []step{
			{chatRoleNull, Info{}},
			{content("a"), out},
			{content("b"), out},
			// Two outputs preceded the first usage: the increase is
			// not this event's alone.
			{`{"choices":[{"finish_reason":"stop","index":0,"delta":{"content":"c"}}],"usage":{"completion_tokens":3,"prompt_tokens":4}}`, out},
			{"[DONE]", Info{Done: true}},
		}, Usage{CompletionTokens: 3, PromptTokens: 4}, "stop"},
		{"tool call", "openai-chat", []step{
			{`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""}}]}}]}`, out},
			{`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}`, out},
			{`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, Info{}},
			{"[DONE]", Info{Done: true}},
		}, NoUsage, "tool_calls"},
		{"n=2 with continuous usage: tokens not attributed", "openai-chat", []step{
			{`{"choices":[{"index":0,"delta":{"content":"A"}}],"usage":{"completion_tokens":1}}`, Info{Output: true, Answer: true, Tokens: 1}},
			{`{"choices":[{"index":1,"delta":{"content":"B"}}],"usage":{"completion_tokens":1}}`, out},
			{`{"choices":[{"index":0,"delta":{"content":"C"}}],"usage":{"completion_tokens":2}}`, out},
			{`{"choices":[],"usage":{"completion_tokens":4,"prompt_tokens":2}}`, Info{}},
			{"[DONE]", Info{Done: true}},
		}, Usage{CompletionTokens: 4, PromptTokens: 2}, ""},
		{"completions", "openai-completions", []step{
			{`{"choices":[{"text":"This","index":0,"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":2,"completion_tokens":1}}`, Info{Output: true, Answer: true, Tokens: 1}},
			{`{"choices":[{"text":" is","index":0,"logprobs":null,"finish_reason":"length"}],"usage":{"prompt_tokens":2,"completion_tokens":2}}`, Info{Output: true, Answer: true, Tokens: 1}},
			{`{"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":2,"total_tokens":4}}`, Info{}},
			{"[DONE]", Info{Done: true}},
		}, Usage{CompletionTokens: 2, PromptTokens: 2}, "length"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := Lookup(tc.adapter)
			if !ok {
				t.Fatalf("no adapter %q", tc.adapter)
			}
			p := a.NewParser()
			// Run twice: the second run checks that Reset clears
			// everything.
			for run := range 2 {
				p.Reset()
				for i, s := range tc.steps {
					got, err := p.Event(nil, []byte(s.data))
					if err != nil {
						t.Fatalf("run %d, event %d: %v", run, i, err)
					}
					if got != s.want {
						t.Errorf("run %d, event %d: Info = %+v, want %+v", run, i, got, s.want)
					}
				}
				if u := p.Usage(); u != tc.usage {
					t.Errorf("run %d: Usage() = %+v, want %+v", run, u, tc.usage)
				}
				if fr := p.(FinishReasoner).FinishReason(); fr != tc.finish {
					t.Errorf("run %d: FinishReason() = %q, want %q", run, fr, tc.finish)
				}
			}
		})
	}
}

func TestMidStreamErrorAfterOutput(t *testing.T) {
	a, _ := Lookup("openai-chat")
	p := a.NewParser()
	if info, err := p.Event(nil, []byte(chatContent)); err != nil || !info.Output {
		t.Fatalf("content: %+v, %v", info, err)
	}
	_, err := p.Event(nil, []byte(`{"error":{"message":"engine dead","type":"InternalServerError","code":500}}`))
	var f *Failure
	if !errors.As(err, &f) || f.Reason != record.StreamError || f.Detail != "engine dead" {
		t.Fatalf("error = %v, want stream_error: engine dead", err)
	}
	if got := err.Error(); got != "stream_error: engine dead" {
		t.Errorf("Error() = %q", got)
	}
}

func TestFinishReasonUnusual(t *testing.T) {
	a, _ := Lookup("openai-chat")
	p := a.NewParser()
	for _, fr := range []string{"abort", "insufficient_system_resource", "content_filter", "function_call", "caf\\u00e9"} {
		if _, err := p.Event(nil, []byte(`{"choices":[{"delta":{},"finish_reason":"`+fr+`"}]}`)); err != nil {
			t.Fatal(err)
		}
		want := strings.ReplaceAll(fr, "\\u00e9", "é")
		if got := p.(FinishReasoner).FinishReason(); got != want {
			t.Errorf("FinishReason() = %q, want %q", got, want)
		}
	}
	// A non-string finish_reason keeps the last one.
	_, _ = p.Event(nil, []byte(`{"choices":[{"delta":{},"finish_reason":null}]}`))
	if got := p.(FinishReasoner).FinishReason(); got != "café" {
		t.Errorf("after null: FinishReason() = %q, want café", got)
	}
	p.Reset()
	if got := p.(FinishReasoner).FinishReason(); got != "" {
		t.Errorf("after Reset: FinishReason() = %q", got)
	}
	long := strings.Repeat("x", 100)
	_, _ = p.Event(nil, []byte(`{"choices":[{"delta":{},"finish_reason":"`+long+`"}]}`))
	if got := p.(FinishReasoner).FinishReason(); got != long {
		t.Errorf("FinishReason() = %q, want %q", got, long)
	}
	p.Reset()
	if got, c := p.(FinishReasoner).FinishReason(), cap(p.(*openAIParser).finish); got != "" || c > 64 {
		t.Errorf("after Reset: FinishReason() = %q, buffer capacity %d", got, c)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestNoAllocsPerEvent(t *testing.T) {
	a, _ := Lookup("openai-chat")
	p := a.NewParser()
	for _, s := range []string{chatRole, chatContent, chatFinish, chatUsage, "[DONE]",
		`{"choices":[{"index":0,"delta":{"c\u006fntent":"x","tool_calls":[{"index":0}]},"finish_reason":"length"}],"usage":{"completion_tokens":5}}`} {
		data := []byte(s)
		n := testing.AllocsPerRun(200, func() {
			p.Reset()
			if _, err := p.Event(nil, data); err != nil {
				t.Fatal(err)
			}
			_ = p.(FinishReasoner).FinishReason()
		})
		if n != 0 {
			t.Errorf("%d allocations per event for %s", int(n), s)
		}
	}
}
