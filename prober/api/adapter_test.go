// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRegistry(t *testing.T) {
	want := []struct {
		name    string
		framing Framing
		headers map[string]string
	}{
		{"anthropic", SSE, map[string]string{"anthropic-version": "2023-06-01"}},
		{"llamacpp", SSE, nil},
		{"ollama", NDJSON, nil},
		{"openai-chat", SSE, nil},
		{"openai-completions", SSE, nil},
		{"sglang", SSE, nil},
		{"tgi", SSE, nil},
		{"triton", SSE, nil},
	}
	var names []string
	for _, w := range want {
		names = append(names, w.name)
	}
	if got := Names(); !reflect.DeepEqual(got, names) {
		t.Errorf("Names() = %q, want %q", got, names)
	}
	for _, w := range want {
		a, ok := Lookup(w.name)
		if !ok || a.Name() != w.name {
			t.Errorf("Lookup(%q) = %v, %v", w.name, a, ok)
			continue
		}
		if a.Framing() != w.framing {
			t.Errorf("%s: Framing() = %v, want %v", w.name, a.Framing(), w.framing)
		}
		if h := a.Headers(); !reflect.DeepEqual(h, w.headers) {
			t.Errorf("%s: Headers() = %v, want %v", w.name, h, w.headers)
		}
		if a.NewParser() == a.NewParser() {
			t.Errorf("%s: NewParser returned a shared parser", w.name)
		}
		// Only the parsers of APIs without an end marker end at EOF.
		_, eof := a.NewParser().(EOFEnder)
		if eof != (w.name == "triton") {
			t.Errorf("%s: EOFEnder = %v", w.name, eof)
		}
		if _, ok := a.NewParser().(FinishReasoner); !ok {
			t.Errorf("%s: parser is not a FinishReasoner", w.name)
		}
	}
	if a, ok := Lookup("openai"); ok || a != nil {
		t.Errorf("Lookup(openai) = %v, %v; want nothing", a, ok)
	}
	t.Run("duplicate registration panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("no panic")
			}
		}()
		register(openAIChat{})
	})
}

func TestBody(t *testing.T) {
	tests := []struct {
		name    string
		adapter string
		spec    Spec
		want    string
		wantErr string
	}{
		{"chat minimal", "openai-chat", Spec{Model: "m", Prompt: "Hi"},
			`{"messages":[{"content":"Hi","role":"user"}],"model":"m","stream":true,"stream_options":{"include_usage":true}}`, ""},
		{"chat with max_tokens and ignore_eos", "openai-chat", Spec{Model: "m", Prompt: "Hi", MaxTokens: 128, IgnoreEOS: true},
			`{"ignore_eos":true,"max_tokens":128,"messages":[{"content":"Hi","role":"user"}],"model":"m","stream":true,"stream_options":{"include_usage":true}}`, ""},
		{"chat without model", "openai-chat", Spec{Prompt: "Hi"},
			`{"messages":[{"content":"Hi","role":"user"}],"stream":true,"stream_options":{"include_usage":true}}`, ""},
		{"chat extra body overrides and adds", "openai-chat", Spec{Model: "m", Prompt: "Hi", MaxTokens: 8, ExtraBody: map[string]any{
			"max_tokens": nil, "max_completion_tokens": 8, "stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true},
			"temperature": 0, "stop": nil}},
			`{"max_completion_tokens":8,"max_tokens":null,"messages":[{"content":"Hi","role":"user"}],"model":"m","stop":null,"stream":true,"stream_options":{"continuous_usage_stats":true,"include_usage":true},"temperature":0}`, ""},
		{"chat prompt with HTML and quotes", "openai-chat", Spec{Model: "m", Prompt: "<b>\"x\" & y</b>\n"},
			`{"messages":[{"content":"<b>\"x\" & y</b>\n","role":"user"}],"model":"m","stream":true,"stream_options":{"include_usage":true}}`, ""},
		{"completions", "openai-completions", Spec{Model: "m", Prompt: "Once", MaxTokens: 16},
			`{"max_tokens":16,"model":"m","prompt":"Once","stream":true,"stream_options":{"include_usage":true}}`, ""},
		{"completions extra body", "openai-completions", Spec{Model: "m", Prompt: "Once", ExtraBody: map[string]any{"prompt": []any{"a", "b"}, "model": "other"}},
			`{"model":"other","prompt":["a","b"],"stream":true,"stream_options":{"include_usage":true}}`, ""},
		{"negative max_tokens", "openai-chat", Spec{Model: "m", MaxTokens: -1}, "", "max_tokens is negative (-1)"},
		{"unencodable extra body", "openai-completions", Spec{Model: "m", ExtraBody: map[string]any{"x": make(chan int)}}, "",
			"encoding the request body: json: unsupported type: chan int"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := Lookup(tc.adapter)
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

func TestErrorDetail(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name string
		body string
		want string
	}{
		{"empty", "", ""},
		{"blank", " \r\n\t", ""},
		{"OpenAI", `{"error":{"message":"Unrecognized request argument supplied: top_k","type":"invalid_request_error","param":null,"code":null}}`,
			"Unrecognized request argument supplied: top_k"},
		{"vLLM int code", `{"error":{"message":"max_tokens must be at least 1, got 0.","type":"BadRequestError","param":"max_tokens","code":400}}`,
			"max_tokens must be at least 1, got 0."},
		{"string code", `{"error":{"code":"model_not_found","message":"The model does not exist"}}`, "The model does not exist"},
		{"older vLLM, SGLang, TRT-LLM", `{"object":"error","message":"The model x does not exist.","type":"NotFoundError","param":null,"code":404}`,
			"The model x does not exist."},
		{"TGI", `{"error":"Input validation error: max_new_tokens must be <= 1024","error_type":"validation"}`,
			"Input validation error: max_new_tokens must be <= 1024"},
		{"Ollama", `{"error":"model \"llama3\" not found, try pulling it first"}`, `model "llama3" not found, try pulling it first`},
		{"Anthropic", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`, "Overloaded"},
		{"NIM problem details", `{"type":"urn:inference-service:problem-details:unprocessable-entity","title":"Unprocessable Entity","status":422,"detail":"Extra inputs are not permitted"}`,
			"Extra inputs are not permitted"},
		{"FastAPI validation list", `{"detail":[{"type":"missing","loc":["body","model"],"msg":"Field required","input":{}}]}`, "Field required"},
		{"error object without message", `{"error":{"code":500}}`, `{"error":{"code":500}}`},
		{"error null then message", `{"error":null,"message":"fallback"}`, "fallback"},
		{"empty message falls through", `{"message":"","detail":"d"}`, "d"},
		{"blank message falls through", `{"error":{"message":" \n"},"message":"\t","detail":"d"}`, "d"},
		{"blank everything falls back to the body", `{"message":" "}`, `{"message":" "}`},
		{"body cut mid-JSON keeps what was read", `{"error":{"message":"context length exceeded","type":"BadRequestError"},"extra":"` + long[:50],
			"context length exceeded"},
		{"plain text", "Bad Gateway\n", "Bad Gateway"},
		{"HTML", "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\x00</body></html>",
			"<html> <head><title>502 Bad Gateway</title></head> <body> </body></html>"},
		{"long plain text", long, long[:200] + "…"},
		{"invalid UTF-8", "bad \xff byte", "bad \uFFFD byte"},
		{"JSON array", `["x"]`, `["x"]`},
		{"escaped message", `{"error":{"message":"a\tb\u0001c \ud83d\ude00"}}`, "a b c 😀"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range Names() {
				a, _ := Lookup(name)
				if got := a.ErrorDetail([]byte(tc.body)); got != tc.want {
					t.Errorf("%s: ErrorDetail = %q, want %q", name, got, tc.want)
				}
			}
		})
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"", 10, ""},
		{"  a  b  ", 10, "a b"},
		{"a\x00\x01\x7f\u0085b", 10, "a b"},
		{"abcdef", 3, "abc…"},
		{"abc", 3, "abc"},
		{"ab cd", 4, "ab c…"},
		{"ab cd", 3, "ab…"},
		{"éé", 3, "é…"},
		{"\xff\xfe", 10, "\uFFFD\uFFFD"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got := clip([]byte(tc.in), tc.max)
			if got != tc.want {
				t.Errorf("clip(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("clip result %q is not valid UTF-8", got)
			}
		})
	}
}
