// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/llmslo/llm_slo_exporter/prober/jsonscan"
	"github.com/llmslo/llm_slo_exporter/record"
)

// refResult is what a decode with encoding/json says one event on a fresh
// parser must give.
type refResult struct {
	info   Info
	reason record.Reason
	usage  Usage
	finish string
}

// refCount mirrors count: a non-negative integer literal, or -1.
func refCount(v any) int {
	n, ok := v.(json.Number)
	if !ok {
		return -1
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || i < 0 || int64(int(i)) != i {
		return -1
	}
	return int(i)
}

func refNonEmpty(v any) bool {
	switch x := v.(type) {
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return false
}

// reference classifies data with encoding/json into map[string]any, as
// the parser's documentation says. ok is false when encoding/json cannot
// decode what is valid JSON (numbers beyond float64 do not matter with
// UseNumber; depth beyond jsonscan.MaxDepth does).
func reference(data []byte, completions bool) (r refResult, ok bool) {
	r.usage = NoUsage
	d := bytes.Trim(data, " \t\r\n")
	if len(d) == 0 {
		return r, true
	}
	if string(d) == "[DONE]" {
		r.info.Done = true
		return r, true
	}
	if !json.Valid(d) {
		r.reason = record.Decode
		return r, true
	}
	if _, err := jsonscan.Parse(d); errors.Is(err, jsonscan.ErrTooDeep) {
		return r, false
	}
	dec := json.NewDecoder(bytes.NewReader(d))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return r, false
	}
	m, isObj := v.(map[string]any)
	if !isObj {
		r.reason = record.Decode
		return r, true
	}
	if e, present := m["error"]; present {
		isErr := false
		switch x := e.(type) {
		case nil:
		case bool:
			isErr = x
		case json.Number:
			f, err := x.Float64()
			isErr = err != nil || f != 0
		default:
			isErr = refNonEmpty(x)
		}
		if isErr {
			r.reason = record.StreamError
			return r, true
		}
	}
	multi := false
	choices, _ := m["choices"].([]any)
	for _, c := range choices {
		cm, isObj := c.(map[string]any)
		if !isObj {
			continue
		}
		if n, isNum := cm["index"].(json.Number); isNum {
			if i, err := strconv.ParseInt(string(n), 10, 64); err == nil && i != 0 {
				multi = true
			}
		}
		if fr, isStr := cm["finish_reason"].(string); isStr {
			r.finish = fr
		}
		if completions {
			if s, _ := cm["text"].(string); s != "" {
				r.info.Output, r.info.Answer = true, true
			}
			continue
		}
		delta, _ := cm["delta"].(map[string]any)
		str := func(k string) bool { s, _ := delta[k].(string); return s != "" }
		arr := func(k string) bool { a, _ := delta[k].([]any); return len(a) > 0 }
		obj := func(k string) bool { o, _ := delta[k].(map[string]any); return len(o) > 0 }
		if str("content") || str("refusal") || arr("tool_calls") || obj("function_call") {
			r.info.Output, r.info.Answer = true, true
		}
		if str("reasoning") || str("reasoning_content") {
			r.info.Output = true
		}
	}
	if u, isObj := m["usage"].(map[string]any); isObj {
		r.usage.CompletionTokens = refCount(u["completion_tokens"])
		r.usage.PromptTokens = refCount(u["prompt_tokens"])
		if c := r.usage.CompletionTokens; r.info.Output && !multi && c > 0 && c <= maxTokensPerEvent {
			r.info.Tokens = c
		}
	}
	return r, true
}

// FuzzChatParser runs one event through fresh chat and completions parsers
// and checks them against reference: never a panic, and the same Output,
// Answer, Done, Tokens, failure reason, usage and finish reason.
func FuzzChatParser(f *testing.F) {
	for _, tc := range chatCases {
		f.Add([]byte(tc.data))
	}
	for _, tc := range completionsCases {
		f.Add([]byte(tc.data))
	}
	for _, s := range []string{
		`{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"completion_tokens":3,"prompt_tokens":1}}`,
		`{"choices":[{"index":2,"text":"a"}],"usage":{"completion_tokens":3}}`,
		`{"error":0}`, `{"error":[]}`, `{"error":[0]}`, `{"error":1e999}`, `{"error":-0.0}`,
		`{"choices":[{"delta":{"tool_calls":[{}]},"finish_reason":"\u0073top"}]}`,
		" [DONE]\n", `"[DONE]"`, `[DONE]x`,
	} {
		f.Add([]byte(s))
	}
	chat, completions := newOpenAIParser(false), newOpenAIParser(true)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range []*openAIParser{chat, completions} {
			p.Reset()
			want, ok := reference(data, p.completions)
			info, err := p.Event(nil, data)
			if err != nil {
				var fl *Failure
				if !errors.As(err, &fl) {
					t.Fatalf("error %T is not a *Failure", err)
				}
				if fl.Reason != record.Decode && fl.Reason != record.StreamError {
					t.Fatalf("reason %v", fl.Reason)
				}
				if !utf8.ValidString(fl.Detail) || fl.Detail == "" {
					t.Fatalf("detail %q", fl.Detail)
				}
				if info != (Info{}) {
					t.Fatalf("Info %+v with an error", info)
				}
			}
			if !ok {
				continue
			}
			reason := record.OK
			if fl := (*Failure)(nil); errors.As(err, &fl) {
				reason = fl.Reason
			}
			if reason != want.reason {
				t.Fatalf("completions=%v %q: reason %v (%v), reference %v", p.completions, data, reason, err, want.reason)
			}
			if reason != record.OK {
				continue
			}
			if info != want.info {
				t.Fatalf("completions=%v %q: Info %+v, reference %+v", p.completions, data, info, want.info)
			}
			if u := p.Usage(); u != want.usage {
				t.Fatalf("completions=%v %q: Usage %+v, reference %+v", p.completions, data, u, want.usage)
			}
			if fr := p.FinishReason(); fr != want.finish {
				t.Fatalf("completions=%v %q: FinishReason %q, reference %q", p.completions, data, fr, want.finish)
			}
		}
	})
}

// FuzzErrorDetail checks that ErrorDetail never panics and always returns
// one clipped line of valid UTF-8.
func FuzzErrorDetail(f *testing.F) {
	for _, s := range []string{
		`{"error":{"message":"x","code":1}}`, `{"error":"x"}`, `{"message":"m"}`, `{"detail":[{"msg":"m"}]}`,
		"<html>", "", `{"error":{"message":"\ud800"}}`, "\xff\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := errorDetail(body)
		if !utf8.ValidString(got) {
			t.Fatalf("not UTF-8: %q", got)
		}
		if len(got) > maxDetail+len("…") {
			t.Fatalf("%d bytes: %q", len(got), got)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("control character in %q", got)
			}
		}
		if len(bytes.Trim(body, " \t\r\n")) > 0 && got == "" && !allSpaceOrControl(body) {
			t.Fatalf("empty detail for %q", body)
		}
	})
}

// allSpaceOrControl reports whether clip would reduce b to nothing.
func allSpaceOrControl(b []byte) bool {
	return clip(b, maxDetail) == ""
}
