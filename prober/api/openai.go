// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/llmslo/llm_slo_exporter/prober/jsonscan"
	"github.com/llmslo/llm_slo_exporter/record"
)

func init() {
	register(openAIChat{})
	register(openAICompletions{})
}

// openAIChat speaks OpenAI's POST /v1/chat/completions with stream: true,
// as served by OpenAI, vLLM, SGLang, TensorRT-LLM, llama.cpp, Ollama's /v1
// and most gateways.
type openAIChat struct{}

// Name implements Adapter.
func (openAIChat) Name() string { return "openai-chat" }

// Body implements Adapter: a single user message.
func (openAIChat) Body(spec Spec) ([]byte, error) {
	return openAIBody(spec, "messages", []map[string]string{{"role": "user", "content": spec.Prompt}})
}

// Headers implements Adapter. OpenAI-style APIs need no header beyond
// Content-Type and Accept, which the prober sets for every SSE target;
// authentication comes from the target's HTTP client configuration.
func (openAIChat) Headers() map[string]string { return nil }

// Framing implements Adapter.
func (openAIChat) Framing() Framing { return SSE }

// NewParser implements Adapter.
func (openAIChat) NewParser() Parser { return newOpenAIParser(false) }

// ErrorDetail implements Adapter.
func (openAIChat) ErrorDetail(body []byte) string { return errorDetail(body) }

// openAICompletions speaks the legacy POST /v1/completions with stream:
// true: the same stream as chat, with the output in choices[].text.
type openAICompletions struct{}

// Name implements Adapter.
func (openAICompletions) Name() string { return "openai-completions" }

// Body implements Adapter: the prompt as is.
func (openAICompletions) Body(spec Spec) ([]byte, error) {
	return openAIBody(spec, "prompt", spec.Prompt)
}

// Headers implements Adapter; see openAIChat.Headers.
func (openAICompletions) Headers() map[string]string { return nil }

// Framing implements Adapter.
func (openAICompletions) Framing() Framing { return SSE }

// NewParser implements Adapter.
func (openAICompletions) NewParser() Parser { return newOpenAIParser(true) }

// ErrorDetail implements Adapter.
func (openAICompletions) ErrorDetail(body []byte) string { return errorDetail(body) }

// openAIBody builds the request body shared by chat and completions, with
// the prompt under promptKey. Marshalling a map sorts the keys, so the body
// is deterministic.
func openAIBody(spec Spec, promptKey string, prompt any) ([]byte, error) {
	if spec.MaxTokens < 0 {
		return nil, fmt.Errorf("max_tokens is negative (%d)", spec.MaxTokens)
	}
	m := map[string]any{
		promptKey: prompt,
		"stream":  true,
		// Usage in the stream is what gives the exact output token
		// count. vLLM rejects stream_options without stream: true, so
		// the two always go together.
		"stream_options": map[string]any{"include_usage": true},
	}
	// An empty model is left out rather than sent as "": vLLM, SGLang and
	// llama.cpp then use their one served model, while "" is an unknown
	// model everywhere.
	if spec.Model != "" {
		m["model"] = spec.Model
	}
	if spec.MaxTokens > 0 {
		m["max_tokens"] = spec.MaxTokens
	}
	// Sent only on request: OpenAI rejects unknown parameters with 400.
	if spec.IgnoreEOS {
		m["ignore_eos"] = true
	}
	// ExtraBody wins, including a null value, which is sent as null (for
	// example "stop": null) rather than removing the key.
	maps.Copy(m, spec.ExtraBody)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep <, > and & in prompts readable on the wire
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encoding the request body: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// maxTokensPerEvent bounds Info.Tokens: a larger increase of the
// cumulative completion_tokens between two events is not believed (the
// prober spreads an event's gap over its tokens, so an absurd count would
// cost memory) and is reported as unknown.
const maxTokensPerEvent = 1 << 16

// openAIParser reads an OpenAI-style stream: chat chunks, or completions
// chunks when completions is set. It never decodes a chunk into Go values:
// it walks the members it needs with jsonscan, which also validates the
// whole chunk, and allocates nothing per event in steady state.
type openAIParser struct {
	completions bool

	usage Usage
	// lastCompletion is the cumulative completion_tokens of the last
	// event that reported it (0 before any: no token precedes the stream).
	lastCompletion int
	// unattributed counts the output events since then that reported no
	// usage; while it is not 0, an increase covers several events and
	// cannot be given to one.
	unattributed int
	// multi is set once a choice with an index other than 0 appears
	// (n > 1): vLLM then reports usage per choice, so increases are not
	// per event.
	multi bool
	// finish is the last non-null finish_reason, unescaped.
	finish []byte
}

func newOpenAIParser(completions bool) *openAIParser {
	p := &openAIParser{completions: completions}
	p.Reset()
	return p
}

// Reset implements Parser.
func (p *openAIParser) Reset() {
	p.usage = NoUsage
	p.lastCompletion = 0
	p.unattributed = 0
	p.multi = false
	if cap(p.finish) > 64 {
		p.finish = nil // do not keep what an odd server made grow
	}
	p.finish = p.finish[:0]
}

// Usage implements Parser: the last counts reported, each on its own (a
// usage object without prompt_tokens keeps the earlier prompt count).
func (p *openAIParser) Usage() Usage { return p.usage }

// FinishReason implements FinishReasoner.
func (p *openAIParser) FinishReason() string {
	// Common reasons are returned as constants, so asking costs no
	// allocation.
	switch string(p.finish) {
	case "":
		return ""
	case "stop":
		return "stop"
	case "length":
		return "length"
	case "tool_calls":
		return "tool_calls"
	case "content_filter":
		return "content_filter"
	case "function_call":
		return "function_call"
	case "abort":
		return "abort"
	}
	return string(p.finish)
}

// Event implements Parser. An event of type "error" is a StreamError.
// Data that is blank is ignored; "[DONE]" (JSON whitespace around it is
// allowed) is Done. Anything else must be a JSON object, or the event is a
// Decode failure. An object with an error member that is not null or a
// zero value is a StreamError whose detail is error.message (or the error
// string). Otherwise output comes from the choices (see choice and
// deltaOutput) and token counts from usage (see readUsage).
func (p *openAIParser) Event(typ, data []byte) (Info, error) {
	if string(typ) == "error" {
		// No OpenAI server sends typed events; a gateway that does and
		// names one "error" means it.
		detail := errorDetail(data)
		if detail == "" {
			detail = "error event without data"
		}
		return Info{}, &Failure{Reason: record.StreamError, Detail: detail}
	}
	d := trimSpace(data)
	if len(d) == 0 {
		// A blank data line carries nothing; some proxies send one as a
		// keep-alive. It is neither output nor a decode failure.
		return Info{}, nil
	}
	if string(d) == "[DONE]" {
		return Info{Done: true}, nil
	}
	if d[0] != '{' {
		return Info{}, &Failure{Reason: record.Decode, Detail: "event data is not a JSON object: " + clip(d, 64)}
	}
	// One walk over the top level validates the whole chunk, so the walks
	// below it (Members, Elements) skip without validating again. The
	// members are read after the walk so that, as with encoding/json, the
	// last of duplicate keys wins.
	var errV, choicesV, usageV jsonscan.Value
	it := jsonscan.IterObject(d)
	for it.Next() {
		switch keyID(it.Key()) {
		case kError:
			errV = it.Value()
		case kChoices:
			choicesV = it.Value()
		case kUsage:
			usageV = it.Value()
		}
	}
	if err := it.Err(); err != nil {
		return Info{}, &Failure{Reason: record.Decode, Detail: "malformed JSON in event data: " + err.Error()}
	}
	if isError(errV) {
		detail := messageOf(errV)
		if detail == "" {
			detail = clip(errV.Raw, maxDetail)
		}
		return Info{}, &Failure{Reason: record.StreamError, Detail: detail}
	}
	var info Info
	if choicesV.Kind == jsonscan.Array {
		ch := choicesV.Elements()
		for ch.Next() {
			if c := ch.Value(); c.Kind == jsonscan.Object {
				out, ans := p.choice(c)
				info.Output = info.Output || out
				info.Answer = info.Answer || ans
			}
		}
	}
	p.readUsage(usageV, &info)
	return info, nil
}

// isError reports whether an `error` member reports an error. Absent,
// null and the JSON zero values (false, 0, "", {} and []) do not: they come
// from serialisers that write every field of a struct, on every chunk, and
// a healthy stream must not fail on them. openai-go treats any present
// `error`, even null, as an error; that is the bug this avoids.
func isError(v jsonscan.Value) bool {
	switch v.Kind {
	case jsonscan.Invalid, jsonscan.Null:
		return false
	case jsonscan.Bool:
		b, _ := v.Bool()
		return b
	case jsonscan.Number:
		f, ok := v.Float()
		return !ok || f != 0
	default:
		return !v.IsEmpty()
	}
}

// choice reads one element of choices and reports whether it carries
// output and whether that output is answer (not reasoning). It remembers
// finish_reason, which is not an end marker: the finishing chunk can carry
// the last content, and [DONE] follows.
func (p *openAIParser) choice(c jsonscan.Value) (out, ans bool) {
	var delta, text, finish, index jsonscan.Value
	it := c.Members()
	for it.Next() {
		switch keyID(it.Key()) {
		case kDelta:
			delta = it.Value()
		case kText:
			text = it.Value()
		case kFinishReason:
			finish = it.Value()
		case kIndex:
			index = it.Value()
		}
	}
	if n, ok := index.Int(); ok && n != 0 {
		p.multi = true
	}
	if finish.Kind == jsonscan.String {
		p.finish = finish.Unquote(p.finish[:0])
	}
	if p.completions {
		ok := text.Kind == jsonscan.String && !text.IsEmpty()
		return ok, ok
	}
	if delta.Kind != jsonscan.Object {
		return false, false
	}
	return deltaOutput(delta)
}

// deltaOutput classifies a chat delta. Answer output is a non-empty
// content or refusal, a non-empty tool_calls array or a non-empty
// deprecated function_call object; reasoning output is a non-empty
// reasoning (vLLM ≥ 0.16, Ollama, OpenRouter) or reasoning_content
// (DeepSeek, SGLang, llama.cpp, older vLLM). A string of whitespace is
// output: it is a token the server generated. A role-only delta, with
// content "" or null, is not output.
func deltaOutput(delta jsonscan.Value) (out, ans bool) {
	var content, refusal, reasoning, reasoningContent, toolCalls, functionCall jsonscan.Value
	it := delta.Members()
	for it.Next() {
		switch keyID(it.Key()) {
		case kContent:
			content = it.Value()
		case kRefusal:
			refusal = it.Value()
		case kReasoning:
			reasoning = it.Value()
		case kReasoningContent:
			reasoningContent = it.Value()
		case kToolCalls:
			toolCalls = it.Value()
		case kFunctionCall:
			functionCall = it.Value()
		}
	}
	nonEmpty := func(v jsonscan.Value, k jsonscan.Kind) bool { return v.Kind == k && !v.IsEmpty() }
	ans = nonEmpty(content, jsonscan.String) ||
		nonEmpty(refusal, jsonscan.String) ||
		nonEmpty(toolCalls, jsonscan.Array) ||
		nonEmpty(functionCall, jsonscan.Object)
	out = ans ||
		nonEmpty(reasoning, jsonscan.String) ||
		nonEmpty(reasoningContent, jsonscan.String)
	return out, ans
}

// readUsage records a usage object (null and other non-objects are
// ignored) and, when the event is output and the counts allow it, sets
// info.Tokens to the increase of the cumulative completion_tokens.
func (p *openAIParser) readUsage(v jsonscan.Value, info *Info) {
	completion, prompt := -1, -1
	if v.Kind == jsonscan.Object {
		it := v.Members()
		for it.Next() {
			switch keyID(it.Key()) {
			case kCompletionTokens:
				completion = count(it.Value())
			case kPromptTokens:
				prompt = count(it.Value())
			}
		}
	}
	if prompt >= 0 {
		p.usage.PromptTokens = prompt
	}
	if completion < 0 {
		if info.Output {
			p.unattributed++
		}
		return
	}
	p.usage.CompletionTokens = completion
	if info.Output && p.unattributed == 0 && !p.multi {
		if n := completion - p.lastCompletion; n > 0 && n <= maxTokensPerEvent {
			info.Tokens = n
		}
	}
	p.lastCompletion = completion
	p.unattributed = 0
}

// count reads a token count: a non-negative integer that fits an int, or
// -1.
func count(v jsonscan.Value) int {
	n, ok := v.Int()
	if !ok || n < 0 || int64(int(n)) != n {
		return -1
	}
	return int(n)
}

// The member names the OpenAI parser reads, as small integers.
const (
	kOther = iota
	kChoices
	kUsage
	kError
	kDelta
	kText
	kFinishReason
	kIndex
	kContent
	kRefusal
	kReasoning
	kReasoningContent
	kToolCalls
	kFunctionCall
	kCompletionTokens
	kPromptTokens
	numKeys
)

var keyNames = [numKeys]string{
	kChoices:          "choices",
	kUsage:            "usage",
	kError:            "error",
	kDelta:            "delta",
	kText:             "text",
	kFinishReason:     "finish_reason",
	kIndex:            "index",
	kContent:          "content",
	kRefusal:          "refusal",
	kReasoning:        "reasoning",
	kReasoningContent: "reasoning_content",
	kToolCalls:        "tool_calls",
	kFunctionCall:     "function_call",
	kCompletionTokens: "completion_tokens",
	kPromptTokens:     "prompt_tokens",
}

// keyID returns the name id of an object key, kOther for names the parser
// does not read. One id space serves every level of a chunk; each level
// ignores the ids it does not expect.
func keyID(k jsonscan.Value) int {
	raw := k.Raw
	if len(raw) < 2 {
		return kOther
	}
	name := raw[1 : len(raw)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		// An escaped key ("c\u006fntent") is legal and rare: compare
		// unescaped.
		for id := kOther + 1; id < numKeys; id++ {
			if k.StringEquals(keyNames[id]) {
				return id
			}
		}
		return kOther
	}
	// A switch on string(name) compiles to length and byte comparisons
	// without converting, so it allocates nothing.
	switch string(name) {
	case "choices":
		return kChoices
	case "usage":
		return kUsage
	case "error":
		return kError
	case "delta":
		return kDelta
	case "text":
		return kText
	case "finish_reason":
		return kFinishReason
	case "index":
		return kIndex
	case "content":
		return kContent
	case "refusal":
		return kRefusal
	case "reasoning":
		return kReasoning
	case "reasoning_content":
		return kReasoningContent
	case "tool_calls":
		return kToolCalls
	case "function_call":
		return kFunctionCall
	case "completion_tokens":
		return kCompletionTokens
	case "prompt_tokens":
		return kPromptTokens
	}
	return kOther
}
