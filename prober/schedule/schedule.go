// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Package schedule generates open-loop Poisson arrivals and runs them on an
// injected clock.
//
// Why open loop: a closed-loop prober (send, wait for the answer, send the
// next) slows down exactly when the server does, so it under-samples the bad
// periods and hides its own lateness (coordinated omission). Here arrival
// times are drawn in advance from a Poisson process and each probe is sent
// at its time whether or not earlier probes have finished.
//
// Why absolute deadlines: each arrival's time is start + the sum of the
// exponential gaps drawn so far, kept in float64 seconds; sleeping relative
// to the previous wake-up would add every wake-up's lateness to all later
// arrivals (drift), and rounding each gap to nanoseconds would bias the rate.
package schedule

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"time"
)

// Seed derives the seed of one worker's substream for one target from the
// global seed, the worker index and the target name, so that every
// (worker, target) pair draws an independent stream and a given global seed
// reproduces all of them.
func Seed(global uint64, worker int, target string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(target))
	x := global ^ h.Sum64()*0x9e3779b97f4a7c15 ^ uint64(worker+1)*0xbf58476d1ce4e5b9
	// splitmix64 finaliser: spreads nearby inputs apart.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// NewRand returns the RNG of a substream.
func NewRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x853c49e6748fea9b))
}

// Poisson generates the arrival offsets of a Poisson process of a given
// rate: independent exponential gaps with mean 1/rate.
type Poisson struct {
	rng  *rand.Rand
	rate float64
	t    float64 // seconds since start of the last arrival
}

// NewPoisson returns a Poisson process of rate arrivals per second.
func NewPoisson(rate float64, rng *rand.Rand) *Poisson {
	return &Poisson{rng: rng, rate: rate}
}

// Next returns the offset from the start of the next arrival.
func (p *Poisson) Next() time.Duration {
	p.t += p.rng.ExpFloat64() / p.rate
	return time.Duration(p.t * float64(time.Second))
}

// Rate returns the process's rate in arrivals per second.
func (p *Poisson) Rate() float64 { return p.rate }

// Clock is the source of time of a schedule. Real code uses System; tests
// use a simulated clock.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is the part of *time.Timer a schedule uses.
type Timer interface {
	C() <-chan time.Time
	Reset(d time.Duration)
	Stop()
}

// System is the real clock. Its times carry Go's monotonic reading, so
// deadlines survive wall-clock steps.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// NewTimer returns a real timer.
func (System) NewTimer(d time.Duration) Timer { return &sysTimer{time.NewTimer(d)} }

type sysTimer struct{ t *time.Timer }

func (s *sysTimer) C() <-chan time.Time   { return s.t.C }
func (s *sysTimer) Reset(d time.Duration) { s.t.Reset(d) }
func (s *sysTimer) Stop()                 { s.t.Stop() }

// Run calls fire with the scheduled time of each arrival of p, counted from
// start, until ctx is done. fire must not block: it hands the probe to its
// own goroutine (or drops it) and returns, so that a slow probe never
// delays the next arrival.
func Run(ctx context.Context, clk Clock, start time.Time, p *Poisson, fire func(scheduled time.Time)) {
	var timer Timer
	for {
		at := start.Add(p.Next())
		if d := at.Sub(clk.Now()); d > 0 {
			if timer == nil {
				timer = clk.NewTimer(d)
				defer timer.Stop()
			} else {
				timer.Reset(d)
			}
			select {
			case <-ctx.Done():
				return
			case <-timer.C():
			}
		}
		if ctx.Err() != nil {
			return
		}
		fire(at)
	}
}
