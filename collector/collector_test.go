// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package collector

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/llmslo/llm_slo_exporter/record"
)

func TestWindowStats(t *testing.T) {
	a := record.Heartbeat{Wall: 0, CPU: 0, Wait: 0}
	b := record.Heartbeat{
		Wall: 2 * time.Second, CPU: 500 * time.Millisecond, Wait: 100 * time.Millisecond,
		// 1000 events with S = 0.5 ms each: lambda = 500/s, E[S] = 0.5ms,
		// E[S^2] = 0.25e-6 s^2, rho = 0.25, W = 500*0.25e-6/(2*0.75).
		Events: 1000, ServiceSum: 0.5, ServiceSumSq: 1000 * 0.25e-6,
	}
	s := windowStats(a, b)
	if math.Abs(s.rho-0.3) > 1e-12 {
		t.Errorf("rho = %v, want (0.5+0.1)/2 = 0.3", s.rho)
	}
	if math.Abs(s.lambda-500) > 1e-9 || math.Abs(s.meanS-0.0005) > 1e-15 {
		t.Errorf("lambda = %v, E[S] = %v", s.lambda, s.meanS)
	}
	want := 500 * 0.25e-6 / (2 * 0.75)
	if math.Abs(s.wait-want) > 1e-15 {
		t.Errorf("P-K wait = %v, want %v", s.wait, want)
	}
	// Saturated: lambda E[S] >= 1 predicts an unbounded wait.
	b.ServiceSum = 4
	if s := windowStats(a, b); !math.IsInf(s.wait, 1) {
		t.Errorf("saturated wait = %v, want +Inf", s.wait)
	}
	// No events: no prediction, no division by zero.
	b.Events, b.ServiceSum = 0, 0
	if s := windowStats(a, b); s.wait != 0 || s.lambda != 0 {
		t.Errorf("idle stats = %+v", s)
	}
}

var sim = TargetInfo{ID: 1, Name: "sim", Model: "m", API: "openai-chat", Rate: 2}

func value(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total, found := 0.0, false
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.Metric {
			for k, v := range labels {
				ok := false
				for _, lp := range m.Label {
					if lp.GetName() == k && lp.GetValue() == v {
						ok = true
					}
				}
				if !ok {
					continue next
				}
			}
			found = true
			switch {
			case m.Counter != nil:
				total += m.Counter.GetValue()
			case m.Gauge != nil:
				total += m.Gauge.GetValue()
			case m.Histogram != nil:
				total += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	if !found {
		t.Fatalf("no %s%v", name, labels)
	}
	return total
}

func success(id uint64) *record.Record {
	return &record.Record{
		TargetID: 1, RequestID: id, Reason: record.OK, HTTPStatus: 200, Lag: time.Millisecond,
		TTFT: 50 * time.Millisecond, TTFA: 50 * time.Millisecond, E2E: 130 * time.Millisecond, Gen: 75 * time.Millisecond,
		OutputTokens: 16, PromptTokens: 5, OutputEvents: 16, ITL: make([]time.Duration, 15),
	}
}

func TestLedgerAcrossAWorkerExit(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := New(reg)
	c.SetTargets([]TargetInfo{sim})
	c.WorkerStarted(0)
	for range 3 {
		c.Dispatch(0, record.Dispatch{TargetID: 1})
	}
	c.Drop(0, record.Drop{TargetID: 1, Reason: record.InFlightLimit, Count: 2})
	c.Record(0, success(1))
	c.Record(0, &record.Record{TargetID: 1, RequestID: 2, Reason: record.HTTP5xx, HTTPStatus: 503, TTFT: -1, TTFA: -1, E2E: -1, Gen: -1})
	l := map[string]string{"target": "sim"}
	if got := value(t, reg, "llm_probe_in_flight", l); got != 1 {
		t.Fatalf("in flight = %v, want 1", got)
	}
	// The worker dies with one probe in flight.
	c.WorkerExited(0)
	checks := map[string]float64{
		"llm_probe_arrivals_total":                     5,
		"llm_probe_requests_total":                     2,
		"llm_probe_in_flight":                          0,
		"llm_probe_time_to_first_token_seconds":        1,
		"llm_probe_time_per_output_token_seconds":      1,
		"llm_probe_inter_token_latency_seconds":        15,
		"llm_probe_output_tokens_total":                16,
		"llm_probe_prompt_tokens_total":                5,
		"llm_probe_schedule_lag_seconds":               2,
		"llm_probe_token_count_estimated_total":        0,
		"llm_probe_request_duration_seconds":           1,
		"llm_probe_time_to_first_answer_token_seconds": 1,
	}
	for name, want := range checks {
		if got := value(t, reg, name, l); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	for reason, want := range map[string]float64{"in_flight_limit": 2, "worker_lost": 1, "canceled": 0} {
		if got := value(t, reg, "llm_probe_dropped_total", map[string]string{"reason": reason}); got != want {
			t.Errorf("dropped{%s} = %v, want %v", reason, got, want)
		}
	}
	if got := value(t, reg, "llm_probe_failures_total", map[string]string{"reason": "http_5xx"}); got != 1 {
		t.Errorf("failures{http_5xx} = %v", got)
	}
	if got := value(t, reg, "llm_probe_failures_total", map[string]string{"reason": "timeout"}); got != 0 {
		t.Errorf("failures{timeout} = %v, want a zero series", got)
	}
	if got := value(t, reg, "llm_prober_workers", nil); got != 0 {
		t.Errorf("workers = %v after exit", got)
	}
}

func TestSetTargetsKeepsAndRemovesSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := New(reg)
	c.SetTargets([]TargetInfo{sim, {ID: 2, Name: "other", Model: "m", API: "openai-chat"}})
	c.Dispatch(0, record.Dispatch{TargetID: 1})
	c.Record(0, success(1))
	c.Dispatch(0, record.Dispatch{TargetID: 2})
	// Reload: sim stays (rate changed), other goes, new arrives.
	c.SetTargets([]TargetInfo{{ID: 1, Name: "sim", Model: "m", API: "openai-chat", Rate: 5}, {ID: 3, Name: "new", Model: "m", API: "openai-chat"}})
	if got := value(t, reg, "llm_probe_requests_total", map[string]string{"target": "sim"}); got != 1 {
		t.Errorf("sim requests = %v, want 1 kept across the reload", got)
	}
	if got := value(t, reg, "llm_probe_configured_rate", map[string]string{"target": "sim"}); got != 5 {
		t.Errorf("sim rate = %v, want 5", got)
	}
	if n, err := testutil.GatherAndCount(reg, "llm_probe_requests_total"); err != nil || n != 2 {
		t.Errorf("requests series = %d (%v), want 2 (sim, new)", n, err)
	}
	out, _ := testutil.CollectAndFormat(targetCollector{c}, expfmt.TypeTextPlain, "llm_probe_requests_total")
	if strings.Contains(string(out), `target="other"`) {
		t.Errorf("removed target still exposed:\n%s", out)
	}
	// A late record of the removed target is counted as an orphan.
	c.Record(0, success(9))
	c.Record(0, &record.Record{TargetID: 2, Reason: record.OK})
	if got := value(t, reg, "llm_prober_orphan_records_total", nil); got != 1 {
		t.Errorf("orphans = %v, want 1", got)
	}
}

func TestHeartbeatCountersSurviveRestart(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := New(reg)
	c.WorkerStarted(0)
	c.Heartbeat(0, &record.Heartbeat{Wall: 0, CPU: time.Second, Wait: 0})
	c.Heartbeat(0, &record.Heartbeat{Wall: time.Second, CPU: 1500 * time.Millisecond, Wait: 100 * time.Millisecond,
		LoopLag: []time.Duration{time.Millisecond, 2 * time.Millisecond}})
	w := map[string]string{"worker": "0"}
	if got := value(t, reg, "llm_prober_cpu_seconds_total", w); got != 1.5 {
		t.Errorf("cpu = %v, want 1.5", got)
	}
	if got := value(t, reg, "llm_prober_utilization", w); math.Abs(got-0.6) > 1e-9 {
		t.Errorf("utilization = %v, want (0.5+0.1)/1 = 0.6", got)
	}
	if got := value(t, reg, "llm_prober_loop_lag_seconds", w); got != 2 {
		t.Errorf("loop lag samples = %v, want 2", got)
	}
	// A new process starts its counters at zero: the counter keeps rising.
	c.WorkerExited(0)
	c.WorkerRestarted(0)
	c.WorkerStarted(0)
	c.Heartbeat(0, &record.Heartbeat{Wall: 0, CPU: 200 * time.Millisecond})
	if got := value(t, reg, "llm_prober_cpu_seconds_total", w); math.Abs(got-1.7) > 1e-9 {
		t.Errorf("cpu after restart = %v, want 1.7", got)
	}
	if got := value(t, reg, "llm_prober_worker_restarts_total", w); got != 1 {
		t.Errorf("restarts = %v", got)
	}
	c.RetireWorker(0)
	if n, _ := testutil.GatherAndCount(reg, "llm_prober_cpu_seconds_total"); n != 0 {
		t.Errorf("retired worker still has %d cpu series", n)
	}
}

func TestRecentIsBoundedAndNewestFirst(t *testing.T) {
	c := New(prometheus.NewRegistry())
	c.SetTargets([]TargetInfo{sim})
	for i := range RecentProbes + 10 {
		c.Record(0, success(uint64(i+1)))
	}
	rs := c.Recent()
	if len(rs) != 1 || len(rs[0].Probes) != RecentProbes {
		t.Fatalf("recent = %d targets, %d probes", len(rs), len(rs[0].Probes))
	}
	if got, want := rs[0].Probes[0].RequestID, record.RequestIDString(RecentProbes+10); got != want {
		t.Errorf("newest = %s, want %s", got, want)
	}
	if got, want := rs[0].Probes[RecentProbes-1].RequestID, record.RequestIDString(11); got != want {
		t.Errorf("oldest = %s, want %s", got, want)
	}
	p := rs[0].Probes[0]
	if p.Outcome != "success" || p.TTFT == nil || *p.TTFT != 0.05 || p.TPOT == nil || *p.TPOT != 0.005 || p.OutputTokens != 16 {
		t.Errorf("view = %+v", p)
	}
}
