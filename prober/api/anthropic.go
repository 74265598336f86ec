// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"github.com/llmslo/llm_slo_exporter/prober/jsonscan"
)

func init() { register(anthropic{}) }

// anthropicVersion is the API version every Anthropic SDK sends.
const anthropicVersion = "2023-06-01"

// anthropic speaks Anthropic's POST /v1/messages with stream: true: SSE
// events named by `event:`, each carrying the same `type` in its data.
type anthropic struct{}

// Name implements Adapter.
func (anthropic) Name() string { return "anthropic" }

// Body implements Adapter: one user message. Anthropic requires
// max_tokens; with max_tokens 0 the key is left out and the server
// answers 400, which the probe reports as http_4xx. The API has no way to
// force a length (no ignore_eos or min_tokens), so IgnoreEOS sends
// nothing: Anthropic rejects unknown parameters.
func (anthropic) Body(spec Spec) ([]byte, error) {
	m := map[string]any{
		"messages": []map[string]string{{"role": "user", "content": spec.Prompt}},
		"stream":   true,
	}
	if spec.Model != "" {
		m["model"] = spec.Model
	}
	if spec.MaxTokens > 0 {
		m["max_tokens"] = spec.MaxTokens
	}
	return buildBody(spec, m)
}

// Headers implements Adapter: the API version. The key travels in the
// user's configuration (request.headers x-api-key, or http_client_config
// http_headers with a secret or a file).
func (anthropic) Headers() map[string]string {
	return map[string]string{"anthropic-version": anthropicVersion}
}

// Framing implements Adapter.
func (anthropic) Framing() Framing { return SSE }

// NewParser implements Adapter.
func (anthropic) NewParser() Parser {
	p := &anthropicParser{}
	p.Reset()
	return p
}

// ErrorDetail implements Adapter: Anthropic's error body is
// {"type":"error","error":{"type":..,"message":..}}.
func (anthropic) ErrorDetail(body []byte) string { return errorDetail(body) }

// anthropicParser reads a Messages stream.
type anthropicParser struct {
	usage Usage
	stop  finishBuf
}

// Reset implements Parser.
func (p *anthropicParser) Reset() {
	p.usage = NoUsage
	p.stop.reset()
}

// Usage implements Parser: output_tokens of the last message_delta (the
// count is cumulative), or of message_start before any; the prompt
// tokens are input_tokens plus the cache creation and cache read input
// tokens, which Anthropic reports apart.
func (p *anthropicParser) Usage() Usage { return p.usage }

// FinishReason implements FinishReasoner: message_delta's stop_reason
// (end_turn, max_tokens, stop_sequence, tool_use, ...).
func (p *anthropicParser) FinishReason() string { return p.stop.String() }

// The event types of a Messages stream that the parser acts on.
var anthropicTypes = []string{"message_start", "content_block_delta", "message_delta", "message_stop", "error"}

const (
	atMessageStart = iota
	atContentBlockDelta
	atMessageDelta
	atMessageStop
	atError
)

// Member names, per level.
var (
	anthropicTop = []string{"type", "message", "delta", "usage", "error"}
	// The message of message_start and the delta of content_block_delta
	// and message_delta share one list.
	anthropicInner = []string{"usage", "type", "text", "thinking", "partial_json", "stop_reason"}
	anthropicUsage = []string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}
)

const (
	aType = iota
	aMessage
	aDelta
	aUsage
	aError
	numAnthropicTop
)

const (
	aiUsage = iota
	aiType
	aiText
	aiThinking
	aiPartialJSON
	aiStopReason
	numAnthropicInner
)

// The delta types of content_block_delta that carry output.
var anthropicDeltas = []string{"text_delta", "input_json_delta", "thinking_delta"}

const (
	adText = iota
	adInputJSON
	adThinking
)

// Event implements Parser. The event's type is the `type` member of its
// data, or its SSE event name when the data has none.
//
//   - message_start: usage (input and cache tokens, an initial
//     output_tokens);
//   - content_block_delta: output when its delta is a text_delta with
//     non-empty text or an input_json_delta with non-empty partial_json
//     (both answer), or a thinking_delta with non-empty thinking
//     (reasoning); signature_delta and citations_delta are not output;
//   - message_delta: stop_reason and the cumulative output_tokens;
//   - message_stop: the end marker;
//   - an event named error (whatever its data), an event of type error
//     or a non-null error member in any event: stream_error, with the
//     error's message;
//   - ping, content_block_start, content_block_stop and unknown types are
//     ignored, as Anthropic asks clients to do.
func (p *anthropicParser) Event(typ, data []byte) (Info, error) {
	var v [numAnthropicTop]jsonscan.Value
	if info, handled, err := readTop(typ, data, false, anthropicTop, v[:]); handled {
		return info, err
	}
	kind := -1
	if v[aType].Kind == jsonscan.String {
		kind = matchString(v[aType], anthropicTypes)
	} else if typ != nil {
		kind = matchBytes(typ, anthropicTypes)
	}
	if kind == atError || isError(v[aError]) {
		return Info{}, streamFailure(v[aError], "error event")
	}
	var info Info
	var in [numAnthropicInner]jsonscan.Value
	switch kind {
	case atMessageStart:
		members(v[aMessage], anthropicInner, in[:])
		p.readUsage(in[aiUsage])
	case atContentBlockDelta:
		members(v[aDelta], anthropicInner, in[:])
		switch matchString(in[aiType], anthropicDeltas) {
		case adText:
			info.Output = nonEmptyString(in[aiText])
			info.Answer = info.Output
		case adInputJSON:
			info.Output = nonEmptyString(in[aiPartialJSON])
			info.Answer = info.Output
		case adThinking:
			info.Output = nonEmptyString(in[aiThinking])
		}
	case atMessageDelta:
		members(v[aDelta], anthropicInner, in[:])
		p.stop.set(in[aiStopReason])
		p.readUsage(v[aUsage])
	case atMessageStop:
		info.Done = true
	}
	return info, nil
}

// readUsage records a usage object: output_tokens as the completion count,
// and the sum of the input counts present as the prompt count.
func (p *anthropicParser) readUsage(u jsonscan.Value) {
	var c [4]jsonscan.Value
	members(u, anthropicUsage, c[:])
	if n := count(c[1]); n >= 0 {
		p.usage.CompletionTokens = n
	}
	if in := count(c[0]); in >= 0 {
		for _, x := range c[2:] {
			if n := count(x); n > 0 {
				in = satAdd(in, n)
			}
		}
		p.usage.PromptTokens = in
	}
}
