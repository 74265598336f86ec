// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package prober

import (
	"sync"
	"time"

	"github.com/llmslo/llm_slo_exporter/config"
	"github.com/llmslo/llm_slo_exporter/prober/schedule"
)

// bucket is a token bucket for one hourly cap: it holds at most one hour's
// allowance and refills continuously at the hourly rate. A worker holds its
// share (cap / workers) of every cap.
type bucket struct {
	mu       sync.Mutex
	clock    schedule.Clock
	capacity float64
	perSec   float64
	level    float64
	last     time.Time
}

// newBucket returns a full bucket for perHour units an hour, or nil when
// perHour is 0 (no cap).
func newBucket(perHour float64, clock schedule.Clock) *bucket {
	if perHour <= 0 {
		return nil
	}
	return &bucket{clock: clock, capacity: perHour, perSec: perHour / 3600, level: perHour, last: clock.Now()}
}

func (b *bucket) refill() {
	now := b.clock.Now()
	if d := now.Sub(b.last).Seconds(); d > 0 {
		b.level = min(b.capacity, b.level+d*b.perSec)
	}
	b.last = now
}

// has reports whether at least need units are left.
func (b *bucket) has(need float64) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	return b.level >= need
}

// spend takes n units; the level may go below zero (tokens are known only
// after a probe), which blocks arrivals until it refills.
func (b *bucket) spend(n float64) {
	if b == nil || n == 0 {
		return
	}
	b.mu.Lock()
	b.refill()
	b.level -= n
	b.mu.Unlock()
}

// budgets is the set of caps one arrival is checked against.
type budgets struct {
	probes, tokens []*bucket
}

// newBudgets returns a worker's share of a budget.
func newBudgetPair(b config.Budget, workers int, clock schedule.Clock) (probes, tokens *bucket) {
	n := float64(max(1, workers))
	return newBucket(b.ProbesPerHour/n, clock), newBucket(b.OutputTokensPerHour/n, clock)
}

// admit reports whether an arrival may be sent and, if so, charges one
// probe to every probe cap. A token cap admits while its level is
// positive.
func (bs *budgets) admit() bool {
	for _, b := range bs.probes {
		if !b.has(1) {
			return false
		}
	}
	for _, b := range bs.tokens {
		if !b.has(1e-9) {
			return false
		}
	}
	for _, b := range bs.probes {
		b.spend(1)
	}
	return true
}

// spendTokens charges a finished probe's output tokens.
func (bs *budgets) spendTokens(n int) {
	for _, b := range bs.tokens {
		b.spend(float64(n))
	}
}
