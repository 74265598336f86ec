// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Package record defines what a prober worker reports to the supervisor:
// one Record per finished or dropped probe, a Dispatch mark per probe sent,
// periodic Heartbeats with the worker's own health, and the compact binary
// framing that carries them over a pipe. It is the contract between the two
// processes, so both sides import it and nothing else of each other.
package record

import "time"

// Record is the result of one probe, as measured by a worker. All durations
// come from the worker's monotonic clock; a negative duration means "not
// measured" (for example TTFT of a probe that failed before any output).
type Record struct {
	// TargetID identifies the target within the supervisor's current plan.
	TargetID uint32
	// RequestID is the probe's unique id, sent as the x-request-id header
	// (formatted by RequestIDString).
	RequestID uint64
	// Reason is OK for a success, a failure reason otherwise.
	Reason Reason
	// Estimated is true when OutputTokens was estimated from the stream
	// because the server reported no usage.
	Estimated bool
	// HTTPStatus is the response status, 0 when no response arrived.
	HTTPStatus int
	// Scheduled is the wall-clock time of the Poisson arrival, in Unix
	// nanoseconds (for display only; durations never use the wall clock).
	Scheduled int64
	// Lag is dispatched - scheduled.
	Lag time.Duration
	// TTFT is first output event - dispatched.
	TTFT time.Duration
	// TTFA is first answer (non-reasoning) output event - dispatched.
	TTFA time.Duration
	// E2E is end of stream - dispatched.
	E2E time.Duration
	// Gen is last output event - first output event.
	Gen time.Duration
	// OutputTokens is N: the server's completion token count, or the
	// estimate when Estimated is set.
	OutputTokens int
	// PromptTokens is the server's prompt token count, -1 when unreported.
	PromptTokens int
	// OutputEvents is the number of output-carrying events.
	OutputEvents int
	// ITL holds the inter-token gaps, one per token after the first where
	// the server said how many tokens an event carried, one per event
	// otherwise.
	ITL []time.Duration
	// Detail is a short failure message (never credentials).
	Detail string
}

// Reset clears r for reuse, keeping the ITL slice's storage.
func (r *Record) Reset() {
	itl := r.ITL[:0]
	*r = Record{ITL: itl, PromptTokens: -1, TTFT: -1, TTFA: -1, E2E: -1, Gen: -1}
}

// TPOT returns the time per output token, (last - first) / (N - 1), and
// false when it is undefined (N < 2 or no output).
func (r *Record) TPOT() (time.Duration, bool) {
	if r.OutputTokens < 2 || r.Gen < 0 {
		return 0, false
	}
	return r.Gen / time.Duration(r.OutputTokens-1), true
}

// NTPOT returns the normalized time per output token, E2E / N, and false
// when it is undefined (N < 1).
func (r *Record) NTPOT() (time.Duration, bool) {
	if r.OutputTokens < 1 || r.E2E < 0 {
		return 0, false
	}
	return r.E2E / time.Duration(r.OutputTokens), true
}

// RequestIDString formats a request id as 16 lowercase hex digits.
func RequestIDString(id uint64) string {
	const hex = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = hex[id&0xf]
		id >>= 4
	}
	return string(b[:])
}

// Dispatch marks a probe that was sent. The supervisor counts it in flight
// until its Record arrives, so that probes in flight in a worker that dies
// are counted as dropped instead of vanishing.
type Dispatch struct {
	TargetID uint32
}

// Drop reports arrivals that were not sent.
type Drop struct {
	TargetID uint32
	Reason   Reason
	Count    uint32
}

// Heartbeat is a worker's periodic report on its own health. Counters are
// cumulative since the worker started.
type Heartbeat struct {
	// Wall is the time since the worker started.
	Wall time.Duration
	// CPU is the CPU time of all the worker's threads.
	CPU time.Duration
	// Wait is the time the worker's threads spent runnable but waiting for a
	// CPU (run-queue wait from schedstat; 0 where schedstat is missing).
	Wait time.Duration
	// Events is the number of handled events (stream reads) and ServiceSum
	// and ServiceSumSq the sum and the sum of squares of their service times
	// in seconds: the inputs of the Pollaczek-Khinchine prediction.
	Events       uint64
	ServiceSum   float64
	ServiceSumSq float64
	// RSS is the worker's resident set size in bytes.
	RSS uint64
	// LoopLag holds the lateness of each canary timer tick since the
	// previous heartbeat.
	LoopLag []time.Duration
}

// Ack tells the supervisor that the worker now runs the plan of the given
// generation: every record after it refers to that plan's targets.
type Ack struct {
	Generation uint64
}
