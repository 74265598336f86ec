// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"unicode/utf8"

	"github.com/llmslo/llm_slo_exporter/prober/jsonscan"
)

// maxDetail bounds the length in bytes of a Failure.Detail or ErrorDetail
// result, before the ellipsis that marks a cut.
const maxDetail = 200

// clip returns b as a one-line string for logs: every run of whitespace
// and control characters becomes one space, invalid UTF-8 becomes U+FFFD,
// the ends are trimmed, and the result is cut at a character boundary to
// at most max bytes plus "…" when something was cut.
func clip(b []byte, max int) string {
	out := make([]byte, 0, min(len(b), max)+len("…"))
	space := false
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		i += size
		if r < 0x20 || r == 0x7f || r == ' ' || (r >= 0x80 && r < 0xa0) {
			space = len(out) > 0
			continue
		}
		n := utf8.RuneLen(r) // 3 for the RuneError of an invalid byte
		if space {
			n++
		}
		if len(out)+n > max {
			return string(append(out, "…"...))
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = utf8.AppendRune(out, r)
	}
	return string(out)
}

// clipString is clip for a JSON string value: its unescaped text,
// clipped. It runs on failure paths only, so the copy is fine.
func clipString(v jsonscan.Value) string {
	return clip(v.Unquote(nil), maxDetail)
}

// messageOf returns the message that an `error` member carries: the
// member itself when it is a string, its `message` member when it is an
// object. It returns "" otherwise.
func messageOf(v jsonscan.Value) string {
	switch v.Kind {
	case jsonscan.String:
		return clipString(v)
	case jsonscan.Object:
		var msg jsonscan.Value
		it := v.Members()
		for it.Next() {
			if it.Key().StringEquals("message") {
				msg = it.Value()
			}
		}
		if msg.Kind == jsonscan.String {
			return clipString(msg)
		}
	}
	return ""
}

// errorDetail extracts a short message from an error body or error event:
// `error.message` (OpenAI, vLLM, Anthropic, TGI chat), `error` as a string
// (TGI, Triton, Ollama), top-level `message` (older vLLM, SGLang,
// TensorRT-LLM), `detail` as a string (RFC 7807, NVIDIA NIM) or as a
// FastAPI validation list (its first `msg`). Other members such as `code`
// are never decoded, so their type (string, int, null) does not matter.
// Without any of these it returns the start of the body, clipped; "" for a
// body that is empty or blank.
func errorDetail(body []byte) string {
	b := trimSpace(body)
	if len(b) == 0 {
		return ""
	}
	if b[0] == '{' {
		var errV, msgV, detailV jsonscan.Value
		// The body may have been cut at a few KiB: members read before
		// the walk fails are whole and valid, so use them anyway.
		it := jsonscan.IterObject(b)
		for it.Next() {
			k := it.Key()
			switch {
			case k.StringEquals("error"):
				errV = it.Value()
			case k.StringEquals("message"):
				msgV = it.Value()
			case k.StringEquals("detail"):
				detailV = it.Value()
			}
		}
		if s := messageOf(errV); s != "" {
			return s
		}
		if msgV.Kind == jsonscan.String {
			if s := clipString(msgV); s != "" {
				return s
			}
		}
		if s := detailOf(detailV); s != "" {
			return s
		}
	}
	return clip(b, maxDetail)
}

// detailOf reads a `detail` member: a string, or FastAPI's list of
// validation errors, of which the first `msg` is returned.
func detailOf(v jsonscan.Value) string {
	switch v.Kind {
	case jsonscan.String:
		return clipString(v)
	case jsonscan.Array:
		it := v.Elements()
		if it.Next() && it.Value().Kind == jsonscan.Object {
			var msg jsonscan.Value
			o := it.Value().Members()
			for o.Next() {
				if o.Key().StringEquals("msg") {
					msg = o.Value()
				}
			}
			if msg.Kind == jsonscan.String {
				return clipString(msg)
			}
		}
	}
	return ""
}

// isJSONSpace reports whether c is JSON whitespace.
func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// trimSpace returns b without leading and trailing JSON whitespace.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isJSONSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isJSONSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
