// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"github.com/llmslo/llm_slo_exporter/prober/jsonscan"
)

func init() { register(triton{}) }

// triton speaks the generate extension of NVIDIA Triton Inference Server,
// POST /v2/models/<model>/generate_stream, as served by the TensorRT-LLM
// backend (ensemble or tensorrt_llm_bls) and the vLLM backend: one SSE
// event per response of the decoupled model, each with its text in
// text_output, and no end marker: the stream just ends.
type triton struct{}

// Name implements Adapter.
func (triton) Name() string { return "triton" }

// Body implements Adapter: {"text_input", "max_tokens", "stream": true},
// the inputs of the TensorRT-LLM ensemble. The model is in the URL path,
// so the model name is only the label; Triton rejects inputs the model
// does not have, so nothing else is sent. IgnoreEOS adds
// "min_length": max_tokens, the TensorRT-LLM input that suppresses EOS
// until that many tokens were generated (TensorRT-LLM has no ignore_eos;
// SGLang's benchmark does the same). The vLLM backend takes neither
// max_tokens nor min_length: set max_tokens to 0 and pass
// "sampling_parameters" through extra_body (see docs/apis.md).
func (triton) Body(spec Spec) ([]byte, error) {
	m := map[string]any{"text_input": spec.Prompt, "stream": true}
	if spec.MaxTokens > 0 {
		m["max_tokens"] = spec.MaxTokens
		if spec.IgnoreEOS {
			m["min_length"] = spec.MaxTokens
		}
	}
	return buildBody(spec, m)
}

// Headers implements Adapter.
func (triton) Headers() map[string]string { return nil }

// Framing implements Adapter.
func (triton) Framing() Framing { return SSE }

// NewParser implements Adapter.
func (triton) NewParser() Parser {
	p := &tritonParser{}
	p.Reset()
	return p
}

// ErrorDetail implements Adapter: Triton's error body is {"error": "..."}.
func (triton) ErrorDetail(body []byte) string { return errorDetail(body) }

// tritonParser reads a generate_stream stream.
type tritonParser struct {
	// completion sums num_output_tokens; counted says whether any event
	// reported it.
	completion int
	counted    bool
	prompt     int
	finish     finishBuf
}

// Reset implements Parser.
func (p *tritonParser) Reset() {
	p.completion, p.counted, p.prompt = 0, false, -1
	p.finish.reset()
}

// Usage implements Parser. TensorRT-LLM reports no token counts in the
// stream, so the count is estimated. The vLLM backend reports the tokens
// of each response in num_output_tokens when the request sets
// return_num_output_tokens (and the prompt length in num_input_tokens
// with return_num_input_tokens): their sum is the count.
func (p *tritonParser) Usage() Usage {
	u := Usage{CompletionTokens: -1, PromptTokens: p.prompt}
	if p.counted {
		u.CompletionTokens = p.completion
	}
	return u
}

// FinishReason implements FinishReasoner: the vLLM backend's finish_reason
// output (with return_finish_reason); "" otherwise.
func (p *tritonParser) FinishReason() string { return p.finish.String() }

// EndsAtEOF implements EOFEnder: generate_stream has no end marker.
func (p *tritonParser) EndsAtEOF() bool { return true }

var tritonTop = []string{"text_output", "error", "num_output_tokens", "num_input_tokens", "finish_reason"}

const (
	trTextOutput = iota
	trError
	trNumOutput
	trNumInput
	trFinish
	numTritonTop
)

// Event implements Parser. An event with a non-empty text_output (a
// string, or an array holding one, as a tensor of shape [1] may be
// returned) is output (answer): the backends stream deltas by default. A
// non-null error member is a stream_error: Triton reports failures after
// the 200 as an error object in the stream.
func (p *tritonParser) Event(typ, data []byte) (Info, error) {
	var v [numTritonTop]jsonscan.Value
	if info, handled, err := readTop(typ, data, false, tritonTop, v[:]); handled {
		return info, err
	}
	if isError(v[trError]) {
		return Info{}, streamFailure(v[trError], "error event")
	}
	var info Info
	switch t := v[trTextOutput]; t.Kind {
	case jsonscan.String:
		info.Output = !t.IsEmpty()
	case jsonscan.Array:
		it := t.Elements()
		for it.Next() {
			if nonEmptyString(it.Value()) {
				info.Output = true
			}
		}
	}
	info.Answer = info.Output
	if n := countOrFirst(v[trNumOutput]); n >= 0 {
		p.counted = true
		p.completion = satAdd(p.completion, n)
		if info.Output && n <= maxTokensPerEvent {
			info.Tokens = n
		}
	}
	if n := countOrFirst(v[trNumInput]); n >= 0 {
		p.prompt = n
	}
	if f := v[trFinish]; f.Kind == jsonscan.Array {
		it := f.Elements()
		if it.Next() {
			p.finish.set(it.Value())
		}
	} else {
		p.finish.set(f)
	}
	return info, nil
}

// countOrFirst is count for a number or for the first element of an
// array (a tensor of shape [1]).
func countOrFirst(v jsonscan.Value) int {
	if v.Kind == jsonscan.Array {
		it := v.Elements()
		if it.Next() {
			return count(it.Value())
		}
		return -1
	}
	return count(v)
}
