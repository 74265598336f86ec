// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package app

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/llmslo/llm_slo_exporter/simulator"
)

// TestSoak is the chaos soak: 200 probes/s over 3 targets against llmsim
// with injected faults, a random worker killed with SIGKILL every few
// seconds and a reload every so often, for $SOAK (make test: 60s; make
// soak: 10m). At the end every target's ledger must balance exactly, the
// exporter must have answered /metrics every second, and the supervisor's
// memory must be stable. It prints the ledger.
func TestSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("SOAK"))
	if err != nil || d <= 0 {
		t.Skip("set SOAK=60s (make test) or SOAK=10m (make soak) to run the chaos soak")
	}
	sc := simulator.DefaultConfig()
	sc.TTFT, sc.ITL = 20*time.Millisecond, 2*time.Millisecond
	sc.ErrorRate, sc.ErrorStatus = 0.03, 503
	sc.MidstreamErrorRate = 0.02
	sc.TruncateRate = 0.02
	sc.StallRate, sc.Stall = 0.01, 0 // hangs until the probe's idle timeout
	sim, simURL := startSim(t, sc)
	_ = sim

	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "soak.yml")
	writeCfg := func(gen int) {
		// Reloads change the third target's rate (its series continue)
		// and shuffle nothing else; the total stays near 200/s.
		var b strings.Builder
		fmt.Fprintf(&b, "workers: 3\nseed: 11\ntargets:\n")
		for i, rate := range []float64{100, 60, 40 + float64(gen%2)*5} {
			fmt.Fprintf(&b, `  - name: t%d
    url: %s/v1/chat/completions
    model: model-%d
    rate: %g
    budget: {probes_per_hour: 0, output_tokens_per_hour: 0}
    max_in_flight: 300
    timeout: 5s
    idle_timeout: 500ms
    request: {max_tokens: 8, ignore_eos: true}
`, i, simURL, i, rate)
		}
		if err := os.WriteFile(cfgPath, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeCfg(0)
	addr := freePort(t)
	_, supPID := startProcess(t, "--config.file="+cfgPath, "--web.listen-address="+addr, "--log.level=warn")
	base := "http://" + addr
	waitFor(t, 30*time.Second, "readiness", func() bool { return tryGet(base+"/-/ready") == "Ready\n" })

	// Watch /metrics every second; sample the supervisor's RSS.
	var scrapes, scrapeFailures atomic.Int64
	var rssMu sync.Mutex
	var rss []uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		client := &http.Client{Timeout: 2 * time.Second}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			scrapes.Add(1)
			resp, err := client.Get(base + "/metrics")
			if err != nil || resp.StatusCode != 200 {
				scrapeFailures.Add(1)
			}
			if resp != nil {
				resp.Body.Close()
			}
			if r, err := rssOf(supPID); err == nil {
				rssMu.Lock()
				rss = append(rss, r)
				rssMu.Unlock()
			}
		}
	}()

	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	kills, reloads := 0, 0
	killEvery, reloadEvery := 3*time.Second, min(time.Minute, d/2)
	nextKill, nextReload := start.Add(killEvery), start.Add(reloadEvery)
	for time.Since(start) < d {
		time.Sleep(100 * time.Millisecond) // the soak's own clock: it injects faults on a schedule
		now := time.Now()
		if now.After(nextKill) {
			if kids := childPIDs(supPID); len(kids) > 0 {
				victim := kids[rng.IntN(len(kids))]
				if syscall.Kill(victim, syscall.SIGKILL) == nil {
					kills++
				}
			}
			nextKill = now.Add(killEvery)
		}
		if now.After(nextReload) {
			reloads++
			writeCfg(reloads)
			if code, body := post(t, base+"/-/reload"); code != 200 {
				t.Errorf("reload %d: %d %s", reloads, code, body)
			}
			nextReload = now.Add(reloadEvery)
		}
	}
	// The collector updates a target's counters and its in-flight gauge
	// under one lock and exposes them under it, so any single scrape is a
	// consistent ledger, even while probing goes on.
	mfs := scrapeURL(t, base+"/metrics")
	close(stop)
	wg.Wait()

	t.Logf("soak: %v, %d worker kills, %d reloads, %d scrapes (%d failed)", d, kills, reloads, scrapes.Load(), scrapeFailures.Load())
	if scrapeFailures.Load() != 0 {
		t.Errorf("/metrics failed %d of %d times", scrapeFailures.Load(), scrapes.Load())
	}
	// Every kill is one restart, except for workers still waiting out
	// their backoff at the end (at most one per worker).
	restarts := sum(mfs, "llm_prober_worker_restarts_total", nil)
	if restarts > float64(kills) || restarts < float64(kills-3) {
		t.Errorf("restarts = %v, want the %d kills less those still in backoff (at most 3)", restarts, kills)
	}
	var ledger strings.Builder
	fmt.Fprintf(&ledger, "%-4s %9s %9s %9s %9s %9s  %s\n", "tgt", "arrivals", "requests", "success", "failed", "dropped", "in flight / by reason")
	for i := range 3 {
		l := map[string]string{"target": "t" + strconv.Itoa(i)}
		arr := sum(mfs, "llm_probe_arrivals_total", l)
		req := sum(mfs, "llm_probe_requests_total", l)
		fail := sum(mfs, "llm_probe_failures_total", l)
		drop := sum(mfs, "llm_probe_dropped_total", l)
		infl := sum(mfs, "llm_probe_in_flight", l)
		succ := float64(hist(t, mfs, "llm_probe_request_duration_seconds", l).GetSampleCount())
		var reasons []string
		for _, mf := range []string{"llm_probe_failures_total", "llm_probe_dropped_total"} {
			for _, m := range mfs[mf].Metric {
				if matches(m, l) && m.Counter.GetValue() > 0 {
					for _, lp := range m.Label {
						if lp.GetName() == "reason" {
							reasons = append(reasons, fmt.Sprintf("%s=%g", lp.GetValue(), m.Counter.GetValue()))
						}
					}
				}
			}
		}
		slices.Sort(reasons)
		fmt.Fprintf(&ledger, "t%-3d %9g %9g %9g %9g %9g  %g / %s\n", i, arr, req, succ, fail, drop, infl, strings.Join(reasons, " "))
		if arr != req+drop+infl {
			t.Errorf("t%d: arrivals %g != requests %g + dropped %g + in flight %g", i, arr, req, drop, infl)
		}
		if req != succ+fail {
			t.Errorf("t%d: requests %g != successes %g + failures %g", i, req, succ, fail)
		}
		if fail == 0 || succ == 0 {
			t.Errorf("t%d: %g successes and %g failures; the faults should give both", i, succ, fail)
		}
	}
	t.Logf("ledger at the end (counts from one scrape):\n%s", ledger.String())
	rssMu.Lock()
	defer rssMu.Unlock()
	if len(rss) > 10 {
		warm := rss[len(rss)/5]
		last, peak := rss[len(rss)-1], slices.Max(rss)
		t.Logf("supervisor RSS: after warm-up %.1f MB, peak %.1f MB, last %.1f MB (%d samples)", mb(warm), mb(peak), mb(last), len(rss))
		var series []string
		for i := 0; i < len(rss); i += max(1, len(rss)/10) {
			series = append(series, fmt.Sprintf("%ds %.1f", i, mb(rss[i])))
		}
		t.Logf("supervisor RSS over time (s MB): %s", strings.Join(series, ", "))
		var workers []string
		for _, m := range mfs["llm_prober_resident_memory_bytes"].GetMetric() {
			workers = append(workers, fmt.Sprintf("worker %s %.1f MB", m.GetLabel()[0].GetValue(), mb(uint64(m.GetGauge().GetValue()))))
		}
		t.Logf("worker RSS at the end: %s", strings.Join(workers, ", "))
		if float64(last) > 1.5*float64(warm) {
			t.Errorf("supervisor RSS grew from %.1f MB to %.1f MB", mb(warm), mb(last))
		}
	}
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

// childPIDs returns the pids of a process's children.
func childPIDs(pid int) []int {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// rssOf returns a process's resident set size.
func rssOf(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("bad statm")
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize()), err
}
