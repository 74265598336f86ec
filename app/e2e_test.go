// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmslo/llm_slo_exporter/simulator"
	"github.com/llmslo/llm_slo_exporter/supervisor"
)

// startSim serves an in-process llmsim on 127.0.0.1.
func startSim(t *testing.T, cfg simulator.Config) (*simulator.Server, string) {
	t.Helper()
	sim, err := simulator.New(simulator.Options{Config: cfg, TruthCapacity: 10000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	return sim, srv.URL
}

// harness is an exporter running in-process with real worker processes.
type harness struct {
	t      *testing.T
	exp    *Exporter
	reg    *prometheus.Registry
	web    *httptest.Server
	cancel context.CancelFunc
	done   chan struct{}
	logs   *syncBuffer
	cfg    string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startExporter(t *testing.T, configYAML string) *harness {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(file, []byte(configYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	logger := NewLogger(logs, "debug")
	reg := prometheus.NewRegistry()
	exp := NewExporter(file, reg, logger, func(sink supervisor.Sink) *supervisor.Supervisor {
		return supervisor.New(supervisor.Options{Command: testWorkerCommand, Sink: sink, Logger: logger, MinBackoff: 50 * time.Millisecond})
	})
	if err := exp.Reload(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, exp: exp, reg: reg, cancel: cancel, done: make(chan struct{}), logs: logs, cfg: file}
	go func() {
		defer close(h.done)
		exp.Supervisor().Run(ctx)
	}()
	handler, err := exp.Handler(HandlerOptions{MetricsPath: "/metrics", Gatherer: reg})
	if err != nil {
		t.Fatal(err)
	}
	h.web = httptest.NewServer(handler)
	t.Cleanup(func() {
		h.stop()
		h.web.Close()
		if t.Failed() {
			t.Logf("exporter logs:\n%s", logs.String())
		}
	})
	return h
}

// stop stops the workers and waits until every frame they wrote has been
// accounted: after it, the metrics are quiescent and exact.
func (h *harness) stop() {
	h.cancel()
	<-h.done
}

// scrape returns the metric families of /metrics.
func (h *harness) scrape() map[string]*dto.MetricFamily {
	h.t.Helper()
	return scrapeURL(h.t, h.web.URL+"/metrics")
}

// scrapeURL returns the metric families at url.
func scrapeURL(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// sum adds the values of a counter or gauge family over series matching
// the labels.
func sum(mfs map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	mf := mfs[name]
	if mf == nil {
		return 0
	}
	total := 0.0
	for _, m := range mf.Metric {
		if !matches(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		}
	}
	return total
}

func matches(m *dto.Metric, labels map[string]string) bool {
	for k, v := range labels {
		found := false
		for _, lp := range m.Label {
			if lp.GetName() == k && lp.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// hist returns the histogram of the single series of name matching labels.
func hist(t *testing.T, mfs map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Histogram {
	t.Helper()
	mf := mfs[name]
	if mf == nil {
		t.Fatalf("no metric %s", name)
	}
	for _, m := range mf.Metric {
		if matches(m, labels) {
			return m.Histogram
		}
	}
	t.Fatalf("no series of %s with %v", name, labels)
	return nil
}

// fractionIn returns the fraction of a histogram's observations in (lo, hi]
// (lo and hi must be bucket edges).
func fractionIn(h *dto.Histogram, lo, hi float64) float64 {
	var cLo, cHi float64
	for _, b := range h.Bucket {
		if b.GetUpperBound() == lo {
			cLo = float64(b.GetCumulativeCount())
		}
		if b.GetUpperBound() == hi {
			cHi = float64(b.GetCumulativeCount())
		}
	}
	if h.GetSampleCount() == 0 {
		return 0
	}
	return (cHi - cLo) / float64(h.GetSampleCount())
}

// waitFor polls cond until it holds or the deadline passes. Polling an
// observable condition is the synchronisation here: the exporter offers no
// other signal than its metrics, which is what a user sees too.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func simConfig(ttft, itl time.Duration) simulator.Config {
	c := simulator.DefaultConfig()
	c.TTFT, c.ITL = ttft, itl
	return c
}

func demoConfig(url string, workers int, rate float64, extra string) string {
	return fmt.Sprintf(`workers: %d
seed: 7
targets:
  - name: sim
    url: %s/v1/chat/completions
    api: openai-chat
    model: sim-model
    rate: %g
    budget: {probes_per_hour: 0}
    max_in_flight: 64
    timeout: 10s
    request:
      prompt: "Say hello."
      max_tokens: 16
      ignore_eos: true
%s`, workers, url, rate, extra)
}

var simLabels = map[string]string{"target": "sim", "model": "sim-model", "api": "openai-chat"}

func TestEndToEnd(t *testing.T) {
	_, url := startSim(t, simConfig(50*time.Millisecond, 5*time.Millisecond))
	h := startExporter(t, demoConfig(url, 2, 20, ""))

	waitFor(t, 30*time.Second, "two worker processes", func() bool { return len(h.exp.Supervisor().PIDs()) == 2 })
	pids := h.exp.Supervisor().PIDs()
	for i, pid := range pids {
		if pid == os.Getpid() {
			t.Fatalf("worker %d runs in the supervisor's process", i)
		}
		if err := syscall.Kill(pid, 0); err != nil {
			t.Fatalf("worker %d (pid %d) is not alive: %v", i, pid, err)
		}
	}
	if pids[0] == pids[1] {
		t.Fatalf("both workers have pid %d", pids[0])
	}
	waitFor(t, 40*time.Second, "60 finished probes", func() bool {
		return sum(h.scrape(), "llm_probe_requests_total", simLabels) >= 60
	})
	live := h.scrape()
	if u := sum(live, "llm_prober_utilization", nil); u <= 0 {
		t.Errorf("llm_prober_utilization = %v, want > 0 while probing", u)
	}
	h.stop()
	mfs := h.scrape()

	requests := sum(mfs, "llm_probe_requests_total", simLabels)
	failures := sum(mfs, "llm_probe_failures_total", simLabels)
	dropped := sum(mfs, "llm_probe_dropped_total", simLabels)
	arrivals := sum(mfs, "llm_probe_arrivals_total", simLabels)
	inFlight := sum(mfs, "llm_probe_in_flight", simLabels)
	ttft := hist(t, mfs, "llm_probe_time_to_first_token_seconds", simLabels)
	tpot := hist(t, mfs, "llm_probe_time_per_output_token_seconds", simLabels)
	e2e := hist(t, mfs, "llm_probe_request_duration_seconds", simLabels)
	ntpot := hist(t, mfs, "llm_probe_normalized_time_per_output_token_seconds", simLabels)
	successes := requests - failures

	if failures != 0 {
		t.Errorf("failures = %v, want 0 against a healthy simulator", failures)
	}
	for name, h := range map[string]*dto.Histogram{"ttft": ttft, "tpot": tpot, "e2e": e2e, "ntpot": ntpot} {
		if float64(h.GetSampleCount()) != successes {
			t.Errorf("%s count = %d, want successes = %v", name, h.GetSampleCount(), successes)
		}
	}
	if arrivals != requests+dropped+inFlight || inFlight != 0 {
		t.Errorf("ledger: arrivals %v != requests %v + dropped %v + in flight %v", arrivals, requests, dropped, inFlight)
	}
	if f := fractionIn(ttft, 0.04, 0.1); f < 0.95 {
		t.Errorf("only %.0f%% of TTFT in (40ms, 100ms], want >= 95%% around the simulator's 50ms", f*100)
	}
	if f := fractionIn(tpot, 0.0025, 0.0075); f < 0.95 {
		t.Errorf("only %.0f%% of TPOT in (2.5ms, 7.5ms], want >= 95%% around the simulator's 5ms", f*100)
	}
	// NTPOT is E2E / 16 for every probe, so the sums agree.
	if r := ntpot.GetSampleSum() * 16 / e2e.GetSampleSum(); math.Abs(r-1) > 1e-3 {
		t.Errorf("sum(NTPOT)*16 / sum(E2E) = %v, want 1", r)
	}
	if got := sum(mfs, "llm_probe_output_tokens_total", simLabels); got != 16*successes {
		t.Errorf("output tokens = %v, want 16 x %v", got, successes)
	}
	if got := sum(mfs, "llm_probe_token_count_estimated_total", simLabels); got != 0 {
		t.Errorf("estimated = %v, want 0 (llmsim reports usage)", got)
	}

	// /probes shows the recent probes as JSON and HTML.
	var body struct {
		Targets []struct {
			Target string `json:"target"`
			Probes []struct {
				RequestID string   `json:"request_id"`
				Outcome   string   `json:"outcome"`
				TTFT      *float64 `json:"ttft_seconds"`
			} `json:"probes"`
		} `json:"targets"`
	}
	getJSON(t, h.web.URL+"/probes?format=json", &body)
	if len(body.Targets) != 1 || body.Targets[0].Target != "sim" || len(body.Targets[0].Probes) == 0 {
		t.Fatalf("/probes = %+v", body)
	}
	p := body.Targets[0].Probes[0]
	if len(p.RequestID) != 16 || (p.Outcome == "success" && p.TTFT == nil) {
		t.Errorf("probe view %+v", p)
	}
	if html := get(t, h.web.URL+"/probes"); !strings.Contains(html, p.RequestID) {
		t.Errorf("/probes HTML lacks request %s", p.RequestID)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// tryGet returns the body at url, or "" when the request fails (for
// polling a server that is still starting).
func tryGet(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(get(t, url)), v); err != nil {
		t.Fatal(err)
	}
}

func TestWorkerCrashIsRestartedAndCounted(t *testing.T) {
	_, url := startSim(t, simConfig(20*time.Millisecond, 2*time.Millisecond))
	h := startExporter(t, demoConfig(url, 2, 40, ""))
	waitFor(t, 40*time.Second, "30 finished probes", func() bool {
		return sum(h.scrape(), "llm_probe_requests_total", simLabels) >= 30
	})
	before := h.scrape()
	victim := h.exp.Supervisor().PIDs()[0]
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 40*time.Second, "the restart of worker 0", func() bool {
		pid := h.exp.Supervisor().PIDs()[0]
		return pid != 0 && pid != victim && sum(h.scrape(), "llm_prober_worker_restarts_total", map[string]string{"worker": "0"}) == 1
	})
	reqBefore := sum(before, "llm_probe_requests_total", simLabels)
	waitFor(t, 40*time.Second, "probes to continue after the restart", func() bool {
		return sum(h.scrape(), "llm_probe_requests_total", simLabels) >= reqBefore+30
	})
	h.stop()
	after := h.scrape()
	// Nothing recorded before the crash is lost: every count only grew.
	for _, name := range []string{"llm_probe_requests_total", "llm_probe_arrivals_total", "llm_probe_output_tokens_total"} {
		if b, a := sum(before, name, simLabels), sum(after, name, simLabels); a < b {
			t.Errorf("%s went from %v to %v across the crash", name, b, a)
		}
	}
	if b, a := hist(t, before, "llm_probe_time_to_first_token_seconds", simLabels).GetSampleCount(),
		hist(t, after, "llm_probe_time_to_first_token_seconds", simLabels).GetSampleCount(); a < b {
		t.Errorf("TTFT count went from %d to %d", b, a)
	}
	if got := sum(after, "llm_prober_worker_restarts_total", nil); got != 1 {
		t.Errorf("restarts = %v, want 1", got)
	}
	// The ledger balances: probes in flight in the killed worker were
	// counted as dropped (worker_lost), not forgotten.
	arrivals := sum(after, "llm_probe_arrivals_total", simLabels)
	requests := sum(after, "llm_probe_requests_total", simLabels)
	dropped := sum(after, "llm_probe_dropped_total", simLabels)
	if arrivals != requests+dropped {
		t.Errorf("ledger: arrivals %v != requests %v + dropped %v", arrivals, requests, dropped)
	}
}

// TestCheckMetrics lints a live /metrics with promtool (built by make).
func TestCheckMetrics(t *testing.T) {
	promtool := os.Getenv("PROMTOOL")
	if promtool == "" {
		t.Skip("PROMTOOL not set; `make test` builds the pinned promtool and sets it")
	}
	_, url := startSim(t, simConfig(5*time.Millisecond, time.Millisecond))
	h := startExporter(t, demoConfig(url, 2, 20, ""))
	waitFor(t, 40*time.Second, "probes and a utilization reading", func() bool {
		mfs := h.scrape()
		return sum(mfs, "llm_probe_requests_total", simLabels) >= 10 && mfs["llm_prober_utilization"] != nil
	})
	text := get(t, h.web.URL+"/metrics")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

func TestMetricsOpenMetricsExemplars(t *testing.T) {
	_, url := startSim(t, simConfig(5*time.Millisecond, time.Millisecond))
	h := startExporter(t, demoConfig(url, 1, 20, ""))
	waitFor(t, 40*time.Second, "a success", func() bool {
		return hist(t, h.scrape(), "llm_probe_time_to_first_token_seconds", simLabels).GetSampleCount() > 0
	})
	req, _ := http.NewRequest(http.MethodGet, h.web.URL+"/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "llm_probe_time_to_first_token_seconds_bucket") && strings.Contains(line, `# {request_id="`) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no request_id exemplar on TTFT buckets in OpenMetrics output")
	}
}

// freePort returns a loopback address nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
