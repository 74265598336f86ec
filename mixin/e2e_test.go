// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package mixin_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The end-to-end scenarios run real servers: Prometheus and Alertmanager
// (built by `make mixin-e2e` at the versions tools/go.mod pins), llmsim
// and the exporter (built by `make build`), with the mixin rendered with
// short windows (e2eConfig). They send traffic to 127.0.0.1 only and are
// bounded by the deadlines below.

// e2eConfig renders the mixin for the test: windows of seconds and
// minutes instead of hours and days, `for:` of seconds, and a second
// target whose TTFT threshold is the whole number 1, which Prometheus 3
// stores as le="1.0".
const e2eConfig = `{
  _config+:: {
    windows: [
      { severity: 'critical', 'for': '10s', long: '1m', short: '15s', factor: 14.4 },
      { severity: 'critical', 'for': '15s', long: '2m', short: '30s', factor: 6 },
      { severity: 'warning', 'for': '20s', long: '5m', short: '1m', factor: 3 },
      { severity: 'warning', 'for': '30s', long: '10m', short: '2m', factor: 1 },
    ],
    sloPeriod: '10m',
    sliBaseWindow: '15s',
    proberSaturationFor: '10s',
    proberSaturationLookback: '30s',
    proberScheduleLagWindow: '30s',
    proberScheduleLagFor: '30s',
    proberTargetSilentWindow: '1m',
    proberTargetSilentFor: '30s',
    proberConfigReloadFor: '30s',
    proberDownFor: '30s',
    sloTargetOverrides: { 'sim-lenient': { ttft: { threshold: '1' } } },
  },
}`

// The burn-rate pairs of e2eConfig, for the queries of the test.
var e2ePairs = []struct {
	long, short, budget string
	forSeconds          int
}{
	{"1m", "15s", "(14.4 * (1 - 0.95))", 10},
	{"2m", "30s", "(6 * (1 - 0.95))", 15},
	{"5m", "1m", "(3 * (1 - 0.95))", 20},
	{"10m", "2m", "(1 * (1 - 0.95))", 30},
}

// sloAlert matches the names of the SLO alerts.
var sloAlert = regexp.MustCompile(`^LLMProbe(TTFT|TPOT|NTPOT|Error)BudgetBurn$`)

// e2eBinaries are the programs of the scenarios, from the environment
// that `make mixin-e2e` sets.
type e2eBinaries struct {
	prometheus, alertmanager, exporter, llmsim string
}

func lookupBinaries(t *testing.T) e2eBinaries {
	t.Helper()
	b := e2eBinaries{
		prometheus:   os.Getenv("PROMETHEUS_BIN"),
		alertmanager: os.Getenv("ALERTMANAGER_BIN"),
		exporter:     os.Getenv("LLMSLO_EXPORTER_BIN"),
		llmsim:       os.Getenv("LLMSIM_BIN"),
	}
	if b.prometheus == "" || b.alertmanager == "" || b.exporter == "" || b.llmsim == "" {
		t.Skip("PROMETHEUS_BIN, ALERTMANAGER_BIN, LLMSLO_EXPORTER_BIN and LLMSIM_BIN not set; `make mixin-e2e` builds the servers and sets them")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the scenarios starve a worker with Linux scheduling (taskset, chrt)")
	}
	return b
}

func TestE2E(t *testing.T) {
	bins := lookupBinaries(t)
	start := time.Now()
	t.Run("ServerSlowPages", func(t *testing.T) { scenarioServerSlow(t, bins) })
	t.Run("ProberSaturatedDoesNotPage", func(t *testing.T) { scenarioProberSaturated(t, bins) })
	t.Logf("end-to-end wall time: %.1fs", time.Since(start).Seconds())
}

// scenarioServerSlow raises llmsim's TTFT from 100ms to 900ms: the TTFT
// burn-rate alerts of target sim (threshold 0.5s) reach the webhook; those
// of target sim-lenient (threshold 1s, le="1.0" in Prometheus 3) do not.
func scenarioServerSlow(t *testing.T, bins e2eBinaries) {
	s := startStack(t, bins, true)
	s.waitWarm(t)
	// The fault meets a full long window of healthy history, as in
	// production, so the page takes as long as it would there.
	s.waitHistory(t, time.Minute)

	t0 := time.Now()
	s.setSim(t, `{"ttft":"900ms"}`)
	t.Logf("fault injected: llmsim TTFT 100ms -> 900ms")

	page := s.hook.waitFor(t, t0, 120*time.Second, func(n notification) bool {
		if strings.HasPrefix(n.Labels["alertname"], "LLMProber") && n.StartsAt.After(t0) {
			t.Fatalf("%s fired during scenario A: the prober was not healthy, so the SLO alerts are suppressed (is the machine busy?): %v", n.Labels["alertname"], n.Labels)
		}
		return n.Labels["alertname"] == "LLMProbeTTFTBudgetBurn" && n.Labels["target"] == "sim" && n.Labels["long"] == "1m"
	})
	t.Logf("LLMProbeTTFTBudgetBurn{long=1m, short=15s} (14.4x page) notified %.1fs after the fault", page.At.Sub(t0).Seconds())
	s.hook.logTimeline(t, t0)

	for _, n := range s.hook.all() {
		if n.Labels["target"] == "sim-lenient" && sloAlert.MatchString(n.Labels["alertname"]) {
			t.Errorf("sim-lenient has a TTFT threshold of 1s and a TTFT of 0.9s, but %s fired: %v", n.Labels["alertname"], n.Labels)
		}
		if strings.HasPrefix(n.Labels["alertname"], "LLMProber") && n.StartsAt.After(t0) {
			t.Errorf("the prober was healthy, but %s fired: %v", n.Labels["alertname"], n.Labels)
		}
	}
	s.checkDashboardQueries(t)

	// The whole-number threshold matched le="1.0": the SLI of sim-lenient
	// exists and is 0, not absent (no bucket matched) and not 1.
	for _, w := range []string{"15s", "1m"} {
		q := fmt.Sprintf(`llm_slo:sli_error:ratio_rate%s{slo="ttft", target="sim-lenient"}`, w)
		got := s.prom.query(t, q)
		if len(got) != 1 || got[0].value != 0 {
			t.Errorf("%s = %v, want one series of value 0", q, got)
		}
		if le := s.prom.query(t, `count(llm_probe_time_to_first_token_seconds_bucket{target="sim-lenient", le="1.0"})`); len(le) != 1 {
			t.Errorf(`Prometheus has no le="1.0" bucket: the threshold test proves nothing (%v)`, le)
		}
	}
}

// scenarioProberSaturated starves the exporter's worker processes of CPU
// while llmsim stays healthy: the saturation alert reaches the webhook,
// the unsuppressed TTFT burn condition becomes true in Prometheus, and no
// SLO alert is notified: neither a latency alert nor a success rate alert
// for the failures that the starved prober causes itself.
func scenarioProberSaturated(t *testing.T, bins e2eBinaries) {
	s := startStack(t, bins, false)
	s.waitWarm(t)

	t0 := time.Now()
	cpu := starve(t, s)
	t.Logf("fault injected: workers %v and 4 busy loops pinned to CPU %d, workers under SCHED_IDLE", s.workers(t), cpu)

	sat := s.hook.waitFor(t, t0, 90*time.Second, func(n notification) bool {
		return n.Labels["alertname"] == "LLMProberSaturated"
	})
	t.Logf("LLMProberSaturated (worker %s) notified %.1fs after the fault", sat.Labels["worker"], sat.At.Sub(t0).Seconds())

	// Without the suppression a TTFT alert would fire: its burn condition
	// holds for a window pair.
	var conds []string
	for _, p := range e2ePairs {
		conds = append(conds, fmt.Sprintf(`(llm_slo:sli_error:ratio_rate%[1]s{slo="ttft", target="sim"} > %[3]s and llm_slo:sli_error:ratio_rate%[2]s{slo="ttft", target="sim"} > %[3]s) * 0 + %[4]d`,
			p.long, p.short, p.budget, p.forSeconds))
	}
	unsuppressed := "max(" + strings.Join(conds, " or ") + ")"
	deadline := time.Now().Add(120 * time.Second)
	var holdFor time.Duration
	for {
		if r := s.prom.query(t, unsuppressed); len(r) > 0 {
			// Hold the fault for longer than that pair's `for:`.
			holdFor = time.Duration(r[0].value)*time.Second + 10*time.Second
			ratio := s.prom.query(t, `llm_slo:sli_error:ratio_rate15s{slo="ttft", target="sim"}`)
			t.Logf("unsuppressed TTFT burn condition true %.1fs after the fault (15s SLI error ratio %v); holding %s", time.Since(t0).Seconds(), ratio, holdFor)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the starved prober did not inflate TTFT enough for any burn condition within 120s: 15s SLI %v, 1m SLI %v",
				s.prom.query(t, `llm_slo:sli_error:ratio_rate15s{slo="ttft"}`), s.prom.query(t, `llm_slo:sli_error:ratio_rate1m{slo="ttft"}`))
		}
		time.Sleep(time.Second)
	}
	end := time.Now().Add(holdFor)
	for time.Now().Before(end) {
		if s.checkNoSLOAlert(t) {
			break
		}
		time.Sleep(time.Second)
	}
	s.checkNoSLOAlert(t)
	t.Logf("unsuppressed TTFT burn condition still true after the hold: %v", len(s.prom.query(t, unsuppressed)) > 0)
	if r := s.prom.query(t, `ALERTS{alertname=~"LLMProbe(TTFT|TPOT|NTPOT|Error)BudgetBurn"}`); len(r) != 0 {
		t.Errorf("SLO alerts pending or firing in Prometheus: %v", r)
	}
	if r := s.prom.query(t, `sum by (target, reason) (increase(llm_probe_failures_total[5m])) > 0`); len(r) > 0 {
		t.Logf("failures of the starved prober: %v", r)
	}
	if r := s.prom.query(t, `max(llm_prober_utilization)`); len(r) == 1 {
		t.Logf("worker utilization at the end: %.2f", r[0].value)
	}
	s.hook.logTimeline(t, t0)
}

// checkDashboardQueries evaluates every query of the dashboards (rendered
// with the test's windows) against the live Prometheus: each must be
// valid, and each must return data except those that filter with "> 0"
// (failures, drops), which a healthy run leaves empty.
func (s *stack) checkDashboardQueries(t *testing.T) {
	t.Helper()
	exprs := expressionsOf(t, s.dashboards, "15s")
	empty := 0
	for _, e := range exprs {
		if r := s.prom.query(t, e.expr); len(r) == 0 {
			if strings.Contains(e.expr, "> 0") {
				empty++
				continue
			}
			t.Errorf("dashboard query %s returned no data: %s", e.where, e.expr)
		}
	}
	t.Logf("dashboard queries: %d evaluated against Prometheus, %d filtered ones empty", len(exprs), empty)
}

// checkNoSLOAlert reports a notified SLO alert; it returns true when
// there was one.
func (s *stack) checkNoSLOAlert(t *testing.T) bool {
	t.Helper()
	for _, n := range s.hook.all() {
		if sloAlert.MatchString(n.Labels["alertname"]) {
			t.Errorf("an SLO alert reached the receiver while the prober was saturated: %v", n.Labels)
			return true
		}
	}
	return false
}

// stack is one set of servers of a scenario.
type stack struct {
	dir              string
	sim, expAddr     string
	exporter         *exec.Cmd
	prom             promAPI
	hook             *webhook
	workerCount      int
	alertmanagerAddr string
	dashboards       map[string]json.RawMessage
}

// startStack starts llmsim, the exporter, Alertmanager (with the mixin's
// inhibit rules when inhibit is true) and Prometheus with the rendered
// mixin, and a webhook receiver.
func startStack(t *testing.T, bins e2eBinaries, inhibit bool) *stack {
	t.Helper()
	s := &stack{dir: t.TempDir(), workerCount: 2, hook: newWebhook(t)}

	s.sim = freeAddr(t)
	startProcess(t, s.dir, "llmsim", bins.llmsim, "--listen-address="+s.sim, "--ttft=100ms", "--itl=5ms", "--log.level=warn")
	waitHTTP(t, "http://"+s.sim+"/health")

	s.expAddr = freeAddr(t)
	var targets strings.Builder
	for _, name := range []string{"sim", "sim-lenient"} {
		fmt.Fprintf(&targets, `  - name: %s
    url: http://%s/v1/chat/completions
    model: sim-model
    rate: 5
    timeout: 30s
    request:
      max_tokens: 16
      ignore_eos: true
`, name, s.sim)
	}
	cfg := writeFile(t, s.dir, "exporter.yml", fmt.Sprintf("workers: %d\nseed: 1\ntargets:\n%s", s.workerCount, targets.String()))
	s.exporter = startProcess(t, s.dir, "exporter", bins.exporter, "--config.file="+cfg, "--web.listen-address="+s.expAddr, "--log.level=warn")
	waitHTTP(t, "http://"+s.expAddr+"/-/ready")

	m := render(t, e2eConfig)
	s.dashboards = m.Dashboards
	writeFile(t, s.dir, "alerts.yaml", m.Alerts)
	writeFile(t, s.dir, "rules.yaml", m.Rules)

	amConfig := fmt.Sprintf(`route:
  receiver: webhook
  group_by: ['...']
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: webhook
    webhook_configs:
      - url: %s
        send_resolved: false
`, s.hook.URL)
	if inhibit {
		b, err := os.ReadFile("alertmanager/inhibit.yml")
		if err != nil {
			t.Fatal(err)
		}
		amConfig += string(b)
	}
	s.alertmanagerAddr = freeAddr(t)
	startProcess(t, s.dir, "alertmanager", bins.alertmanager,
		"--config.file="+writeFile(t, s.dir, "alertmanager.yml", amConfig),
		"--storage.path="+filepath.Join(s.dir, "am-data"),
		"--web.listen-address="+s.alertmanagerAddr,
		"--cluster.listen-address=",
		"--log.level=warn")
	waitHTTP(t, "http://"+s.alertmanagerAddr+"/-/ready")

	promConfig := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [rules.yaml, alerts.yaml]
alerting:
  alertmanagers:
    - static_configs:
        - targets: ['%s']
scrape_configs:
  - job_name: llm_slo_exporter
    static_configs:
      - targets: ['%s']
`, s.alertmanagerAddr, s.expAddr)
	promAddr := freeAddr(t)
	startProcess(t, s.dir, "prometheus", bins.prometheus,
		"--config.file="+writeFile(t, s.dir, "prometheus.yml", promConfig),
		"--storage.tsdb.path="+filepath.Join(s.dir, "prom-data"),
		"--web.listen-address="+promAddr,
		"--log.level=warn")
	waitHTTP(t, "http://"+promAddr+"/-/ready")
	s.prom = promAPI{base: "http://" + promAddr}
	return s
}

// waitWarm waits until Prometheus has the SLIs of both targets and the
// prober's health rules, so that a fault meets a running pipeline.
func (s *stack) waitWarm(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		sli := s.prom.query(t, `llm_slo:sli_error:ratio_rate15s{slo="ttft"} >= 0`)
		rho := s.prom.query(t, `job_instance:llm_prober_utilization:max_over_time30s`)
		if len(sli) == 2 && len(rho) == 1 {
			t.Logf("warm: TTFT SLIs %v, max worker utilization %.2f", sli, rho[0].value)
			if rho[0].value > 0.7 {
				t.Fatalf("the prober is saturated (ρ %.2f) before any fault: the machine is too busy for the scenarios", rho[0].value)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no SLIs after 60s: %v, %v", sli, rho)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitHistory waits until Prometheus holds d of scrapes of the exporter.
func (s *stack) waitHistory(t *testing.T, d time.Duration) {
	t.Helper()
	want := int(d/time.Second) - 2
	deadline := time.Now().Add(d + 30*time.Second)
	for {
		r := s.prom.query(t, fmt.Sprintf(`count_over_time(up{job="llm_slo_exporter"}[%ds])`, int(d/time.Second)))
		if len(r) == 1 && int(r[0].value) >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus has not scraped the exporter for %s: %v", d, r)
		}
		time.Sleep(time.Second)
	}
}

// setSim posts a partial configuration to llmsim's control endpoint.
func (s *stack) setSim(t *testing.T, body string) {
	t.Helper()
	resp, err := http.Post("http://"+s.sim+"/admin/config", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("llmsim /admin/config: %s: %s", resp.Status, b)
	}
}

// workers returns the process ids of the exporter's worker processes,
// the children of the supervisor.
func (s *stack) workers(t *testing.T) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var pids []int
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", s.exporter.Process.Pid))
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, field := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(field); err == nil {
					pids = append(pids, pid)
				}
			}
		}
		sort.Ints(pids)
		if len(pids) == s.workerCount {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %d worker processes under the exporter, found %v", s.workerCount, pids)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// starve takes the CPU away from the exporter's workers, honestly: the
// workers and four busy loops are pinned to the last CPU, and every
// thread of the workers runs under SCHED_IDLE, so the busy loops win the
// CPU and the workers wait in the run queue. The server stays healthy.
// The busy loops end when the test ends, and after 5 minutes at most
// (coreutils timeout), whatever happens to the test process.
func starve(t *testing.T, s *stack) int {
	t.Helper()
	cpu := runtime.NumCPU() - 1
	for _, pid := range s.workers(t) {
		for _, args := range [][]string{
			{"taskset", "--all-tasks", "--cpu-list", "-p", strconv.Itoa(cpu), strconv.Itoa(pid)},
			{"chrt", "--all-tasks", "--idle", "-p", "0", strconv.Itoa(pid)},
		} {
			if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%v: %v: %s", args, err, out)
			}
		}
	}
	for i := 0; i < 4; i++ {
		cmd := exec.Command("timeout", "300", "taskset", "--cpu-list", strconv.Itoa(cpu), "sh", "-c", "while :; do :; done")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
	}
	return cpu
}

// startProcess starts a server in its own process group, logging to a
// file in dir, and stops it (and its children) when the test ends.
func startProcess(t *testing.T, dir, name, bin string, args ...string) *exec.Cmd {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// The servers run at a higher priority (nice -10, as root; nice only
	// warns without the privilege) so that other load on the machine does
	// not starve the prober: the scenarios' faults are the only ones.
	cmd := exec.Command("nice", append([]string{"-n", "-10", bin}, args...)...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("%s log (tail):\n%s", name, b)
		}
	})
	return cmd
}

// freeAddr returns a free 127.0.0.1 address.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitHTTP polls url until it answers 200, for 30s at most.
func waitHTTP(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after 30s: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// promAPI queries Prometheus' HTTP API.
type promAPI struct{ base string }

// sample is one element of an instant vector.
type sample struct {
	labels map[string]string
	value  float64
}

func (s sample) String() string { return fmt.Sprintf("%v=%g", s.labels, s.value) }

// query evaluates an instant query now.
func (p promAPI) query(t *testing.T, q string) []sample {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	if r.Status != "success" {
		t.Fatalf("query %s: %s", q, r.Error)
	}
	out := make([]sample, 0, len(r.Data.Result))
	for _, res := range r.Data.Result {
		v, err := strconv.ParseFloat(fmt.Sprint(res.Value[1]), 64)
		if err != nil {
			t.Fatalf("query %s: value %v: %v", q, res.Value[1], err)
		}
		out = append(out, sample{res.Metric, v})
	}
	return out
}

// notification is one alert of a webhook notification, with its arrival.
type notification struct {
	At          time.Time
	StartsAt    time.Time
	Labels      map[string]string
	Annotations map[string]string
}

// webhook is the Alertmanager webhook receiver of a scenario.
type webhook struct {
	*httptest.Server
	mu     sync.Mutex
	got    []notification
	errors []error
}

func newWebhook(t *testing.T) *webhook {
	t.Helper()
	w := &webhook{}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		at := time.Now()
		var msg struct {
			Alerts []struct {
				Status      string            `json:"status"`
				StartsAt    time.Time         `json:"startsAt"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"alerts"`
		}
		body, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		defer w.mu.Unlock()
		if err := json.Unmarshal(body, &msg); err != nil {
			w.errors = append(w.errors, fmt.Errorf("webhook body %q: %w", body, err))
			return
		}
		for _, a := range msg.Alerts {
			if a.Status == "firing" {
				w.got = append(w.got, notification{at, a.StartsAt, a.Labels, a.Annotations})
			}
		}
	}))
	t.Cleanup(func() {
		w.Close()
		w.mu.Lock()
		defer w.mu.Unlock()
		if err := errors.Join(w.errors...); err != nil {
			t.Error(err)
		}
	})
	return w
}

func (w *webhook) all() []notification {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]notification(nil), w.got...)
}

// waitFor polls the notifications until one matches, or fails the test
// after timeout.
func (w *webhook) waitFor(t *testing.T, t0 time.Time, timeout time.Duration, match func(notification) bool) notification {
	t.Helper()
	deadline := t0.Add(timeout)
	for {
		for _, n := range w.all() {
			if match(n) {
				return n
			}
		}
		if time.Now().After(deadline) {
			var names []string
			for _, n := range w.all() {
				names = append(names, fmt.Sprint(n.Labels))
			}
			t.Fatalf("no matching notification %s after the fault; received: %v", timeout, names)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// logTimeline logs, for every alert notified, the seconds from the fault
// to its first notification.
func (w *webhook) logTimeline(t *testing.T, t0 time.Time) {
	t.Helper()
	first := map[string]time.Time{}
	for _, n := range w.all() {
		key := n.Labels["alertname"]
		for _, l := range []string{"target", "worker", "long", "short"} {
			if v, ok := n.Labels[l]; ok {
				key += fmt.Sprintf(" %s=%s", l, v)
			}
		}
		if at, ok := first[key]; !ok || n.At.Before(at) {
			first[key] = n.At
		}
	}
	keys := make([]string, 0, len(first))
	for k := range first {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return first[keys[i]].Before(first[keys[j]]) })
	var b bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %6.1fs  %s", first[k].Sub(t0).Seconds(), k)
	}
	t.Logf("alert timeline (seconds from the fault to the first webhook notification):%s", b.String())
}
