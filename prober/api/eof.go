// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

// EOFEnder is implemented by parsers of APIs whose stream has no end
// marker and simply ends (Triton's generate_stream). It is optional, so
// that Parser stays small for the APIs that have one; callers
// type-assert. For such a parser the stream loop treats a clean end of
// the body (io.EOF from the event reader, after a complete event) as the
// end marker, timed at the last event; a body cut by a connection error
// or inside an event is still truncated.
type EOFEnder interface {
	// EndsAtEOF reports whether a clean end of the body ends the stream
	// successfully.
	EndsAtEOF() bool
}
