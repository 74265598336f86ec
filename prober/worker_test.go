// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package prober

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/llmslo/llm_slo_exporter/config"
	"github.com/llmslo/llm_slo_exporter/prober/schedule"
	"github.com/llmslo/llm_slo_exporter/record"
)

func TestShare(t *testing.T) {
	tests := []struct{ total, workers, i, want int }{
		{64, 2, 0, 32}, {64, 2, 1, 32}, {5, 2, 0, 3}, {5, 2, 1, 2}, {3, 3, 2, 1}, {7, 4, 3, 1}, {7, 4, 2, 2},
	}
	for _, tc := range tests {
		if got := share(tc.total, tc.workers, tc.i); got != tc.want {
			t.Errorf("share(%d, %d, %d) = %d, want %d", tc.total, tc.workers, tc.i, got, tc.want)
		}
	}
	// The shares always add up to the total.
	for total := 1; total < 50; total++ {
		for workers := 1; workers <= total; workers++ {
			s := 0
			for i := range workers {
				s += share(total, workers, i)
			}
			if s != total {
				t.Fatalf("shares of %d over %d sum to %d", total, workers, s)
			}
		}
	}
}

type frames struct {
	dispatches int
	drops      map[record.Reason]int
	records    map[record.Reason]int
	acks       []uint64
}

func decode(t *testing.T, b []byte) frames {
	t.Helper()
	f := frames{drops: map[record.Reason]int{}, records: map[record.Reason]int{}}
	rd := record.NewReader(bytes.NewReader(b))
	for {
		k, err := rd.Next()
		if err == io.EOF {
			return f
		}
		if err != nil {
			t.Fatal(err)
		}
		switch k {
		case record.KindDispatch:
			f.dispatches++
		case record.KindDrop:
			d, err := rd.Drop()
			if err != nil {
				t.Fatal(err)
			}
			f.drops[d.Reason] += int(d.Count)
		case record.KindRecord:
			r, err := rd.Record()
			if err != nil {
				t.Fatal(err)
			}
			f.records[r.Reason]++
		case record.KindAck:
			a, _ := rd.Ack()
			f.acks = append(f.acks, a.Generation)
		}
	}
}

// TestArrivalsOverTheCapAreDropped fires arrivals at a target whose server
// never answers: the first cap arrivals are sent, the rest are dropped and
// counted, never queued.
func TestArrivalsOverTheCapAreDropped(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hang)

	var out bytes.Buffer
	w := NewWorker(record.NewWriter(&out), slog.New(slog.DiscardHandler), schedule.NewSimClock(time.Unix(0, 0)), "test")
	r := &runner{target: newTarget(t, srv.URL, "", ""), cap: 2}
	r.budget.Store(&budgets{})
	for range 5 {
		w.fire(r, time.Now())
	}
	// Cancel the two probes in flight (as at shutdown) and collect frames.
	w.stopAll()
	w.probes.Wait()
	if err := w.out.Flush(); err != nil {
		t.Fatal(err)
	}
	f := decode(t, out.Bytes())
	if f.dispatches != 2 || f.drops[record.InFlightLimit] != 3 || f.records[record.Canceled] != 2 {
		t.Fatalf("frames = %+v, want 2 dispatches, 3 in_flight_limit drops, 2 canceled records", f)
	}
	if r.inFlight.Load() != 0 {
		t.Errorf("in flight = %d after all probes ended", r.inFlight.Load())
	}
}

// TestRunAppliesPlansAndStopsOnEOF runs a worker through its stdin and
// stdout: a plan with a fast target, then EOF. Every probe is accounted
// for: dispatches = records.
func TestRunAppliesPlansAndStopsOnEOF(t *testing.T) {
	url := simURL(t, nil)
	cfg := []byte("workers: 2\nseed: 3\ntargets:\n  - name: sim\n    url: " + url + "/v1/chat/completions\n    model: m\n    rate: 200\n    budget: {probes_per_hour: 0}\n    request: {max_tokens: 4, ignore_eos: true}\n")
	plan, _ := json.Marshal(Plan{Generation: 5, Worker: 1, Workers: 2, Seed: 3, Config: cfg, ConfigFile: "x.yml", TargetIDs: map[string]uint32{"sim": 9}})
	var in bytes.Buffer
	pw := record.NewWriter(&in)
	pw.WriteRaw(record.KindPlan, plan)
	_ = pw.Flush()

	pr, pwriter := io.Pipe()
	var out syncBuf
	done := make(chan error)
	go func() { done <- Run(t.Context(), pr, record.NewWriter(&out), slog.New(slog.DiscardHandler), "test") }()
	if _, err := pwriter.Write(in.Bytes()); err != nil {
		t.Fatal(err)
	}
	// Let it probe until it has results, then close stdin: the worker
	// must stop and report everything it sent.
	deadline := time.Now().Add(10 * time.Second)
	for decode(t, out.Bytes()).records[record.OK] < 5 {
		if time.Now().After(deadline) {
			t.Fatal("no results from the worker")
		}
		time.Sleep(10 * time.Millisecond)
	}
	pwriter.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f := decode(t, out.Bytes())
	total := 0
	for _, n := range f.records {
		total += n
	}
	if f.dispatches != total {
		t.Errorf("dispatches %d != records %d (%+v)", f.dispatches, total, f.records)
	}
	if len(f.acks) != 1 || f.acks[0] != 5 {
		t.Errorf("acks = %v, want [5]", f.acks)
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b.Bytes()...)
}

// TestBudgetDropsArrivals charges arrivals to hourly caps in simulated
// time: over the probe cap or with the token cap spent, arrivals are
// dropped with reason budget, and the caps refill with time.
func TestBudgetDropsArrivals(t *testing.T) {
	url := simURL(t, nil)
	clk := schedule.NewSimClock(time.Unix(0, 0))
	var out bytes.Buffer
	w := NewWorker(record.NewWriter(&out), slog.New(slog.DiscardHandler), clk, "test")
	r := &runner{target: newTarget(t, url+"/v1/chat/completions", "", ""), cap: 100}
	// Two workers share caps of 6 probes and 40 tokens an hour: this
	// worker may send 3 probes and receive 20 tokens.
	r.tProbes, r.tTokens = newBudgetPair(config.Budget{ProbesPerHour: 6, OutputTokensPerHour: 40}, 2, clk)
	r.budget.Store(&budgets{probes: nonNil(r.tProbes), tokens: nonNil(r.tTokens)})

	fire := func(n int) frames {
		t.Helper()
		out.Reset()
		for range n {
			w.fire(r, clk.Now())
			w.probes.Wait() // each probe (8 tokens) finishes before the next arrival
		}
		if err := w.out.Flush(); err != nil {
			t.Fatal(err)
		}
		return decode(t, out.Bytes())
	}
	// 8 tokens per probe: after 3 probes (24 tokens) the token cap is
	// spent even though the probe cap would allow none anyway.
	f := fire(5)
	if f.dispatches != 3 || f.drops[record.Budget] != 2 || f.records[record.OK] != 3 {
		t.Fatalf("frames = %+v, want 3 sent, 2 dropped for budget", f)
	}
	// Half an hour later the probe cap has refilled by 1.5 probes but the
	// token cap (20/h, at -4) only by 10 tokens: one more probe fits.
	clk.Advance(30 * time.Minute)
	f = fire(3)
	if f.dispatches != 1 || f.drops[record.Budget] != 2 {
		t.Fatalf("after 30m: frames = %+v, want 1 sent, 2 dropped", f)
	}
}
