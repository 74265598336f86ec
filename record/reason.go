// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package record

// Reason says why a probe failed or why an arrival was dropped. The zero
// value means success. The set is small and fixed on purpose: every value is
// a label value of llm_probe_failures_total or llm_probe_dropped_total, and
// docs/metrics.md documents each one.
type Reason uint8

// Failure reasons: the probe was sent and did not succeed.
const (
	// OK is the reason of a successful probe.
	OK Reason = iota
	// Connect: the connection to the target could not be established
	// (DNS, TCP, TLS, proxy).
	Connect
	// Timeout: the probe's deadline (timeout) expired before the stream ended.
	Timeout
	// Stall: no byte arrived for idle_timeout while the stream was open.
	Stall
	// HTTP4xx: the target answered with a 4xx status.
	HTTP4xx
	// HTTP5xx: the target answered with a 5xx status.
	HTTP5xx
	// HTTPOther: the target answered with a status that is neither 2xx, 4xx
	// nor 5xx (for example a redirect that was not followed).
	HTTPOther
	// StreamError: the stream carried an error object or error event after a
	// 200 status.
	StreamError
	// Truncated: the body ended without the API's end marker.
	Truncated
	// Reset: reading the body failed (connection reset or closed mid-stream).
	Reset
	// NoOutput: the stream ended properly without any output-carrying event.
	NoOutput
	// Decode: the body was not what the API speaks (malformed JSON, HTML
	// error page, wrong content type).
	Decode
	// TooLarge: an event, or the whole stream, exceeded its size cap.
	TooLarge
	// Request: the request could not be built or sent for a reason on the
	// prober's side (a bad credentials file, for example).
	Request

	numFailureReasons
)

// Drop reasons: the arrival produced no outcome.
const (
	// InFlightLimit: the arrival found the target's in-flight cap full; it was
	// not sent (open loop: arrivals are never queued).
	InFlightLimit Reason = 64 + iota
	// WorkerLost: the probe was in flight in a worker process that exited.
	WorkerLost
	// Canceled: the probe was in flight when its target was removed by a
	// reload or the exporter shut down.
	Canceled
	// Budget: the arrival was over the target's or the exporter's probe or
	// token budget.
	Budget

	numDropReasonsEnd
)

var reasonNames = map[Reason]string{
	OK:            "ok",
	Connect:       "connect",
	Timeout:       "timeout",
	Stall:         "stall",
	HTTP4xx:       "http_4xx",
	HTTP5xx:       "http_5xx",
	HTTPOther:     "http_other",
	StreamError:   "stream_error",
	Truncated:     "truncated",
	Reset:         "reset",
	NoOutput:      "no_output",
	Decode:        "decode",
	TooLarge:      "too_large",
	Request:       "request",
	InFlightLimit: "in_flight_limit",
	WorkerLost:    "worker_lost",
	Canceled:      "canceled",
	Budget:        "budget",
}

// String returns the label value of r.
func (r Reason) String() string {
	if s, ok := reasonNames[r]; ok {
		return s
	}
	return "unknown"
}

// IsDrop reports whether r is a drop reason rather than a failure reason.
func (r Reason) IsDrop() bool { return r >= InFlightLimit }

// Valid reports whether r is one of the defined reasons.
func (r Reason) Valid() bool {
	_, ok := reasonNames[r]
	return ok
}

// FailureReasons returns every failure reason, OK excluded, in order.
func FailureReasons() []Reason {
	rs := make([]Reason, 0, numFailureReasons-1)
	for r := OK + 1; r < numFailureReasons; r++ {
		rs = append(rs, r)
	}
	return rs
}

// DropReasons returns every drop reason in order.
func DropReasons() []Reason {
	rs := make([]Reason, 0, numDropReasonsEnd-InFlightLimit)
	for r := InFlightLimit; r < numDropReasonsEnd; r++ {
		rs = append(rs, r)
	}
	return rs
}
