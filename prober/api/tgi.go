// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"github.com/llmslo/llm_slo_exporter/prober/jsonscan"
)

func init() { register(tgi{}) }

// tgi speaks Hugging Face text-generation-inference's native
// POST /generate_stream: one SSE event per generated token, `data:`
// without a space (axum), no [DONE]; the last event carries the full
// generated_text and, when asked for, the details with the token count.
type tgi struct{}

// Name implements Adapter.
func (tgi) Name() string { return "tgi" }

// Body implements Adapter: {"inputs", "parameters": {"max_new_tokens",
// "details": true}}. details gives generated_tokens in the last event.
// TGI serves one model and has no model field, so the model is only the
// label. TGI has no ignore_eos or minimum length, so IgnoreEOS sends
// nothing: max_new_tokens caps the output, EOS can still end it early.
func (tgi) Body(spec Spec) ([]byte, error) {
	params := map[string]any{"details": true}
	if spec.MaxTokens > 0 {
		params["max_new_tokens"] = spec.MaxTokens
	}
	return buildBody(spec, map[string]any{"inputs": spec.Prompt, "parameters": params})
}

// Headers implements Adapter.
func (tgi) Headers() map[string]string { return nil }

// Framing implements Adapter.
func (tgi) Framing() Framing { return SSE }

// NewParser implements Adapter.
func (tgi) NewParser() Parser {
	p := &tgiParser{}
	p.Reset()
	return p
}

// ErrorDetail implements Adapter: TGI's error body is
// {"error": "...", "error_type": "..."}.
func (tgi) ErrorDetail(body []byte) string { return errorDetail(body) }

// tgiParser reads a /generate_stream stream.
type tgiParser struct {
	usage  Usage
	finish finishBuf
}

// Reset implements Parser.
func (p *tgiParser) Reset() {
	p.usage = NoUsage
	p.finish.reset()
}

// Usage implements Parser: details.generated_tokens and
// details.input_length of the last event. TGI counts every generated
// token, the EOS token that ends a generation included.
func (p *tgiParser) Usage() Usage { return p.usage }

// FinishReason implements FinishReasoner: details.finish_reason (length,
// eos_token, stop_sequence).
func (p *tgiParser) FinishReason() string { return p.finish.String() }

var (
	tgiTop     = []string{"token", "generated_text", "details", "error"}
	tgiToken   = []string{"special"}
	tgiDetails = []string{"generated_tokens", "input_length", "finish_reason"}
)

const (
	tToken = iota
	tGeneratedText
	tDetails
	tError
	numTGITop
)

// Event implements Parser.
//
//   - An event whose token is not special is output (answer): TGI sends
//     one event per generated token, so even a token with empty text (a
//     piece of a multi-byte character) is a token the server generated.
//     A special token (EOS, control tokens) is not output: TGI's own
//     clients skip it when they join the text.
//   - An event with a non-null generated_text is the last one: the end
//     marker. Its details give the token counts and the finish reason.
//   - A non-null error member is a stream_error (error_type is not read).
func (p *tgiParser) Event(typ, data []byte) (Info, error) {
	var v [numTGITop]jsonscan.Value
	if info, handled, err := readTop(typ, data, false, tgiTop, v[:]); handled {
		return info, err
	}
	if isError(v[tError]) {
		return Info{}, streamFailure(v[tError], "error event")
	}
	var info Info
	if v[tToken].Kind == jsonscan.Object {
		var tok [1]jsonscan.Value
		members(v[tToken], tgiToken, tok[:])
		info.Output = !isTrue(tok[0])
		info.Answer = info.Output
		if info.Output {
			info.Tokens = 1
		}
	}
	if v[tGeneratedText].Kind == jsonscan.String {
		info.Done = true
	}
	if v[tDetails].Kind == jsonscan.Object {
		var det [3]jsonscan.Value
		members(v[tDetails], tgiDetails, det[:])
		if n := count(det[0]); n >= 0 {
			p.usage.CompletionTokens = n
		}
		if n := count(det[1]); n >= 0 {
			p.usage.PromptTokens = n
		}
		p.finish.set(det[2])
	}
	return info, nil
}
