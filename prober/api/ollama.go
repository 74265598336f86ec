// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"github.com/llmslo/llm_slo_exporter/prober/jsonscan"
)

func init() { register(ollama{}) }

// ollama speaks Ollama's native POST /api/chat: NDJSON, one JSON object
// per line, the last with "done": true and the counts. Lines of
// /api/generate (text in "response") are read as well.
type ollama struct{}

// Name implements Adapter.
func (ollama) Name() string { return "ollama" }

// Body implements Adapter: {"model", "messages", "stream": true,
// "options": {"num_predict"}}. Ollama has no ignore_eos or minimum
// length (its options have neither, and unknown options are dropped with
// a warning), so IgnoreEOS sends nothing: num_predict caps the output,
// EOS can still end it early. A thinking model streams its reasoning in
// message.thinking only when the request sets "think": true (through
// extra_body); otherwise Ollama decides.
func (ollama) Body(spec Spec) ([]byte, error) {
	m := map[string]any{
		"messages": []map[string]string{{"role": "user", "content": spec.Prompt}},
		"stream":   true,
	}
	if spec.Model != "" {
		m["model"] = spec.Model
	}
	if spec.MaxTokens > 0 {
		m["options"] = map[string]any{"num_predict": spec.MaxTokens}
	}
	return buildBody(spec, m)
}

// Headers implements Adapter.
func (ollama) Headers() map[string]string { return nil }

// Framing implements Adapter.
func (ollama) Framing() Framing { return NDJSON }

// NewParser implements Adapter.
func (ollama) NewParser() Parser {
	p := &ollamaParser{}
	p.Reset()
	return p
}

// ErrorDetail implements Adapter: Ollama's error body is {"error": "..."}.
func (ollama) ErrorDetail(body []byte) string { return errorDetail(body) }

// ollamaParser reads an /api/chat (or /api/generate) stream.
type ollamaParser struct {
	usage  Usage
	finish finishBuf
}

// Reset implements Parser.
func (p *ollamaParser) Reset() {
	p.usage = NoUsage
	p.finish.reset()
}

// Usage implements Parser: eval_count and prompt_eval_count of the done
// line. Ollama omits a count that is zero (omitempty), and a missing
// count is unknown.
func (p *ollamaParser) Usage() Usage { return p.usage }

// FinishReason implements FinishReasoner: done_reason (stop, length, ...).
func (p *ollamaParser) FinishReason() string { return p.finish.String() }

var (
	ollamaTop     = []string{"message", "response", "thinking", "done", "done_reason", "eval_count", "prompt_eval_count", "error"}
	ollamaMessage = []string{"content", "thinking", "tool_calls"}
)

const (
	oMessage = iota
	oResponse
	oThinking
	oDone
	oDoneReason
	oEvalCount
	oPromptEvalCount
	oError
	numOllamaTop
)

// Event implements Parser; typ is always nil for NDJSON.
//
//   - A line with non-empty message.content or message.tool_calls (or
//     response, for /api/generate) is answer output; one with non-empty
//     message.thinking (or thinking) is reasoning output.
//   - "done": true is the end marker; that line can carry the last
//     content too.
//   - A line with a non-null error member is a stream_error: Ollama sends
//     {"error": "..."} mid-stream and keeps the status.
func (p *ollamaParser) Event(typ, data []byte) (Info, error) {
	var v [numOllamaTop]jsonscan.Value
	if info, handled, err := readTop(typ, data, false, ollamaTop, v[:]); handled {
		return info, err
	}
	if isError(v[oError]) {
		return Info{}, streamFailure(v[oError], "error line")
	}
	var msg [3]jsonscan.Value
	members(v[oMessage], ollamaMessage, msg[:])
	var info Info
	info.Answer = nonEmptyString(msg[0]) || nonEmptyArray(msg[2]) || nonEmptyString(v[oResponse])
	info.Output = info.Answer || nonEmptyString(msg[1]) || nonEmptyString(v[oThinking])
	if isTrue(v[oDone]) {
		info.Done = true
		p.finish.set(v[oDoneReason])
		if n := count(v[oEvalCount]); n >= 0 {
			p.usage.CompletionTokens = n
		}
		if n := count(v[oPromptEvalCount]); n >= 0 {
			p.usage.PromptTokens = n
		}
	}
	return info, nil
}
