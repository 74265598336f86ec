// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package schedule

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// collect runs a schedule in simulated time and returns its first n
// scheduled times as offsets from start.
func collect(t *testing.T, clk Clock, rate float64, seed uint64, n int) []time.Duration {
	t.Helper()
	start := clk.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make([]time.Duration, 0, n)
	Run(ctx, clk, start, NewPoisson(rate, NewRand(seed)), func(at time.Time) {
		out = append(out, at.Sub(start))
		if len(out) == n {
			cancel()
		}
	})
	return out
}

// ksExp returns the Kolmogorov-Smirnov statistic of samples (seconds)
// against the exponential distribution of the given rate.
func ksExp(samples []float64, rate float64) float64 {
	s := slices.Clone(samples)
	slices.Sort(s)
	n := float64(len(s))
	d := 0.0
	for i, x := range s {
		f := 1 - math.Exp(-rate*x)
		d = max(d, math.Abs(f-float64(i)/n), math.Abs(float64(i+1)/n-f))
	}
	return d
}

// ksCritical is the critical value of the KS statistic at significance
// 0.001 for n samples.
func ksCritical(n int) float64 { return 1.95 / math.Sqrt(float64(n)) }

func gaps(times []time.Duration) []float64 {
	g := make([]float64, len(times))
	prev := time.Duration(0)
	for i, t := range times {
		g[i] = (t - prev).Seconds()
		prev = t
	}
	return g
}

func TestSameSeedSameSchedule(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	a := collect(t, NewSimClock(start), 5, Seed(7, 0, "sim"), 500)
	b := collect(t, NewSimClock(start), 5, Seed(7, 0, "sim"), 500)
	if !slices.Equal(a, b) {
		t.Fatal("same seed gave different schedules")
	}
	for _, other := range []uint64{Seed(8, 0, "sim"), Seed(7, 1, "sim"), Seed(7, 0, "sim2")} {
		c := collect(t, NewSimClock(start), 5, other, 500)
		if slices.Equal(a, c) {
			t.Errorf("seed %d gave the same schedule as seed %d", other, Seed(7, 0, "sim"))
		}
	}
}

func TestInterArrivalsAreExponential(t *testing.T) {
	const (
		rate    = 200.0 // probes per second over all workers
		workers = 4
		n       = 20000 // arrivals per worker
	)
	start := time.Unix(1_700_000_000, 0)
	var merged, lasts []time.Duration
	for w := range workers {
		times := collect(t, NewSimClock(start), rate/workers, Seed(1, w, "sim"), n)
		t.Run(fmt.Sprintf("worker%d", w), func(t *testing.T) {
			g := gaps(times)
			if d := ksExp(g, rate/workers); d > ksCritical(n) {
				t.Errorf("worker %d: KS statistic %.4f > critical %.4f", w, d, ksCritical(n))
			}
			mean := times[n-1].Seconds() / n
			if want := workers / rate; math.Abs(mean-want)/want > 0.03 {
				t.Errorf("worker %d: mean gap %.5fs, want %.5fs", w, mean, want)
			}
		})
		merged = append(merged, times...)
		lasts = append(lasts, times[n-1])
	}
	// The superposition of the workers' independent substreams must be a
	// Poisson process of the full rate: check its gaps over the common span.
	slices.Sort(merged)
	span := merged[len(merged)-1]
	for _, last := range lasts {
		span = min(span, last)
	}
	cut := merged[:0:0]
	for _, m := range merged {
		if m <= span {
			cut = append(cut, m)
		}
	}
	g := gaps(cut)
	if d := ksExp(g, rate); d > ksCritical(len(g)) {
		t.Errorf("merged: KS statistic %.4f > critical %.4f over %d gaps", d, ksCritical(len(g)), len(g))
	}
}

func TestKSRejectsNonPoisson(t *testing.T) {
	// The test above must be able to fail: evenly spaced arrivals at the
	// same mean rate are far from exponential.
	g := make([]float64, 20000)
	for i := range g {
		g[i] = 0.005
	}
	if d := ksExp(g, 200); d <= ksCritical(len(g)) {
		t.Fatalf("KS statistic %.4f did not reject constant gaps", d)
	}
}

// lateClock wakes every timer late by a fixed amount, like a busy machine.
type lateClock struct {
	*SimClock
	late time.Duration
}

func (c lateClock) NewTimer(d time.Duration) Timer {
	return &lateTimer{Timer: c.SimClock.NewTimer(d + c.late), c: c}
}

type lateTimer struct {
	Timer
	c lateClock
}

func (t *lateTimer) Reset(d time.Duration) { t.Timer.Reset(d + t.c.late) }

func TestAbsoluteDeadlinesDoNotDrift(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	exact := collect(t, NewSimClock(start), 50, 3, 1000)
	late := collect(t, lateClock{NewSimClock(start), 3 * time.Millisecond}, 50, 3, 1000)
	// Every wake-up is 3 ms late, yet the scheduled times are unchanged:
	// lateness is measured per probe (schedule lag), never accumulated.
	if !slices.Equal(exact, late) {
		t.Fatal("a late clock changed the scheduled times")
	}
}

func TestRunFiresOverdueArrivalsImmediately(t *testing.T) {
	// With a rate far above what the (simulated) clock lets through, Run
	// must not skip arrivals: every one is fired, late, in order.
	start := time.Unix(1_700_000_000, 0)
	clk := lateClock{NewSimClock(start), 50 * time.Millisecond}
	times := collect(t, clk, 1000, 9, 200)
	if len(times) != 200 || !slices.IsSorted(times) {
		t.Fatalf("got %d arrivals, sorted=%v", len(times), slices.IsSorted(times))
	}
}

// TestPreciseTimerFires checks the timerfd timer's mechanics (it fires,
// Reset re-arms it, Stop releases it); its precision is a benchmark
// figure (make bench), not a unit-test assertion.
func TestPreciseTimerFires(t *testing.T) {
	tm := Precise{}.NewTimer(time.Millisecond)
	defer tm.Stop()
	start := time.Now()
	for i := range 3 {
		at := <-tm.C()
		if at.Before(start) {
			t.Fatalf("tick %d at %v, before it was armed", i, at)
		}
		start = time.Now()
		tm.Reset(time.Millisecond)
	}
	// A schedule on the precise clock delivers every arrival in order.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	last := time.Time{}
	Run(ctx, Precise{}, time.Now(), NewPoisson(2000, NewRand(1)), func(at time.Time) {
		if at.Before(last) {
			t.Errorf("arrivals out of order")
		}
		last = at
		if n++; n == 50 {
			cancel()
		}
	})
	if n != 50 {
		t.Fatalf("got %d arrivals", n)
	}
}
