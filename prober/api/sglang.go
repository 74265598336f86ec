// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"bytes"

	"github.com/llmslo/llm_slo_exporter/prober/jsonscan"
	"github.com/llmslo/llm_slo_exporter/record"
)

func init() { register(sglang{}) }

// sglang speaks SGLang's native POST /generate with stream: true: SSE
// events {"text", "output_ids", "meta_info": {...}} whose text is, by
// default, the whole text so far (cumulative), ended by data: [DONE].
type sglang struct{}

// Name implements Adapter.
func (sglang) Name() string { return "sglang" }

// Body implements Adapter: {"text", "sampling_params": {"max_new_tokens",
// "ignore_eos"}, "stream": true}. SGLang builds its request from the
// body's keys and rejects unknown ones, so the model (one per server) is
// only the label.
func (sglang) Body(spec Spec) ([]byte, error) {
	params := map[string]any{}
	if spec.MaxTokens > 0 {
		params["max_new_tokens"] = spec.MaxTokens
	}
	if spec.IgnoreEOS {
		params["ignore_eos"] = true
	}
	return buildBody(spec, map[string]any{"text": spec.Prompt, "sampling_params": params, "stream": true})
}

// Headers implements Adapter.
func (sglang) Headers() map[string]string { return nil }

// Framing implements Adapter.
func (sglang) Framing() Framing { return SSE }

// NewParser implements Adapter.
func (sglang) NewParser() Parser {
	p := &sglangParser{}
	p.Reset()
	return p
}

// ErrorDetail implements Adapter: SGLang's error body is
// {"object":"error","message":..} or {"error":{"message":..}}.
func (sglang) ErrorDetail(body []byte) string { return errorDetail(body) }

// maxKeptText bounds the previous text a parser keeps between streams; a
// longer one is dropped at Reset so that one long stream does not pin
// memory in the pool.
const maxKeptText = 64 << 10

// sglangParser reads a /generate stream.
type sglangParser struct {
	usage  Usage
	tokens tokenCounter
	finish finishBuf
	// prev is the raw (escaped) text of the previous event, kept while
	// the text looks cumulative.
	prev []byte
	// incremental is set once a text was not an extension of the
	// previous one: the server streams disjoint segments
	// (--incremental-streaming-output).
	incremental bool
}

// Reset implements Parser.
func (p *sglangParser) Reset() {
	p.usage = NoUsage
	p.tokens.reset()
	p.finish.reset()
	if cap(p.prev) > maxKeptText {
		p.prev = nil
	}
	p.prev = p.prev[:0]
	p.incremental = false
}

// Usage implements Parser: meta_info.completion_tokens and
// meta_info.prompt_tokens of the last event that had them.
func (p *sglangParser) Usage() Usage { return p.usage }

// FinishReason implements FinishReasoner: the type of
// meta_info.finish_reason (length, stop, abort), or the reason itself
// when it is a string.
func (p *sglangParser) FinishReason() string { return p.finish.String() }

var (
	sglangTop    = []string{"text", "meta_info", "error"}
	sglangMeta   = []string{"completion_tokens", "prompt_tokens", "finish_reason"}
	sglangFinish = []string{"type", "message"}
)

const (
	sText = iota
	sMetaInfo
	sError
	numSGLangTop
)

// Event implements Parser.
//
//   - Output (answer) is text that grew: SGLang sends the whole text so
//     far in every event, so an event whose text extends the previous
//     one by at least one character carries output, and one that repeats
//     it (the EOS token, a held-back character) does not. When a text is
//     not an extension of the previous one, the server streams disjoint
//     segments (--incremental-streaming-output), and from then on every
//     non-empty text is output.
//   - meta_info.completion_tokens is cumulative: its increase since the
//     previous report is the event's token count.
//   - data: [DONE] is the end marker.
//   - A non-null error member is a stream_error, and so is a
//     finish_reason of type abort (the server gave up on the request).
func (p *sglangParser) Event(typ, data []byte) (Info, error) {
	var v [numSGLangTop]jsonscan.Value
	if info, handled, err := readTop(typ, data, true, sglangTop, v[:]); handled {
		return info, err
	}
	if isError(v[sError]) {
		return Info{}, streamFailure(v[sError], "error event")
	}
	var meta [3]jsonscan.Value
	members(v[sMetaInfo], sglangMeta, meta[:])
	if err := p.readFinish(meta[2]); err != nil {
		return Info{}, err
	}
	var info Info
	if t := v[sText]; t.Kind == jsonscan.String {
		info.Output = p.grew(t.Raw[1 : len(t.Raw)-1])
		info.Answer = info.Output
	}
	completion := count(meta[0])
	info.Tokens = p.tokens.observe(completion, info.Output)
	if completion >= 0 {
		p.usage.CompletionTokens = completion
	}
	if n := count(meta[1]); n >= 0 {
		p.usage.PromptTokens = n
	}
	return info, nil
}

// grew reports whether the raw text t carries new output, and remembers
// it. Comparing escaped bytes is exact: a JSON encoder escapes each
// character on its own, so the escaped form of a cumulative text extends
// the escaped form of its prefix.
func (p *sglangParser) grew(t []byte) bool {
	if p.incremental {
		return len(t) > 0
	}
	switch {
	case len(t) > len(p.prev) && bytes.HasPrefix(t, p.prev):
	case bytes.Equal(t, p.prev):
		return false
	default:
		p.incremental = true
		p.prev = p.prev[:0]
		return len(t) > 0
	}
	// t extends prev: keep only what is new.
	p.prev = append(p.prev, t[len(p.prev):]...)
	return true
}

// readFinish records meta_info.finish_reason: null, a string (older
// servers), or an object whose type is length, stop or abort. An abort is
// a stream_error with the abort's message.
func (p *sglangParser) readFinish(f jsonscan.Value) error {
	switch f.Kind {
	case jsonscan.String:
		p.finish.set(f)
	case jsonscan.Object:
		var fv [2]jsonscan.Value
		members(f, sglangFinish, fv[:])
		p.finish.set(fv[0])
		if fv[0].StringEquals("abort") {
			detail := "request aborted"
			if fv[1].Kind == jsonscan.String {
				if m := clipString(fv[1]); m != "" {
					detail += ": " + m
				}
			}
			return &Failure{Reason: record.StreamError, Detail: detail}
		}
	}
	return nil
}
