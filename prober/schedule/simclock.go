// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package schedule

import (
	"sync"
	"time"
)

// SimClock is a simulated clock for tests: a timer fires at once and moves
// the clock to its deadline, so a schedule runs as fast as the CPU allows
// while every time it sees is exactly the simulated one.
type SimClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewSimClock returns a SimClock set to start.
func NewSimClock(start time.Time) *SimClock { return &SimClock{now: start} }

// Now returns the simulated time.
func (c *SimClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *SimClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// NewTimer returns a timer that has already fired at now+d.
func (c *SimClock) NewTimer(d time.Duration) Timer {
	t := &simTimer{c: c, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

type simTimer struct {
	c  *SimClock
	ch chan time.Time
}

func (t *simTimer) C() <-chan time.Time { return t.ch }

func (t *simTimer) Reset(d time.Duration) {
	if d > 0 {
		t.c.Advance(d)
	}
	select {
	case <-t.ch:
	default:
	}
	t.ch <- t.c.Now()
}

func (t *simTimer) Stop() {}
