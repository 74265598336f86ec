// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/llmslo/llm_slo_exporter/record"
)

// This file tests the adapters of the APIs other than OpenAI's. Events
// are as the servers send them (see shared/reference/stream-formats.md
// §3–§8); values are illustrative.

func TestNativeBody(t *testing.T) {
	tests := []struct {
		name    string
		adapter string
		spec    Spec
		want    string
		wantErr string
	}{
		{"anthropic", "anthropic", Spec{Model: "claude-x", Prompt: "Hi", MaxTokens: 64},
			`{"max_tokens":64,"messages":[{"content":"Hi","role":"user"}],"model":"claude-x","stream":true}`, ""},
		{"anthropic ignores ignore_eos", "anthropic", Spec{Model: "claude-x", Prompt: "Hi", MaxTokens: 64, IgnoreEOS: true},
			`{"max_tokens":64,"messages":[{"content":"Hi","role":"user"}],"model":"claude-x","stream":true}`, ""},
		{"anthropic without max_tokens leaves it to the server's 400", "anthropic", Spec{Model: "claude-x", Prompt: "Hi"},
			`{"messages":[{"content":"Hi","role":"user"}],"model":"claude-x","stream":true}`, ""},
		{"anthropic extra body", "anthropic", Spec{Model: "claude-x", Prompt: "Hi", MaxTokens: 2048,
			ExtraBody: map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}}},
			`{"max_tokens":2048,"messages":[{"content":"Hi","role":"user"}],"model":"claude-x","stream":true,"thinking":{"budget_tokens":1024,"type":"enabled"}}`, ""},
		{"tgi", "tgi", Spec{Model: "m", Prompt: "<b>Hi</b>", MaxTokens: 16, IgnoreEOS: true},
			`{"inputs":"<b>Hi</b>","parameters":{"details":true,"max_new_tokens":16}}`, ""},
		{"tgi extra parameters merge", "tgi", Spec{Prompt: "Hi", MaxTokens: 16, ExtraBody: map[string]any{
			"parameters": map[string]any{"temperature": 0.5, "details": nil}}},
			`{"inputs":"Hi","parameters":{"details":null,"max_new_tokens":16,"temperature":0.5}}`, ""},
		{"triton", "triton", Spec{Model: "ensemble", Prompt: "Hi", MaxTokens: 16},
			`{"max_tokens":16,"stream":true,"text_input":"Hi"}`, ""},
		{"triton ignore_eos as min_length", "triton", Spec{Model: "ensemble", Prompt: "Hi", MaxTokens: 16, IgnoreEOS: true},
			`{"max_tokens":16,"min_length":16,"stream":true,"text_input":"Hi"}`, ""},
		{"triton vLLM backend", "triton", Spec{Prompt: "Hi", ExtraBody: map[string]any{
			"sampling_parameters": `{"max_tokens":16}`, "return_num_output_tokens": true}},
			`{"return_num_output_tokens":true,"sampling_parameters":"{\"max_tokens\":16}","stream":true,"text_input":"Hi"}`, ""},
		{"llamacpp", "llamacpp", Spec{Model: "m", Prompt: "Hi", MaxTokens: 16, IgnoreEOS: true},
			`{"ignore_eos":true,"model":"m","n_predict":16,"prompt":"Hi","stream":true}`, ""},
		{"llamacpp minimal", "llamacpp", Spec{Prompt: "Hi"}, `{"prompt":"Hi","stream":true}`, ""},
		{"ollama", "ollama", Spec{Model: "llama3", Prompt: "Hi", MaxTokens: 16, IgnoreEOS: true},
			`{"messages":[{"content":"Hi","role":"user"}],"model":"llama3","options":{"num_predict":16},"stream":true}`, ""},
		{"ollama think and options merge", "ollama", Spec{Model: "qwen3", Prompt: "Hi", MaxTokens: 16, ExtraBody: map[string]any{
			"think": true, "options": map[string]any{"temperature": 0}}},
			`{"messages":[{"content":"Hi","role":"user"}],"model":"qwen3","options":{"num_predict":16,"temperature":0},"stream":true,"think":true}`, ""},
		{"sglang", "sglang", Spec{Model: "m", Prompt: "Hi", MaxTokens: 16, IgnoreEOS: true},
			`{"sampling_params":{"ignore_eos":true,"max_new_tokens":16},"stream":true,"text":"Hi"}`, ""},
		{"sglang extra replaces a non-object", "sglang", Spec{Prompt: "Hi", ExtraBody: map[string]any{"text": []any{"a"}, "sampling_params": nil}},
			`{"sampling_params":null,"stream":true,"text":["a"]}`, ""},
		{"negative max_tokens", "tgi", Spec{MaxTokens: -1}, "", "max_tokens is negative (-1)"},
		{"unencodable extra body", "ollama", Spec{ExtraBody: map[string]any{"x": func() {}}}, "",
			"encoding the request body: json: unsupported type: func()"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := Lookup(tc.adapter)
			if !ok {
				t.Fatalf("no adapter %q", tc.adapter)
			}
			got, err := a.Body(tc.spec)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("Body =\n%s\nwant\n%s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Error("Body is not valid JSON")
			}
		})
	}
}

func TestMergeBodyDoesNotModifyExtra(t *testing.T) {
	extra := map[string]any{"options": map[string]any{"a": 1, "nested": map[string]any{"b": 2}}}
	want := map[string]any{"options": map[string]any{"a": 1, "nested": map[string]any{"b": 2}}}
	for range 2 {
		dst := map[string]any{"options": map[string]any{"num_predict": 8}}
		mergeBody(dst, extra)
		if got := dst["options"].(map[string]any); len(got) != 3 || got["num_predict"] != 8 {
			t.Errorf("merged options = %v", got)
		}
		// A later probe target built from the same extra must see it
		// unchanged: the merge copies extra's maps.
		dst["options"].(map[string]any)["nested"].(map[string]any)["c"] = 3
	}
	if !reflect.DeepEqual(extra, want) {
		t.Errorf("extra = %v, want %v (modified by the merge)", extra, want)
	}
}

var (
	out    = Info{Output: true, Answer: true}
	reason = Info{Output: true}
)

var anthropicCases = []eventCase{
	{name: "message_start", typ: "message_start", data: `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-x","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`,
		usage: Usage{CompletionTokens: 1, PromptTokens: 25}},
	{name: "message_start with cached prompt", typ: "message_start", data: `{"type":"message_start","message":{"usage":{"input_tokens":5,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":3}}}`,
		usage: Usage{CompletionTokens: 3, PromptTokens: 2105}},
	{name: "content_block_start is not output", typ: "content_block_start", data: `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hello"}}`, usage: NoUsage},
	{name: "ping", typ: "ping", data: `{"type": "ping"}`, usage: NoUsage},
	{name: "text_delta", typ: "content_block_delta", data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
		want: out, usage: NoUsage},
	{name: "empty text_delta is not output", typ: "content_block_delta", data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}`, usage: NoUsage},
	{name: "whitespace text_delta is output", typ: "content_block_delta", data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\n"}}`,
		want: out, usage: NoUsage},
	{name: "thinking_delta is reasoning", typ: "content_block_delta", data: `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think"}}`,
		want: reason, usage: NoUsage},
	{name: "signature_delta is not output", typ: "content_block_delta", data: `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}}`, usage: NoUsage},
	{name: "input_json_delta is answer", typ: "content_block_delta", data: `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"location\": \"San Fra"}}`,
		want: out, usage: NoUsage},
	{name: "empty input_json_delta is not output", typ: "content_block_delta", data: `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`, usage: NoUsage},
	{name: "citations_delta is not output", typ: "content_block_delta", data: `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"x"}}}`, usage: NoUsage},
	{name: "unknown delta type", typ: "content_block_delta", data: `{"type":"content_block_delta","index":0,"delta":{"type":"hologram_delta","text":"x"}}`, usage: NoUsage},
	{name: "delta type from the event name when data has none", typ: "content_block_delta", data: `{"index":0,"delta":{"type":"text_delta","text":"x"}}`,
		want: out, usage: NoUsage},
	{name: "data type wins over the event name", typ: "ping", data: `{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}`,
		want: out, usage: NoUsage},
	{name: "content_block_stop", typ: "content_block_stop", data: `{"type":"content_block_stop","index":0}`, usage: NoUsage},
	{name: "message_delta with cumulative usage", typ: "message_delta", data: `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`,
		usage: Usage{CompletionTokens: 15, PromptTokens: -1}, finish: "end_turn"},
	{name: "message_delta with input tokens too", typ: "message_delta", data: `{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":64}}`,
		usage: Usage{CompletionTokens: 64, PromptTokens: 15}, finish: "max_tokens"},
	{name: "message_stop", typ: "message_stop", data: `{"type":"message_stop"}`, want: Info{Done: true}, usage: NoUsage},
	{name: "message_stop without event name", data: `{"type":"message_stop"}`, want: Info{Done: true}, usage: NoUsage},
	{name: "unknown event type", typ: "message_hologram", data: `{"type":"message_hologram","text":"x"}`, usage: NoUsage},
	{name: "error event", typ: "error", data: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		reason: record.StreamError, detail: "Overloaded", usage: NoUsage},
	{name: "error type without event name", data: `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
		reason: record.StreamError, detail: "Internal server error", usage: NoUsage},
	{name: "error event with plain text", typ: "error", data: "upstream connect error", reason: record.StreamError, detail: "upstream connect error", usage: NoUsage},
	{name: "error event without data", typ: "error", data: "", reason: record.StreamError, detail: "error event without data", usage: NoUsage},
	{name: "error member in another event", typ: "message_delta", data: `{"type":"message_delta","error":{"message":"boom"}}`,
		reason: record.StreamError, detail: "boom", usage: NoUsage},
	{name: "error null is not an error", typ: "content_block_delta", data: `{"type":"content_block_delta","error":null,"delta":{"type":"text_delta","text":"x"}}`,
		want: out, usage: NoUsage},
	{name: "malformed JSON", typ: "content_block_delta", data: `{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}`, reason: record.Decode,
		detail: "malformed JSON in event data: jsonscan: unexpected end of input at offset 70", usage: NoUsage},
	{name: "not an object", typ: "content_block_delta", data: `[DONE]`, reason: record.Decode, detail: "event data is not a JSON object: [DONE]", usage: NoUsage},
	{name: "escaped type names", typ: "content_block_delta", data: `{"type":"content_block_d\u0065lta","delta":{"type":"text_d\u0065lta","text":"x"}}`,
		want: out, usage: NoUsage},
}

var tgiCases = []eventCase{
	{name: "token", data: `{"index":1,"token":{"id":1976,"text":" Hello","logprob":-0.12,"special":false},"generated_text":null,"details":null}`,
		want: Info{Output: true, Answer: true, Tokens: 1}, usage: NoUsage},
	{name: "token with empty text is output", data: `{"index":2,"token":{"id":29871,"text":"","logprob":-0.5,"special":false},"generated_text":null,"details":null}`,
		want: Info{Output: true, Answer: true, Tokens: 1}, usage: NoUsage},
	{name: "token without special member", data: `{"token":{"id":5,"text":"a"}}`, want: Info{Output: true, Answer: true, Tokens: 1}, usage: NoUsage},
	{name: "special token is not output", data: `{"index":3,"token":{"id":32000,"text":"<|im_start|>","logprob":0,"special":true},"generated_text":null,"details":null}`,
		usage: NoUsage},
	{name: "last event with EOS and details", data: `{"index":7,"token":{"id":2,"text":"</s>","logprob":-0.01,"special":true},"generated_text":" Hello world","details":{"finish_reason":"eos_token","generated_tokens":7,"seed":null,"input_length":5}}`,
		want: Info{Done: true}, usage: Usage{CompletionTokens: 7, PromptTokens: 5}, finish: "eos_token"},
	{name: "last event at max_new_tokens", data: `{"index":8,"token":{"id":9,"text":"!","logprob":-0.3,"special":false},"generated_text":"Hi there!","details":{"finish_reason":"length","generated_tokens":8,"seed":null,"input_length":3}}`,
		want: Info{Output: true, Answer: true, Tokens: 1, Done: true}, usage: Usage{CompletionTokens: 8, PromptTokens: 3}, finish: "length"},
	{name: "last event without details", data: `{"index":8,"token":{"id":9,"text":"!","special":false},"generated_text":"Hi there!","details":null}`,
		want: Info{Output: true, Answer: true, Tokens: 1, Done: true}, usage: NoUsage},
	{name: "empty generated_text is the end", data: `{"token":{"id":2,"text":"</s>","special":true},"generated_text":""}`, want: Info{Done: true}, usage: NoUsage},
	{name: "token not an object", data: `{"token":null,"generated_text":null}`, usage: NoUsage},
	{name: "generation error", data: `{"error":"Request failed during generation: Server error: CUDA out of memory","error_type":"generation"}`,
		reason: record.StreamError, detail: "Request failed during generation: Server error: CUDA out of memory", usage: NoUsage},
	{name: "incomplete generation", data: `{"error":"Incomplete generation","error_type":"incomplete_generation"}`,
		reason: record.StreamError, detail: "Incomplete generation", usage: NoUsage},
	{name: "error null", data: `{"token":{"id":1,"text":"a","special":false},"error":null}`, want: Info{Output: true, Answer: true, Tokens: 1}, usage: NoUsage},
	{name: "malformed", data: `{"token":{"id":1,"text":"a","special":fals}}`, reason: record.Decode,
		detail: "malformed JSON in event data: jsonscan: invalid literal at offset 42", usage: NoUsage},
	{name: "[DONE] is not TGI's", data: "[DONE]", reason: record.Decode, detail: "event data is not a JSON object: [DONE]", usage: NoUsage},
}

var tritonCases = []eventCase{
	{name: "TensorRT-LLM ensemble response", data: `{"context_logits":0.0,"cum_log_probs":0.0,"generation_logits":0.0,"model_name":"ensemble","model_version":"1","output_log_probs":0.0,"sequence_end":false,"sequence_id":0,"sequence_start":false,"text_output":"**\n"}`,
		want: out, usage: NoUsage},
	{name: "empty text_output is not output", data: `{"model_name":"ensemble","model_version":"1","text_output":""}`, usage: NoUsage},
	{name: "text_output as a tensor of shape [1]", data: `{"model_name":"m","text_output":["Hi"]}`, want: out, usage: NoUsage},
	{name: "text_output array of empty strings", data: `{"text_output":["",""]}`, usage: NoUsage},
	{name: "vLLM backend with counts", data: `{"model_name":"vllm_model","model_version":"1","num_input_tokens":12,"num_output_tokens":3,"text_output":" the cat"}`,
		want: Info{Output: true, Answer: true, Tokens: 3}, usage: Usage{CompletionTokens: 3, PromptTokens: 12}},
	{name: "vLLM backend finish reason", data: `{"model_name":"vllm_model","finish_reason":["length"],"num_output_tokens":[1],"text_output":["."]}`,
		want: Info{Output: true, Answer: true, Tokens: 1}, usage: Usage{CompletionTokens: 1, PromptTokens: -1}, finish: "length"},
	{name: "count on an event without text", data: `{"num_output_tokens":1,"text_output":"","finish_reason":"stop"}`,
		usage: Usage{CompletionTokens: 1, PromptTokens: -1}, finish: "stop"},
	{name: "error object", data: `{"error":"in ensemble 'ensemble', Executor failed process requestId 7 due to the following error: Encountered an error in forwardAsync function"}`,
		reason: record.StreamError, detail: "in ensemble 'ensemble', Executor failed process requestId 7 due to the following error: Encountered an error in forwardAsync function", usage: NoUsage},
	{name: "no end marker", data: "[DONE]", reason: record.Decode, detail: "event data is not a JSON object: [DONE]", usage: NoUsage},
	{name: "blank data", data: "  ", usage: NoUsage},
}

var llamaCases = []eventCase{
	{name: "partial", data: `{"index":0,"content":" Hello","tokens":[15043],"stop":false,"id_slot":0,"tokens_predicted":1,"tokens_evaluated":5}`,
		want: Info{Output: true, Answer: true, Tokens: 1}, usage: Usage{CompletionTokens: 1, PromptTokens: 5}},
	{name: "partial with held-back tokens", data: `{"index":0,"content":"😀","tokens":[1,2,3],"stop":false,"tokens_predicted":3,"tokens_evaluated":5}`,
		want: Info{Output: true, Answer: true, Tokens: 3}, usage: Usage{CompletionTokens: 3, PromptTokens: 5}},
	{name: "old partial: tokens only", data: `{"content":"ab","tokens":[7,8],"stop":false}`,
		want: Info{Output: true, Answer: true, Tokens: 2}, usage: NoUsage},
	{name: "oldest partial: content and stop", data: `{"content":"a","stop":false}`, want: out, usage: NoUsage},
	{name: "progress event is not output", data: `{"index":0,"content":"","tokens":[],"stop":false,"id_slot":0,"tokens_predicted":0,"tokens_evaluated":120,"prompt_progress":{"total":120,"cache":0,"processed":64,"time_ms":12.5}}`,
		usage: Usage{CompletionTokens: 0, PromptTokens: 120}},
	{name: "final", data: `{"index":0,"content":"","tokens":[],"id_slot":0,"stop":true,"model":"gemma","tokens_predicted":16,"tokens_evaluated":5,"generation_settings":{"n_predict":16,"ignore_eos":true},"prompt":"<bos>Hi","has_new_line":false,"truncated":false,"stop_type":"limit","stopping_word":"","tokens_cached":20,"timings":{"cache_n":0,"prompt_n":5,"prompt_ms":12.1,"prompt_per_token_ms":2.4,"prompt_per_second":413.2,"predicted_n":16,"predicted_ms":160.3,"predicted_per_token_ms":10.0,"predicted_per_second":99.8}}`,
		want: Info{Done: true}, usage: Usage{CompletionTokens: 16, PromptTokens: 5}, finish: "limit"},
	{name: "final with content", data: `{"content":"!","stop":true,"stop_type":"eos","timings":{"predicted_n":4,"prompt_n":3,"cache_n":10}}`,
		want: Info{Output: true, Answer: true, Done: true}, usage: Usage{CompletionTokens: 4, PromptTokens: 13}, finish: "eos"},
	{name: "[DONE] is accepted", data: "[DONE]", want: Info{Done: true}, usage: NoUsage},
	{name: "stop false is not the end", data: `{"content":"","stop":false}`, usage: NoUsage},
	{name: "error object", data: `{"error":{"code":500,"message":"failed to decode the batch","type":"server_error"}}`,
		reason: record.StreamError, detail: "failed to decode the batch", usage: NoUsage},
	{name: "error event name", typ: "error", data: `{"code":400,"message":"context full"}`,
		reason: record.StreamError, detail: "context full", usage: NoUsage},
	{name: "error event name with a control character", typ: "error", data: "\x10",
		reason: record.StreamError, detail: "error event without data", usage: NoUsage},
	{name: "malformed", data: `{"content":"a","stop":false`, reason: record.Decode,
		detail: "malformed JSON in event data: jsonscan: unexpected end of input at offset 27", usage: NoUsage},
}

var ollamaCases = []eventCase{
	{name: "content line", data: `{"model":"llama3","created_at":"2025-10-26T17:15:24.155176Z","message":{"role":"assistant","content":" question"},"done":false}`,
		want: out, usage: NoUsage},
	{name: "empty content line", data: `{"model":"llama3","created_at":"x","message":{"role":"assistant","content":""},"done":false}`, usage: NoUsage},
	{name: "thinking line is reasoning", data: `{"model":"qwen3","created_at":"x","message":{"role":"assistant","content":"","thinking":"Hmm"},"done":false}`,
		want: reason, usage: NoUsage},
	{name: "tool call line is answer", data: `{"model":"qwen3","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},"done":false}`,
		want: out, usage: NoUsage},
	{name: "/api/generate response", data: `{"model":"llama3","created_at":"x","response":"The","done":false}`, want: out, usage: NoUsage},
	{name: "/api/generate thinking", data: `{"model":"qwen3","response":"","thinking":"so","done":false}`, want: reason, usage: NoUsage},
	{name: "done line with the last content", data: `{"model":"gemma","created_at":"2025-10-26T17:15:24.166576Z","message":{"role":"assistant","content":"!"},"done":true,"done_reason":"stop","total_duration":174560334,"load_duration":101397084,"prompt_eval_count":11,"prompt_eval_duration":13074791,"eval_count":18,"eval_duration":52479709}`,
		want: Info{Output: true, Answer: true, Done: true}, usage: Usage{CompletionTokens: 18, PromptTokens: 11}, finish: "stop"},
	{name: "done line without counts (omitempty)", data: `{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","total_duration":1}`,
		want: Info{Done: true}, usage: NoUsage, finish: "length"},
	{name: "done false", data: `{"message":{"content":""},"done":false,"eval_count":3}`, usage: NoUsage},
	{name: "error line", data: `{"error":"an error was encountered while running the model: unexpected EOF"}`,
		reason: record.StreamError, detail: "an error was encountered while running the model: unexpected EOF", usage: NoUsage},
	{name: "HTML line", data: "<html><body>502 Bad Gateway</body></html>", reason: record.Decode,
		detail: "event data is not a JSON object: <html><body>502 Bad Gateway</body></html>", usage: NoUsage},
	{name: "malformed", data: `{"message":{"content":"a"},"done":false`, reason: record.Decode,
		detail: "malformed JSON in event data: jsonscan: unexpected end of input at offset 39", usage: NoUsage},
}

var sglangCases = []eventCase{
	{name: "first event", data: `{"text":" Paris","output_ids":[3681],"meta_info":{"id":"a1","finish_reason":null,"prompt_tokens":7,"completion_tokens":1,"cached_tokens":0},"index":0}`,
		want: Info{Output: true, Answer: true, Tokens: 1}, usage: Usage{CompletionTokens: 1, PromptTokens: 7}},
	{name: "empty text", data: `{"text":"","meta_info":{"finish_reason":null,"prompt_tokens":7,"completion_tokens":0}}`,
		usage: Usage{CompletionTokens: 0, PromptTokens: 7}},
	{name: "finish length", data: `{"text":"x","meta_info":{"finish_reason":{"type":"length","length":16},"prompt_tokens":7,"completion_tokens":16}}`,
		want: Info{Output: true, Answer: true, Tokens: 16}, usage: Usage{CompletionTokens: 16, PromptTokens: 7}, finish: "length"},
	{name: "finish as a string", data: `{"text":"x","meta_info":{"finish_reason":"stop","completion_tokens":1}}`,
		want: Info{Output: true, Answer: true, Tokens: 1}, usage: Usage{CompletionTokens: 1, PromptTokens: -1}, finish: "stop"},
	{name: "abort", data: `{"text":"x","meta_info":{"finish_reason":{"type":"abort","message":"The request is aborted by the scheduler.","status_code":503},"completion_tokens":2}}`,
		reason: record.StreamError, detail: "request aborted: The request is aborted by the scheduler.", usage: NoUsage, finish: "abort"},
	{name: "error", data: `{"error":{"message":"Cannot allocate KV cache"}}`, reason: record.StreamError, detail: "Cannot allocate KV cache", usage: NoUsage},
	{name: "[DONE]", data: "[DONE]", want: Info{Done: true}, usage: NoUsage},
	{name: "malformed", data: `{"text":"x"`, reason: record.Decode, detail: "malformed JSON in event data: jsonscan: unexpected end of input at offset 11", usage: NoUsage},
}

func TestAnthropicEvent(t *testing.T) { runEventCases(t, mustLookup(t, "anthropic"), anthropicCases) }
func TestTGIEvent(t *testing.T)       { runEventCases(t, mustLookup(t, "tgi"), tgiCases) }
func TestTritonEvent(t *testing.T)    { runEventCases(t, mustLookup(t, "triton"), tritonCases) }
func TestLlamaCppEvent(t *testing.T)  { runEventCases(t, mustLookup(t, "llamacpp"), llamaCases) }
func TestOllamaEvent(t *testing.T)    { runEventCases(t, mustLookup(t, "ollama"), ollamaCases) }
func TestSGLangEvent(t *testing.T)    { runEventCases(t, mustLookup(t, "sglang"), sglangCases) }

func mustLookup(t testing.TB, name string) Adapter {
	t.Helper()
	a, ok := Lookup(name)
	if !ok {
		t.Fatalf("no adapter %q", name)
	}
	return a
}

// typedStep is one event of a stream: its SSE event name and data.
type typedStep struct {
	typ  string
	data string
	want Info
}

func TestNativeStreams(t *testing.T) {
	sgl := func(text string, completion int) string {
		return `{"text":"` + text + `","meta_info":{"finish_reason":null,"prompt_tokens":4,"completion_tokens":` + itoa(completion) + `}}`
	}
	tests := []struct {
		name    string
		adapter string
		steps   []typedStep
		usage   Usage
		finish  string
	}{
		{"anthropic with thinking, text and a tool call", "anthropic", []typedStep{
			{"message_start", `{"type":"message_start","message":{"usage":{"input_tokens":25,"output_tokens":1}}}`, Info{}},
			{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`, Info{}},
			{"ping", `{"type":"ping"}`, Info{}},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me"}}`, reason},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"Eq"}}`, Info{}},
			{"content_block_stop", `{"type":"content_block_stop","index":0}`, Info{}},
			{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`, Info{}},
			{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}`, out},
			{"content_block_stop", `{"type":"content_block_stop","index":1}`, Info{}},
			{"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}`, Info{}},
			{"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`, Info{}},
			{"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{}"}}`, out},
			{"content_block_stop", `{"type":"content_block_stop","index":2}`, Info{}},
			{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":40}}`, Info{}},
			{"message_stop", `{"type":"message_stop"}`, Info{Done: true}},
		}, Usage{CompletionTokens: 40, PromptTokens: 25}, "tool_use"},
		{"tgi", "tgi", []typedStep{
			{"", `{"index":1,"token":{"id":1,"text":"a","special":false},"generated_text":null,"details":null}`, Info{Output: true, Answer: true, Tokens: 1}},
			{"", `{"index":2,"token":{"id":2,"text":"b","special":false},"generated_text":null,"details":null}`, Info{Output: true, Answer: true, Tokens: 1}},
			{"", `{"index":3,"token":{"id":0,"text":"</s>","special":true},"generated_text":"ab","details":{"finish_reason":"eos_token","generated_tokens":3,"input_length":2}}`, Info{Done: true}},
		}, Usage{CompletionTokens: 3, PromptTokens: 2}, "eos_token"},
		{"llamacpp", "llamacpp", []typedStep{
			{"", `{"content":"a","tokens":[1],"stop":false,"tokens_predicted":1,"tokens_evaluated":3}`, Info{Output: true, Answer: true, Tokens: 1}},
			{"", `{"content":"bc","tokens":[2,3],"stop":false,"tokens_predicted":3,"tokens_evaluated":3}`, Info{Output: true, Answer: true, Tokens: 2}},
			{"", `{"content":"","tokens":[],"stop":true,"tokens_predicted":4,"tokens_evaluated":3,"stop_type":"eos","timings":{"predicted_n":4,"prompt_n":3}}`, Info{Done: true}},
		}, Usage{CompletionTokens: 4, PromptTokens: 3}, "eos"},
		{"sglang cumulative", "sglang", []typedStep{
			{"", sgl("The", 1), Info{Output: true, Answer: true, Tokens: 1}},
			{"", sgl("The cat sat", 3), Info{Output: true, Answer: true, Tokens: 2}},
			{"", sgl("The cat sat", 4), Info{}}, // the EOS token: no new text
			{"", sgl("The cat sat\\n", 5), Info{Output: true, Answer: true, Tokens: 1}},
			{"", "[DONE]", Info{Done: true}},
		}, Usage{CompletionTokens: 5, PromptTokens: 4}, ""},
		{"sglang incremental", "sglang", []typedStep{
			{"", sgl("\\n", 1), Info{Output: true, Answer: true, Tokens: 1}},
			{"", sgl("\\n", 2), Info{}}, // indistinguishable from a repeat until the next segment
			{"", sgl("ab", 3), Info{Output: true, Answer: true, Tokens: 1}},
			{"", sgl("\\n", 4), Info{Output: true, Answer: true, Tokens: 1}},
			{"", sgl("\\n", 5), Info{Output: true, Answer: true, Tokens: 1}},
			{"", "[DONE]", Info{Done: true}},
		}, Usage{CompletionTokens: 5, PromptTokens: 4}, ""},
		{"triton vLLM backend counts", "triton", []typedStep{
			{"", `{"text_output":"a","num_output_tokens":1}`, Info{Output: true, Answer: true, Tokens: 1}},
			{"", `{"text_output":"bc","num_output_tokens":2}`, Info{Output: true, Answer: true, Tokens: 2}},
			{"", `{"text_output":"","num_output_tokens":1,"finish_reason":"stop"}`, Info{}},
		}, Usage{CompletionTokens: 4, PromptTokens: -1}, "stop"},
		{"ollama thinking then answer", "ollama", []typedStep{
			{"", `{"message":{"role":"assistant","content":"","thinking":"Hm"},"done":false}`, reason},
			{"", `{"message":{"role":"assistant","content":"Yes"},"done":false}`, out},
			{"", `{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":9}`, Info{Done: true}},
		}, Usage{CompletionTokens: 9, PromptTokens: 3}, "stop"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mustLookup(t, tc.adapter).NewParser()
			// Run twice: the second run checks that Reset clears
			// everything.
			for run := range 2 {
				p.Reset()
				for i, s := range tc.steps {
					var typ []byte
					if s.typ != "" {
						typ = []byte(s.typ)
					}
					got, err := p.Event(typ, []byte(s.data))
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

func TestSGLangResetDropsLongText(t *testing.T) {
	p := mustLookup(t, "sglang").NewParser().(*sglangParser)
	long := strings.Repeat("x", maxKeptText+1)
	if info, err := p.Event(nil, []byte(`{"text":"`+long+`"}`)); err != nil || !info.Output {
		t.Fatalf("%+v, %v", info, err)
	}
	p.Reset()
	if cap(p.prev) > maxKeptText {
		t.Errorf("kept %d bytes of text capacity after Reset", cap(p.prev))
	}
}

func TestTritonCountSaturates(t *testing.T) {
	p := mustLookup(t, "triton").NewParser()
	for range 3 {
		if _, err := p.Event(nil, []byte(`{"text_output":"a","num_output_tokens":9223372036854775807}`)); err != nil {
			t.Fatal(err)
		}
	}
	if u := p.Usage(); u.CompletionTokens != 1<<63-1 {
		t.Errorf("Usage() = %+v, want a saturated count", u)
	}
}

// nativeEvents are typical events of each API, for the allocation test
// and the benchmarks.
var nativeEvents = map[string][]typedStep{
	"anthropic": {
		{"message_start", anthropicCases[0].data, Info{}},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" tok"}}`, out},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" tok"}}`, reason},
		{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":32}}`, Info{}},
		{"message_stop", `{"type":"message_stop"}`, Info{Done: true}},
	},
	"tgi": {
		{"", tgiCases[0].data, Info{Output: true, Answer: true, Tokens: 1}},
		{"", tgiCases[4].data, Info{Done: true}},
	},
	"triton": {
		{"", tritonCases[0].data, out},
		{"", tritonCases[4].data, Info{Output: true, Answer: true, Tokens: 3}},
	},
	"llamacpp": {
		{"", llamaCases[0].data, Info{Output: true, Answer: true, Tokens: 1}},
		{"", llamaCases[5].data, Info{Done: true}},
	},
	"ollama": {
		{"", ollamaCases[0].data, out},
		{"", ollamaCases[6].data, Info{Output: true, Answer: true, Done: true}},
	},
	"sglang": {
		{"", sglangCases[0].data, Info{Output: true, Answer: true, Tokens: 1}},
		{"", sglangCases[2].data, Info{Output: true, Answer: true, Tokens: 16}},
		{"", "[DONE]", Info{Done: true}},
	},
}

func TestNativeNoAllocsPerEvent(t *testing.T) {
	for name, evs := range nativeEvents {
		p := mustLookup(t, name).NewParser()
		for _, e := range evs {
			typ, data := []byte(e.typ), []byte(e.data)
			if e.typ == "" {
				typ = nil
			}
			n := testing.AllocsPerRun(200, func() {
				p.Reset()
				if _, err := p.Event(typ, data); err != nil {
					t.Fatal(err)
				}
				_ = p.Usage()
				_ = p.(FinishReasoner).FinishReason()
			})
			if n != 0 {
				t.Errorf("%s: %d allocations per event for %s", name, int(n), e.data)
			}
		}
	}
}
