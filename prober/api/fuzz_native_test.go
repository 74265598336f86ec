// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmslo/llm_slo_exporter/prober/jsonscan"
	"github.com/llmslo/llm_slo_exporter/prober/ndjson"
	"github.com/llmslo/llm_slo_exporter/prober/sse"
	"github.com/llmslo/llm_slo_exporter/record"
)

// One fuzz target per parser of the APIs other than OpenAI's. Each runs
// one event (its SSE type and data) through a fresh parser and checks it
// against a reference decode with encoding/json into map[string]any that
// follows the parser's documentation: never a panic, the same Info,
// failure reason, usage and finish reason. The seeds are the unit cases
// and every event of the golden corpus (testdata/streams) of that API.

// refEvent is what the reference says one event on a fresh parser gives.
type refEvent struct {
	info   Info
	reason record.Reason
	usage  Usage
	finish string
}

// refObject decodes data as one JSON object. ok is false when the
// reference cannot judge: valid JSON that jsonscan rejects as too deep.
// A nil map with ok means the data is not a JSON object (a Decode
// failure).
func refObject(d []byte) (m map[string]any, ok bool) {
	if !json.Valid(d) {
		return nil, true
	}
	if _, err := jsonscan.Parse(d); errors.Is(err, jsonscan.ErrTooDeep) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(d))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	m, _ = v.(map[string]any)
	return m, true
}

// refIsError mirrors isError: an error member reports an error unless
// it is absent, null or a JSON zero value.
func refIsError(v any, present bool) bool {
	if !present {
		return false
	}
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	}
	return refNonEmpty(v)
}

func refStr(v any) (string, bool) { s, ok := v.(string); return s, ok }

func refNonEmptyStr(v any) bool { s, _ := v.(string); return s != "" }

func refObj(v any) map[string]any { m, _ := v.(map[string]any); return m }

// refSatAdd mirrors satAdd.
func refSatAdd(a, b int) int {
	if b > math.MaxInt-a {
		return math.MaxInt
	}
	return a + b
}

// refObserve mirrors tokenCounter.observe on a fresh counter.
func refObserve(cum int, output bool) int {
	if cum < 0 || !output || cum > maxTokensPerEvent {
		return 0
	}
	return cum
}

func refAnthropic(typ, data []byte) (r refEvent, ok bool) {
	r.usage = NoUsage
	if string(typ) == "error" {
		r.reason = record.StreamError
		return r, true
	}
	d := bytes.Trim(data, " \t\r\n")
	if len(d) == 0 {
		return r, true
	}
	if d[0] != '{' {
		r.reason = record.Decode
		return r, true
	}
	m, ok := refObject(d)
	if !ok {
		return r, false
	}
	if m == nil {
		r.reason = record.Decode
		return r, true
	}
	kind, isStr := refStr(m["type"])
	if _, present := m["type"]; (!present || !isStr) && typ != nil {
		kind = string(typ)
	} else if !isStr {
		kind = ""
	}
	errV, present := m["error"]
	if kind == "error" || refIsError(errV, present) {
		r.reason = record.StreamError
		return r, true
	}
	readUsage := func(u map[string]any) {
		if n := refCount(u["output_tokens"]); n >= 0 {
			r.usage.CompletionTokens = n
		}
		if in := refCount(u["input_tokens"]); in >= 0 {
			for _, k := range []string{"cache_creation_input_tokens", "cache_read_input_tokens"} {
				if n := refCount(u[k]); n > 0 {
					in = refSatAdd(in, n)
				}
			}
			r.usage.PromptTokens = in
		}
	}
	switch kind {
	case "message_start":
		readUsage(refObj(refObj(m["message"])["usage"]))
	case "content_block_delta":
		delta := refObj(m["delta"])
		switch delta["type"] {
		case "text_delta":
			r.info.Output = refNonEmptyStr(delta["text"])
			r.info.Answer = r.info.Output
		case "input_json_delta":
			r.info.Output = refNonEmptyStr(delta["partial_json"])
			r.info.Answer = r.info.Output
		case "thinking_delta":
			r.info.Output = refNonEmptyStr(delta["thinking"])
		}
	case "message_delta":
		r.finish, _ = refStr(refObj(m["delta"])["stop_reason"])
		readUsage(refObj(m["usage"]))
	case "message_stop":
		r.info.Done = true
	}
	return r, true
}

// refJSONEvent is the common start of the other references: an event
// named error is a StreamError, blank data is nothing, [DONE] is the end
// when done is set, anything but a JSON object is a Decode failure, and a
// non-null error member is a StreamError. It returns the object when the event goes on.
func refJSONEvent(typ, data []byte, done bool, r *refEvent) (m map[string]any, goOn, ok bool) {
	if string(typ) == "error" {
		r.reason = record.StreamError
		return nil, false, true
	}
	d := bytes.Trim(data, " \t\r\n")
	if len(d) == 0 {
		return nil, false, true
	}
	if done && string(d) == "[DONE]" {
		r.info.Done = true
		return nil, false, true
	}
	if d[0] != '{' {
		r.reason = record.Decode
		return nil, false, true
	}
	m, ok = refObject(d)
	if !ok {
		return nil, false, false
	}
	if m == nil {
		r.reason = record.Decode
		return nil, false, true
	}
	errV, present := m["error"]
	if refIsError(errV, present) {
		r.reason = record.StreamError
		return nil, false, true
	}
	return m, true, true
}

func refTGI(typ, data []byte) (r refEvent, ok bool) {
	r.usage = NoUsage
	m, goOn, ok := refJSONEvent(typ, data, false, &r)
	if !goOn {
		return r, ok
	}
	if tok, isObj := m["token"].(map[string]any); isObj {
		r.info.Output = tok["special"] != true
		r.info.Answer = r.info.Output
		if r.info.Output {
			r.info.Tokens = 1
		}
	}
	if _, isStr := m["generated_text"].(string); isStr {
		r.info.Done = true
	}
	if det, isObj := m["details"].(map[string]any); isObj {
		if n := refCount(det["generated_tokens"]); n >= 0 {
			r.usage.CompletionTokens = n
		}
		if n := refCount(det["input_length"]); n >= 0 {
			r.usage.PromptTokens = n
		}
		r.finish, _ = refStr(det["finish_reason"])
	}
	return r, true
}

func refTriton(typ, data []byte) (r refEvent, ok bool) {
	r.usage = NoUsage
	m, goOn, ok := refJSONEvent(typ, data, false, &r)
	if !goOn {
		return r, ok
	}
	switch t := m["text_output"].(type) {
	case string:
		r.info.Output = t != ""
	case []any:
		for _, e := range t {
			r.info.Output = r.info.Output || refNonEmptyStr(e)
		}
	}
	r.info.Answer = r.info.Output
	first := func(v any) any {
		if a, isArr := v.([]any); isArr {
			if len(a) == 0 {
				return nil
			}
			return a[0]
		}
		return v
	}
	if n := refCount(first(m["num_output_tokens"])); n >= 0 {
		r.usage.CompletionTokens = n
		if r.info.Output && n <= maxTokensPerEvent {
			r.info.Tokens = n
		}
	}
	if n := refCount(first(m["num_input_tokens"])); n >= 0 {
		r.usage.PromptTokens = n
	}
	r.finish, _ = refStr(first(m["finish_reason"]))
	return r, true
}

func refLlamaCpp(typ, data []byte) (r refEvent, ok bool) {
	r.usage = NoUsage
	m, goOn, ok := refJSONEvent(typ, data, true, &r)
	if !goOn {
		return r, ok
	}
	r.info.Output = refNonEmptyStr(m["content"])
	r.info.Answer = r.info.Output
	predicted := refCount(m["tokens_predicted"])
	r.info.Tokens = refObserve(predicted, r.info.Output)
	if toks, isArr := m["tokens"].([]any); predicted < 0 && r.info.Output && isArr {
		r.info.Tokens = min(len(toks), maxTokensPerEvent)
	}
	tm := refObj(m["timings"])
	if n := refCount(tm["predicted_n"]); n >= 0 {
		r.usage.CompletionTokens = n
	} else if predicted >= 0 {
		r.usage.CompletionTokens = predicted
	}
	if n := refCount(m["tokens_evaluated"]); n >= 0 {
		r.usage.PromptTokens = n
	} else if n := refCount(tm["prompt_n"]); n >= 0 {
		r.usage.PromptTokens = refSatAdd(n, max(refCount(tm["cache_n"]), 0))
	}
	if m["stop"] == true {
		r.info.Done = true
		r.finish, _ = refStr(m["stop_type"])
	}
	return r, true
}

func refOllama(_, data []byte) (r refEvent, ok bool) {
	r.usage = NoUsage
	m, goOn, ok := refJSONEvent(nil, data, false, &r)
	if !goOn {
		return r, ok
	}
	msg := refObj(m["message"])
	calls, _ := msg["tool_calls"].([]any)
	r.info.Answer = refNonEmptyStr(msg["content"]) || len(calls) > 0 || refNonEmptyStr(m["response"])
	r.info.Output = r.info.Answer || refNonEmptyStr(msg["thinking"]) || refNonEmptyStr(m["thinking"])
	if m["done"] == true {
		r.info.Done = true
		r.finish, _ = refStr(m["done_reason"])
		if n := refCount(m["eval_count"]); n >= 0 {
			r.usage.CompletionTokens = n
		}
		if n := refCount(m["prompt_eval_count"]); n >= 0 {
			r.usage.PromptTokens = n
		}
	}
	return r, true
}

func refSGLang(typ, data []byte) (r refEvent, ok bool) {
	r.usage = NoUsage
	m, goOn, ok := refJSONEvent(typ, data, true, &r)
	if !goOn {
		return r, ok
	}
	meta := refObj(m["meta_info"])
	switch f := meta["finish_reason"].(type) {
	case string:
		r.finish = f
	case map[string]any:
		r.finish, _ = refStr(f["type"])
		if r.finish == "abort" {
			r.reason = record.StreamError
			return r, true
		}
	}
	r.info.Output = refNonEmptyStr(m["text"])
	r.info.Answer = r.info.Output
	completion := refCount(meta["completion_tokens"])
	r.info.Tokens = refObserve(completion, r.info.Output)
	if completion >= 0 {
		r.usage.CompletionTokens = completion
	}
	if n := refCount(meta["prompt_tokens"]); n >= 0 {
		r.usage.PromptTokens = n
	}
	return r, true
}

// corpusSeeds returns the (type, data) of every event of the golden
// corpus's streams of api.
func corpusSeeds(tb testing.TB, api string) [][2][]byte {
	tb.Helper()
	a, _ := Lookup(api)
	exps, _ := filepath.Glob("../../testdata/streams/*.expected")
	var out [][2][]byte
	for _, e := range exps {
		raw, err := os.ReadFile(e)
		if err != nil {
			tb.Fatal(err)
		}
		var exp struct {
			API string `json:"api"`
		}
		if json.Unmarshal(raw, &exp) != nil || exp.API != api {
			continue
		}
		base := strings.TrimSuffix(e, ".expected")
		for _, ext := range []string{".sse", ".ndjson"} {
			body, err := os.ReadFile(base + ext)
			if err != nil {
				continue
			}
			var rd interface {
				Next() (*sse.Event, error)
			}
			if a.Framing() == NDJSON {
				rd = ndjson.NewReader(bytes.NewReader(body), 0)
			} else {
				rd = sse.NewReader(bytes.NewReader(body), sse.Options{})
			}
			for {
				ev, err := rd.Next()
				if err != nil {
					if !errors.Is(err, io.EOF) && !errors.Is(err, sse.ErrEventTooLarge) {
						tb.Fatalf("%s: %v", base, err)
					}
					break
				}
				out = append(out, [2][]byte{bytes.Clone(ev.Type), bytes.Clone(ev.Data)})
			}
		}
	}
	return out
}

// fuzzParser is the body of every parser fuzz target.
func fuzzParser(f *testing.F, api string, cases []eventCase, ref func(typ, data []byte) (refEvent, bool)) {
	for _, tc := range cases {
		f.Add([]byte(tc.typ), []byte(tc.data))
	}
	for _, s := range corpusSeeds(f, api) {
		f.Add(s[0], s[1])
	}
	p := mustLookup(f, api).NewParser()
	f.Fuzz(func(t *testing.T, typ, data []byte) {
		if len(typ) == 0 {
			typ = nil // an event without an event: line
		}
		want, ok := ref(typ, data)
		for run := range 2 {
			// The second run checks that Reset leaves no state behind.
			p.Reset()
			info, err := p.Event(typ, data)
			reason := record.OK
			if err != nil {
				var fl *Failure
				if !errors.As(err, &fl) {
					t.Fatalf("error %T is not a *Failure", err)
				}
				if fl.Reason != record.Decode && fl.Reason != record.StreamError {
					t.Fatalf("reason %v", fl.Reason)
				}
				if fl.Detail == "" || !utf8.ValidString(fl.Detail) || len(fl.Detail) > maxDetail+len("malformed JSON in event data: ")+200 {
					t.Fatalf("detail %q", fl.Detail)
				}
				if info != (Info{}) {
					t.Fatalf("Info %+v with an error", info)
				}
				reason = fl.Reason
			}
			if info.Tokens < 0 || info.Tokens > maxTokensPerEvent || (info.Tokens > 0 && !info.Output) || (info.Answer && !info.Output) {
				t.Fatalf("inconsistent Info %+v", info)
			}
			if u := p.Usage(); u.CompletionTokens < -1 || u.PromptTokens < -1 {
				t.Fatalf("Usage %+v", u)
			}
			if !ok {
				continue
			}
			if reason != want.reason {
				t.Fatalf("run %d, type %q, data %q: reason %v (%v), reference %v", run, typ, data, reason, err, want.reason)
			}
			if reason != record.OK {
				continue
			}
			if info != want.info {
				t.Fatalf("run %d, type %q, data %q: Info %+v, reference %+v", run, typ, data, info, want.info)
			}
			if u := p.Usage(); u != want.usage {
				t.Fatalf("run %d, type %q, data %q: Usage %+v, reference %+v", run, typ, data, u, want.usage)
			}
			if fr := p.(FinishReasoner).FinishReason(); fr != strings.ToValidUTF8(want.finish, "\uFFFD") {
				t.Fatalf("run %d, type %q, data %q: FinishReason %q, reference %q", run, typ, data, fr, want.finish)
			}
		}
	})
}

func FuzzAnthropicParser(f *testing.F) { fuzzParser(f, "anthropic", anthropicCases, refAnthropic) }
func FuzzTGIParser(f *testing.F)       { fuzzParser(f, "tgi", tgiCases, refTGI) }
func FuzzTritonParser(f *testing.F)    { fuzzParser(f, "triton", tritonCases, refTriton) }
func FuzzLlamaCppParser(f *testing.F)  { fuzzParser(f, "llamacpp", llamaCases, refLlamaCpp) }
func FuzzOllamaParser(f *testing.F)    { fuzzParser(f, "ollama", ollamaCases, refOllama) }
func FuzzSGLangParser(f *testing.F)    { fuzzParser(f, "sglang", sglangCases, refSGLang) }
