// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package app

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

func TestReload(t *testing.T) {
	_, url := startSim(t, simConfig(time.Millisecond, time.Millisecond))
	h := startExporter(t, demoConfig(url, 1, 10, ""))
	waitFor(t, 30*time.Second, "a finished probe", func() bool {
		return sum(h.scrape(), "llm_probe_requests_total", simLabels) >= 1
	})

	resp, err := http.Get(h.web.URL + "/-/reload")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /-/reload = %d, want 405", resp.StatusCode)
	}

	// Unchanged file: a no-op.
	if code, body := post(t, h.web.URL+"/-/reload"); code != 200 {
		t.Fatalf("reload unchanged = %d %s", code, body)
	}
	if got := sum(h.scrape(), "llm_slo_exporter_config_reloads_total", map[string]string{"result": "unchanged"}); got != 1 {
		t.Errorf("unchanged reloads = %v", got)
	}

	// A bad file keeps the running configuration.
	if err := os.WriteFile(h.cfg, []byte(demoConfig(url, 1, 10, "    rte: 3\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	code, body := post(t, h.web.URL+"/-/reload")
	want := filepath.Base(h.cfg) + ":16: field rte not found"
	if code != 500 || !strings.Contains(body, want) {
		t.Errorf("bad reload = %d %q, want 500 with %q", code, body, want)
	}
	mfs := h.scrape()
	if got := sum(mfs, "llm_slo_exporter_config_last_reload_successful", nil); got != 0 {
		t.Errorf("last_reload_successful = %v, want 0", got)
	}
	before := sum(mfs, "llm_probe_requests_total", simLabels)
	waitFor(t, 30*time.Second, "probing to go on with the old configuration", func() bool {
		return sum(h.scrape(), "llm_probe_requests_total", simLabels) > before
	})

	// A good file with another target: sim keeps its counts, the new
	// target appears.
	good := demoConfig(url, 1, 10, "") + `  - name: second
    url: ` + url + `/v1/completions
    api: openai-completions
    model: sim-model
    rate: 10
    budget: {probes_per_hour: 0}
`
	if err := os.WriteFile(h.cfg, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, body := post(t, h.web.URL+"/-/reload"); code != 200 {
		t.Fatalf("good reload = %d %s", code, body)
	}
	if got := sum(h.scrape(), "llm_slo_exporter_config_last_reload_successful", nil); got != 1 {
		t.Errorf("last_reload_successful = %v, want 1", got)
	}
	kept := sum(h.scrape(), "llm_probe_requests_total", simLabels)
	if kept < before {
		t.Errorf("sim requests went from %v to %v across a reload", before, kept)
	}
	second := map[string]string{"target": "second"}
	waitFor(t, 30*time.Second, "the new target's probes", func() bool {
		return sum(h.scrape(), "llm_probe_requests_total", second) >= 1
	})

	// Removing sim removes its series.
	onlySecond := "workers: 1\ntargets:\n  - name: second\n    url: " + url + "/v1/completions\n    api: openai-completions\n    model: sim-model\n    rate: 10\n    budget: {probes_per_hour: 0}\n"
	if err := os.WriteFile(h.cfg, []byte(onlySecond), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, body := post(t, h.web.URL+"/-/reload"); code != 200 {
		t.Fatalf("reload = %d %s", code, body)
	}
	if text := get(t, h.web.URL+"/metrics"); strings.Contains(text, `target="sim"`) {
		t.Error("series of the removed target are still exposed")
	}
}

func TestConfigEndpointRedactsSecrets(t *testing.T) {
	_, url := startSim(t, simConfig(time.Millisecond, time.Millisecond))
	extra := `      headers:
        X-Api-Key: sk-very-secret
    http_client_config:
      authorization:
        credentials: bearer-very-secret
`
	h := startExporter(t, demoConfig(url, 1, 5, extra))
	body := get(t, h.web.URL+"/config")
	for _, s := range []string{"sk-very-secret", "bearer-very-secret"} {
		if strings.Contains(body, s) {
			t.Errorf("/config shows %q:\n%s", s, body)
		}
	}
	if !strings.Contains(body, "<secret>") || !strings.Contains(body, "name: sim") {
		t.Errorf("/config = %s", body)
	}
	waitFor(t, 30*time.Second, "a probe", func() bool { return sum(h.scrape(), "llm_probe_requests_total", simLabels) >= 1 })
	for _, page := range []string{"/metrics", "/probes", "/probes?format=json"} {
		if text := get(t, h.web.URL+page); strings.Contains(text, "very-secret") {
			t.Errorf("%s shows a secret", page)
		}
	}
	if strings.Contains(h.logs.String(), "very-secret") {
		t.Error("the logs show a secret")
	}
	if landing := get(t, h.web.URL+"/"); !strings.Contains(landing, `href="/metrics"`) {
		t.Errorf("landing page lacks the metrics link:\n%s", landing)
	}
	if got := get(t, h.web.URL+"/-/healthy"); got != "Healthy\n" {
		t.Errorf("/-/healthy = %q", got)
	}
	waitFor(t, 30*time.Second, "readiness", func() bool { return get(t, h.web.URL+"/-/ready") == "Ready\n" })
}

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yml")
	bad := filepath.Join(dir, "bad.yml")
	_ = os.WriteFile(good, []byte(demoConfig("http://127.0.0.1:1", 1, 1, "")), 0o600)
	_ = os.WriteFile(bad, []byte("workers: 1\ntargets:\n  - name: x\n    url: http://127.0.0.1:1\n    model: m\n    rate: 0\n"), 0o600)
	tests := []struct {
		file     string
		code     int
		contains string
	}{
		{good, 0, "configuration is valid"},
		{bad, 1, bad + ":6: targets[0].rate: must be > 0, got 0"},
		{filepath.Join(dir, "missing.yml"), 1, "no such file"},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Run([]string{"--config.check", "--config.file=" + tc.file}, &out, &errOut)
			if code != tc.code || !strings.Contains(out.String()+errOut.String(), tc.contains) {
				t.Errorf("code %d, output %q %q; want %d containing %q", code, out.String(), errOut.String(), tc.code, tc.contains)
			}
		})
	}
}

// TestTokenBudgetDropsShowInMetrics spends a tiny token budget: once it is
// gone, arrivals are dropped with reason budget and /metrics says so.
func TestTokenBudgetDropsShowInMetrics(t *testing.T) {
	_, url := startSim(t, simConfig(time.Millisecond, time.Millisecond))
	cfg := strings.Replace(demoConfig(url, 1, 5, ""), "    budget: {probes_per_hour: 0}\n", "    budget: {probes_per_hour: 0, output_tokens_per_hour: 40}\n", 1)
	h := startExporter(t, cfg)
	budget := map[string]string{"target": "sim", "reason": "budget"}
	waitFor(t, 30*time.Second, "budget drops", func() bool { return sum(h.scrape(), "llm_probe_dropped_total", budget) >= 3 })
	h.stop()
	mfs := h.scrape()
	// 40 tokens at 16 per probe: the third probe overdraws the bucket.
	// Tokens are charged when a probe ends, so probes admitted while
	// earlier ones were in flight can overdraw it further; at 5 probes/s
	// of ~20 ms each, two more is already unlikely.
	if got := sum(mfs, "llm_probe_requests_total", simLabels); got > 5 || got < 3 {
		t.Errorf("requests = %v, want 3..5 within a 40-token budget", got)
	}
}

// TestAutoReloadReportsARejectedFileOnce: the auto-reload timer fails a bad
// file once, not on every tick; a manual reload always tries again.
func TestAutoReloadReportsARejectedFileOnce(t *testing.T) {
	_, url := startSim(t, simConfig(time.Millisecond, time.Millisecond))
	h := startExporter(t, demoConfig(url, 1, 2, ""))
	failures := func() float64 {
		return sum(h.scrape(), "llm_slo_exporter_config_reloads_total", map[string]string{"result": "failure"})
	}
	if err := os.WriteFile(h.cfg, []byte("workers: 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_ = h.exp.reload(true)
	}
	if got := failures(); got != 1 {
		t.Errorf("failures after 3 auto-reload ticks on one bad file = %v, want 1", got)
	}
	if err := h.exp.Reload(); err == nil {
		t.Error("manual reload of a bad file succeeded")
	}
	if got := failures(); got != 2 {
		t.Errorf("failures after a manual reload = %v, want 2", got)
	}
	if err := os.WriteFile(h.cfg, []byte(demoConfig(url, 1, 3, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := h.exp.reload(true); err != nil {
		t.Fatalf("auto-reload of a fixed file: %v", err)
	}
	if got := sum(h.scrape(), "llm_slo_exporter_config_last_reload_successful", nil); got != 1 {
		t.Errorf("last_reload_successful = %v after the fix", got)
	}
}
