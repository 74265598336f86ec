// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"github.com/llmslo/llm_slo_exporter/prober/jsonscan"
)

func init() { register(llamaCpp{}) }

// llamaCpp speaks llama.cpp's native POST /completion with stream: true
// (llama-server): SSE events {"content", "tokens", "stop": false,
// "tokens_predicted", ...}, then a last event with "stop": true, the
// counts and the timings. There is no [DONE] on this endpoint.
type llamaCpp struct{}

// Name implements Adapter.
func (llamaCpp) Name() string { return "llamacpp" }

// Body implements Adapter: {"prompt", "n_predict", "stream": true}, plus
// "ignore_eos": true when set (llama.cpp honours it), and the model when
// set (a single-model server ignores it; router mode routes by it).
// Without max_tokens, n_predict is left to the server, whose default is
// unlimited (-1): with ignore_eos that generation only ends at the
// context size or the probe's timeout.
func (llamaCpp) Body(spec Spec) ([]byte, error) {
	m := map[string]any{"prompt": spec.Prompt, "stream": true}
	if spec.Model != "" {
		m["model"] = spec.Model
	}
	if spec.MaxTokens > 0 {
		m["n_predict"] = spec.MaxTokens
	}
	if spec.IgnoreEOS {
		m["ignore_eos"] = true
	}
	return buildBody(spec, m)
}

// Headers implements Adapter.
func (llamaCpp) Headers() map[string]string { return nil }

// Framing implements Adapter.
func (llamaCpp) Framing() Framing { return SSE }

// NewParser implements Adapter.
func (llamaCpp) NewParser() Parser {
	p := &llamaCppParser{}
	p.Reset()
	return p
}

// ErrorDetail implements Adapter: llama.cpp's error body is
// {"error": {"code", "message", "type"}}.
func (llamaCpp) ErrorDetail(body []byte) string { return errorDetail(body) }

// llamaCppParser reads a /completion stream.
type llamaCppParser struct {
	usage  Usage
	tokens tokenCounter
	finish finishBuf
}

// Reset implements Parser.
func (p *llamaCppParser) Reset() {
	p.usage = NoUsage
	p.tokens.reset()
	p.finish.reset()
}

// Usage implements Parser: timings.predicted_n of the last event, or
// tokens_predicted (the same count, also on every partial event); the
// prompt is tokens_evaluated, or timings.prompt_n plus timings.cache_n.
func (p *llamaCppParser) Usage() Usage { return p.usage }

// FinishReason implements FinishReasoner: stop_type (eos, limit, word).
func (p *llamaCppParser) FinishReason() string { return p.finish.String() }

var (
	llamaTop = []string{"content", "tokens", "stop", "stop_type", "tokens_predicted", "tokens_evaluated", "timings", "error"}
	// llamaTimings are the members of timings the parser reads.
	llamaTimings = []string{"predicted_n", "prompt_n", "cache_n"}
)

const (
	lContent = iota
	lTokens
	lStop
	lStopType
	lTokensPredicted
	lTokensEvaluated
	lTimings
	lError
	numLlamaTop
)

// Event implements Parser.
//
//   - An event with non-empty content is output (answer). llama.cpp holds
//     back partial UTF-8 characters, so every token shows up in some
//     event's content; an event with progress only (return_progress) is
//     not output.
//   - tokens_predicted is the cumulative count on every event: its
//     increase since the previous event is the event's token count (more
//     than one when llama.cpp held tokens back). Without it, the length
//     of the tokens array is.
//   - "stop": true is the end marker, with the final counts; a [DONE]
//     (not sent on this endpoint) is accepted as one too.
//   - A non-null error member is a stream_error. Older servers sent a
//     non-standard `error:` SSE field instead, which the stream loop
//     reports.
func (p *llamaCppParser) Event(typ, data []byte) (Info, error) {
	var v [numLlamaTop]jsonscan.Value
	if info, handled, err := readTop(typ, data, true, llamaTop, v[:]); handled {
		return info, err
	}
	if isError(v[lError]) {
		return Info{}, streamFailure(v[lError], "error event")
	}
	var info Info
	info.Output = nonEmptyString(v[lContent])
	info.Answer = info.Output
	predicted := count(v[lTokensPredicted])
	info.Tokens = p.tokens.observe(predicted, info.Output)
	if predicted < 0 && info.Output && v[lTokens].Kind == jsonscan.Array {
		n := 0
		it := v[lTokens].Elements()
		for it.Next() && n < maxTokensPerEvent {
			n++
		}
		info.Tokens = n
	}
	var tm [3]jsonscan.Value
	members(v[lTimings], llamaTimings, tm[:])
	if n := count(tm[0]); n >= 0 {
		p.usage.CompletionTokens = n
	} else if predicted >= 0 {
		p.usage.CompletionTokens = predicted
	}
	if n := count(v[lTokensEvaluated]); n >= 0 {
		p.usage.PromptTokens = n
	} else if n := count(tm[1]); n >= 0 {
		p.usage.PromptTokens = satAdd(n, max(count(tm[2]), 0))
	}
	if isTrue(v[lStop]) {
		info.Done = true
		p.finish.set(v[lStopType])
	}
	return info, nil
}
