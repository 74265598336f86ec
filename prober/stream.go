// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package prober

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/llmslo/llm_slo_exporter/prober/api"
	"github.com/llmslo/llm_slo_exporter/prober/ndjson"
	"github.com/llmslo/llm_slo_exporter/prober/sse"
	"github.com/llmslo/llm_slo_exporter/record"
)

// MaxITL bounds the inter-token gaps one record carries, so that a
// never-ending or huge stream keeps a worker's memory and the record's
// frame bounded; the gaps beyond it are not recorded (TPOT and NTPOT are
// unaffected).
const MaxITL = 1 << 16

// errStreamTooLarge ends a stream over its byte cap.
var errStreamTooLarge = errors.New("stream exceeds max_stream_bytes")

// Limits bound what one stream may cost a worker.
type Limits struct {
	// MaxEventBytes caps one event (SSE) or line (NDJSON).
	MaxEventBytes int
	// MaxStreamBytes caps the whole body; 0 means no cap.
	MaxStreamBytes int64
	// MaxEvents caps the events of one stream; 0 means no cap.
	MaxEvents int
}

// eventReader is what the stream loop needs of a framing: package sse's
// Reader and package ndjson's Reader both provide it.
type eventReader interface {
	Next() (*sse.Event, error)
	Reset(io.Reader)
	SetNow(func() time.Time)
	BytesRead() int64
}

func newEventReader(f api.Framing, maxEvent int) eventReader {
	if f == api.NDJSON {
		return ndjson.NewReader(nil, maxEvent)
	}
	return sse.NewReader(nil, sse.Options{MaxEventSize: maxEvent})
}

// Stream is what reading one response stream found. Times are the stamps
// of the Reads that delivered the events.
type Stream struct {
	// Reason is OK when the stream ended with its end marker (or a
	// failure found in the stream itself); read errors are classified by
	// the caller, which knows the context.
	Reason record.Reason
	Detail string
	// Events counts the events read; FirstOutput and FirstAnswer are the
	// indexes of the first output and first answer events, -1 if none.
	Events       int
	FirstOutput  int
	FirstAnswer  int
	OutputEvents int
	// Estimate is the token count estimated from the stream: one per
	// output event, or the event's known token count.
	Estimate int
	First    time.Time
	// FirstAnswerAt is zero when no answer output arrived.
	FirstAnswerAt time.Time
	Last          time.Time
	Done          time.Time
	ITL           []time.Duration
	Usage         api.Usage
	ended         bool
}

// Tokens returns N, the output token count: the server's report when it
// gave one, the stream's estimate otherwise (and true for estimated). The
// requested max_tokens is never used.
func (s *Stream) Tokens() (int, bool) {
	if s.Usage.CompletionTokens > 0 {
		return s.Usage.CompletionTokens, false
	}
	return s.Estimate, true
}

func (s *Stream) fail(r record.Reason, detail string) {
	s.Reason, s.Detail, s.ended = r, detail, true
}

// consume reads events from rd through parser until the end marker, a
// failure found in the stream, or a read error, which it returns for the
// caller to classify. It fills s.
func consume(rd eventReader, parser api.Parser, lim Limits, s *Stream) error {
	s.FirstOutput, s.FirstAnswer = -1, -1
	// An API without an end marker (api.EOFEnder) ends with the body: a
	// clean EOF after at least one complete event is its end, timed at
	// the last event.
	eofEnds := false
	if e, ok := parser.(api.EOFEnder); ok {
		eofEnds = e.EndsAtEOF()
	}
	var lastAt time.Time
	for !s.ended {
		ev, err := rd.Next()
		if err != nil {
			if eofEnds && err == io.EOF && s.Events > 0 {
				s.Done, s.ended = lastAt, true
				break
			}
			if err == io.EOF && s.Events == 0 && rd.BytesRead() > 0 && !sawComments(rd) {
				// A body that held bytes but not one event (nor a
				// keep-alive comment): an error body without stream
				// framing (seen from llama.cpp proxies), not a stream
				// cut short.
				s.fail(record.Decode, "the body held no event")
				break
			}
			return err
		}
		lastAt = ev.At
		s.Events++
		if lim.MaxEvents > 0 && s.Events > lim.MaxEvents {
			s.fail(record.TooLarge, fmt.Sprintf("the stream exceeded max_events (%d)", lim.MaxEvents))
			break
		}
		if ev.ErrorField != nil {
			s.fail(record.StreamError, "error field: "+sanitize(string(ev.ErrorField), 200))
			break
		}
		info, err := parser.Event(ev.Type, ev.Data)
		if err != nil {
			if ev.Unterminated {
				// The body ended inside this event: what failed to
				// parse is a cut event, not a malformed one.
				s.fail(record.Truncated, "the stream ended inside an event")
				break
			}
			var f *api.Failure
			if errors.As(err, &f) {
				s.fail(f.Reason, f.Detail)
			} else {
				s.fail(record.Decode, sanitize(err.Error(), 200))
			}
			break
		}
		if info.Output {
			k := min(max(1, info.Tokens), MaxITL)
			if s.OutputEvents == 0 {
				s.First, s.FirstOutput = ev.At, s.Events-1
			} else {
				// An event that the server says carries k tokens spreads
				// its gap evenly over them (design §4).
				gap := ev.At.Sub(s.Last) / time.Duration(k)
				for range min(k, MaxITL-len(s.ITL)) {
					s.ITL = append(s.ITL, gap)
				}
			}
			if info.Answer && s.FirstAnswer < 0 {
				s.FirstAnswerAt, s.FirstAnswer = ev.At, s.Events-1
			}
			s.Last = ev.At
			s.OutputEvents++
			s.Estimate += k
		}
		switch {
		case info.Done:
			s.Done, s.ended = ev.At, true
		case ev.Unterminated:
			s.fail(record.Truncated, "the stream ended inside an event")
		}
	}
	s.Usage = parser.Usage()
	if s.Reason == record.OK && s.OutputEvents == 0 {
		s.fail(record.NoOutput, "the stream ended without output")
	}
	return nil
}

// sawComments reports whether an SSE reader saw comment lines (the
// keep-alives of a server that then went away).
func sawComments(rd eventReader) bool {
	c, ok := rd.(interface{ Comments() int })
	return ok && c.Comments() > 0
}

// classifyReadError maps an error reading the body (outside a deadline or
// cancellation) to a reason.
func classifyReadError(err error, lim Limits) (record.Reason, string) {
	switch {
	case errors.Is(err, sse.ErrEventTooLarge):
		return record.TooLarge, fmt.Sprintf("an event exceeded max_event_bytes (%d)", lim.MaxEventBytes)
	case errors.Is(err, errStreamTooLarge):
		return record.TooLarge, fmt.Sprintf("the stream exceeded max_stream_bytes (%d)", lim.MaxStreamBytes)
	case errors.Is(err, io.EOF):
		return record.Truncated, "the stream ended without its end marker"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return record.Truncated, "the connection closed mid-stream"
	}
	return record.Reset, "reading the stream: " + errDetail(err)
}
