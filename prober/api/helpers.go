// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/llmslo/llm_slo_exporter/prober/jsonscan"
	"github.com/llmslo/llm_slo_exporter/record"
)

// This file holds what the adapters other than OpenAI's share: building a
// request body and matching the names and enumerated values of an event
// without allocating.

// buildBody finishes a request body: it merges spec.ExtraBody into m
// (see mergeBody) and encodes the result. Marshalling a map sorts the
// keys, so the body is deterministic; HTML escaping is off so that <, >
// and & in prompts stay readable on the wire.
func buildBody(spec Spec, m map[string]any) ([]byte, error) {
	if spec.MaxTokens < 0 {
		return nil, fmt.Errorf("max_tokens is negative (%d)", spec.MaxTokens)
	}
	mergeBody(m, spec.ExtraBody)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encoding the request body: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// mergeBody merges extra into dst. A value that is an object on both
// sides is merged member by member, recursively, so that extra_body can
// add one sampling parameter (TGI's parameters, SGLang's sampling_params,
// Ollama's options) without dropping the length the adapter set there.
// Any other value replaces dst's, a null included (it is sent as null).
// The maps of extra are copied, never modified or aliased.
func mergeBody(dst, extra map[string]any) {
	for k, v := range extra {
		if vm, ok := v.(map[string]any); ok {
			dm, ok := dst[k].(map[string]any)
			if !ok {
				dm = map[string]any{}
			}
			mergeBody(dm, vm)
			dst[k] = dm
			continue
		}
		dst[k] = v
	}
}

// matchString returns the index in names of the JSON string v, compared
// after unescaping, or -1 when v is not a string or not in names. names
// must be ASCII. It does not allocate.
func matchString(v jsonscan.Value, names []string) int {
	if v.Kind != jsonscan.String || len(v.Raw) < 2 {
		return -1
	}
	c := v.Raw[1 : len(v.Raw)-1]
	if bytes.IndexByte(c, '\\') < 0 {
		// Equal bytes are equal strings here: names are ASCII, so no
		// invalid UTF-8 in c can decode to one of them.
		for i, n := range names {
			if string(c) == n {
				return i
			}
		}
		return -1
	}
	// An escaped name ("te\u0078t") is legal and rare: compare unescaped.
	for i, n := range names {
		if v.StringEquals(n) {
			return i
		}
	}
	return -1
}

// matchBytes returns the index in names of b, or -1.
func matchBytes(b []byte, names []string) int {
	for i, n := range names {
		if string(b) == n {
			return i
		}
	}
	return -1
}

// nonEmptyString reports whether v is a string of at least one character.
func nonEmptyString(v jsonscan.Value) bool { return v.Kind == jsonscan.String && !v.IsEmpty() }

// nonEmptyArray reports whether v is an array with at least one element.
func nonEmptyArray(v jsonscan.Value) bool { return v.Kind == jsonscan.Array && !v.IsEmpty() }

// satAdd returns a+b for non-negative a and b, saturating at the largest
// int instead of wrapping.
func satAdd(a, b int) int {
	if b > math.MaxInt-a {
		return math.MaxInt
	}
	return a + b
}

// isTrue reports whether v is the literal true.
func isTrue(v jsonscan.Value) bool {
	b, ok := v.Bool()
	return ok && b
}

// decodeFailure is the Failure of event data that is not what the API
// sends.
func decodeFailure(d []byte, err error) error {
	if err != nil {
		return &Failure{Reason: record.Decode, Detail: "malformed JSON in event data: " + err.Error()}
	}
	return &Failure{Reason: record.Decode, Detail: "event data is not a JSON object: " + clip(d, 64)}
}

// errorEventFailure is the Failure of an SSE event of type "error",
// whatever its data: the message it carries (see errorDetail), or a note
// that it carried none.
func errorEventFailure(data []byte) error {
	detail := errorDetail(data)
	if detail == "" {
		detail = "error event without data"
	}
	return &Failure{Reason: record.StreamError, Detail: detail}
}

// streamFailure is the Failure of an error the stream reported: the
// message of errV (see messageOf), else errV's raw JSON, else fallback.
func streamFailure(errV jsonscan.Value, fallback string) error {
	detail := messageOf(errV)
	if detail == "" && errV.Kind != jsonscan.Invalid {
		detail = clip(errV.Raw, maxDetail)
	}
	if detail == "" {
		detail = fallback
	}
	return &Failure{Reason: record.StreamError, Detail: detail}
}

// walkObject validates the object d and stores in out[i] the value of its
// member named names[i] (the last one when a key repeats; the zero Value,
// of Kind Invalid, when there is none). out must have len(names)
// elements; a caller passes a slice of a local array, so nothing
// allocates. It returns the scanner's error for malformed JSON.
func walkObject(d []byte, names []string, out []jsonscan.Value) error {
	clear(out)
	it := jsonscan.IterObject(d)
	for it.Next() {
		if i := matchString(it.Key(), names); i >= 0 {
			out[i] = it.Value()
		}
	}
	return it.Err()
}

// members is walkObject for a member value v that was validated when it
// was produced, so the walk does not validate it again. A v that is not
// an object has no members.
func members(v jsonscan.Value, names []string, out []jsonscan.Value) {
	clear(out)
	if v.Kind != jsonscan.Object {
		return
	}
	it := v.Members()
	for it.Next() {
		if i := matchString(it.Key(), names); i >= 0 {
			out[i] = it.Value()
		}
	}
}

// finishBuf keeps a finish reason (unescaped) in a reused buffer and
// returns common values as constants, so that asking costs no allocation.
type finishBuf []byte

// set stores the string v; other kinds leave the buffer as it was.
func (f *finishBuf) set(v jsonscan.Value) {
	if v.Kind == jsonscan.String {
		*f = v.Unquote((*f)[:0])
	}
}

// reset empties the buffer, dropping it when an odd server made it grow.
func (f *finishBuf) reset() {
	if cap(*f) > 64 {
		*f = nil
	}
	*f = (*f)[:0]
}

// String returns the reason.
func (f finishBuf) String() string {
	for _, s := range commonFinish {
		if string(f) == s {
			return s
		}
	}
	return string(f)
}

// commonFinish lists the finish and stop reasons of the APIs, returned
// without allocating.
var commonFinish = [...]string{
	"", "stop", "length", "end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal",
	"eos_token", "eos", "limit", "word", "none", "abort", "tool_calls",
}

// tokenCounter turns a cumulative output-token count reported on some
// events into per-event counts (Info.Tokens), the way the OpenAI parser
// does: an output event gets the increase since the last report only when
// no earlier output event went without a report (otherwise the increase
// covers several events and belongs to none).
type tokenCounter struct {
	last         int // the last cumulative count, 0 before any
	unattributed int // output events since then without a count
}

func (c *tokenCounter) reset() { *c = tokenCounter{} }

// observe records an event's cumulative count (-1 for none) and returns
// the tokens to attribute to it (0: unknown).
func (c *tokenCounter) observe(cum int, output bool) int {
	if cum < 0 {
		if output {
			c.unattributed++
		}
		return 0
	}
	n := 0
	if output && c.unattributed == 0 {
		if d := cum - c.last; d > 0 && d <= maxTokensPerEvent {
			n = d
		}
	}
	c.last = cum
	c.unattributed = 0
	return n
}

// readTop does what the JSON-over-stream parsers (every API but the
// OpenAI ones, which walk their chunks their own way) do first with an
// event: one typed "error" is a stream error (no API here sends typed
// events but Anthropic; a gateway that names one "error" means it), blank
// data carries nothing (some proxies send it as a keep-alive), "[DONE]"
// ends the stream where doneMarker says the API may send it, and anything
// but a JSON object is a decode failure. Otherwise it reads the members
// named by names into out and returns handled false, and the parser goes
// on with out. When handled is true, info and err are the event's result.
func readTop(typ, data []byte, doneMarker bool, names []string, out []jsonscan.Value) (info Info, handled bool, err error) {
	if string(typ) == "error" {
		return Info{}, true, errorEventFailure(data)
	}
	d := trimSpace(data)
	switch {
	case len(d) == 0:
		return Info{}, true, nil
	case doneMarker && string(d) == "[DONE]":
		return Info{Done: true}, true, nil
	case d[0] != '{':
		return Info{}, true, decodeFailure(d, nil)
	}
	if err := walkObject(d, names, out); err != nil {
		return Info{}, true, decodeFailure(d, err)
	}
	return Info{}, false, nil
}
