// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Package api holds the adapters that speak each streaming LLM API: how to
// build a probe's request and how to read the events of its response. It is
// the one seam between the generic probe (HTTP, timing, SSE framing) and the
// specifics of an API (which event carries output, where the token count
// is, what marks the end, how errors look).
package api

import (
	"github.com/llmslo/llm_slo_exporter/record"
)

// Spec is what an adapter needs to know about a target to build its request.
type Spec struct {
	// Model is the model name sent in the request body.
	Model string
	// Prompt is the user prompt (chat) or the prompt text (completions).
	Prompt string
	// MaxTokens caps the output length; 0 leaves it to the server.
	MaxTokens int
	// IgnoreEOS asks the server to generate exactly MaxTokens tokens where
	// the API supports it (vLLM, SGLang, TGI).
	IgnoreEOS bool
	// ExtraBody is merged into the top level of the JSON request body; its
	// keys override the adapter's own.
	ExtraBody map[string]any
}

// Framing is how a response body is split into events.
type Framing int

const (
	// SSE is text/event-stream framing (OpenAI, Anthropic, TGI, ...).
	SSE Framing = iota
	// NDJSON is one JSON object per line (Ollama's native API).
	NDJSON
)

// Adapter speaks one API. Implementations are stateless and safe for
// concurrent use; per-stream state lives in the Parser.
type Adapter interface {
	// Name returns the value of `api:` in the configuration that selects
	// this adapter.
	Name() string
	// Body returns the JSON request body for spec. It is built once per
	// target and reused by every probe.
	Body(spec Spec) ([]byte, error)
	// Headers returns the API-specific request headers (for example
	// anthropic-version), added to every probe after the user's headers.
	Headers() map[string]string
	// Framing returns how the response body is split into events.
	Framing() Framing
	// NewParser returns a parser for one response stream.
	NewParser() Parser
	// ErrorDetail extracts a short human-readable message from the body of
	// a non-2xx response (at most a few KiB are passed). It returns "" when
	// the body holds nothing useful.
	ErrorDetail(body []byte) string
}

// Parser reads the events of one response stream. It is not safe for
// concurrent use.
type Parser interface {
	// Event classifies one event: typ is the SSE event type (nil when the
	// event had none, and always nil for NDJSON) and data its data. A non-nil
	// error is a *Failure and ends the probe.
	Event(typ, data []byte) (Info, error)
	// Usage returns the token counts the server reported so far.
	Usage() Usage
	// Reset prepares the parser for a new stream, so that parsers can be
	// pooled.
	Reset()
}

// Info is what one event carried.
type Info struct {
	// Output is true when the event carries output of any kind: content,
	// reasoning or a tool-call delta. The first such event stops TTFT.
	// Role-only, usage-only, ping and empty events are not output.
	Output bool
	// Answer is true when the event carries answer output (content or a
	// tool call), as opposed to reasoning only.
	Answer bool
	// Tokens is the number of output tokens the event carries when the
	// server says so (for example from cumulative usage on every chunk);
	// 0 means unknown.
	Tokens int
	// Done is true for the API's end-of-stream marker.
	Done bool
}

// Usage is the token counts a server reported. A negative count means the
// server did not report it.
type Usage struct {
	CompletionTokens int
	PromptTokens     int
}

// NoUsage is the Usage of a stream whose server reported nothing.
var NoUsage = Usage{CompletionTokens: -1, PromptTokens: -1}

// Failure is the error a Parser returns when the stream itself reports a
// failure or cannot be decoded.
type Failure struct {
	// Reason is record.StreamError or record.Decode.
	Reason record.Reason
	// Detail is a short message for logs and /probes; it never holds
	// request headers or credentials.
	Detail string
}

// Error implements the error interface.
func (f *Failure) Error() string { return f.Reason.String() + ": " + f.Detail }
