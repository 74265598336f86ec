// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package deploy_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// unitFile is the systemd unit, relative to deploy/.
const unitFile = "systemd/llm_slo_exporter.service"

// unitBinary is the path of the exporter in the unit's ExecStart.
const unitBinary = "/usr/local/bin/llm_slo_exporter"

// parseUnit returns the settings of a unit file: section, then key, then the
// values in order (a key may repeat).
func parseUnit(data []byte) map[string]map[string][]string {
	unit := map[string]map[string][]string{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			if unit[section] == nil {
				unit[section] = map[string][]string{}
			}
		default:
			k, v, _ := strings.Cut(line, "=")
			unit[section][k] = append(unit[section][k], v)
		}
	}
	return unit
}

// TestSystemdUnit checks the settings the exporter depends on.
func TestSystemdUnit(t *testing.T) {
	data, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	unit := parseUnit(data)
	tests := []struct {
		section, key string
		ok           func(v string) bool
		want         string
	}{
		{"Unit", "After", func(v string) bool { return strings.Contains(v, "network-online.target") }, "network-online.target"},
		{"Service", "ExecStart", func(v string) bool {
			f := strings.Fields(v)
			return len(f) > 1 && f[0] == unitBinary && strings.HasPrefix(f[1], "--config.file=/etc/llm_slo_exporter/")
		}, unitBinary + " --config.file=/etc/llm_slo_exporter/..."},
		{"Service", "ExecReload", func(v string) bool { return v == "/bin/kill -HUP $MAINPID" }, "/bin/kill -HUP $MAINPID (the exporter reloads on SIGHUP)"},
		{"Service", "Restart", func(v string) bool { return v == "on-failure" || v == "always" }, "on-failure or always"},
		{"Service", "KillMode", func(v string) bool { return v == "control-group" }, "control-group (the workers stop with the service)"},
		{"Service", "DynamicUser", func(v string) bool { return v == "yes" }, "yes (never root)"},
		{"Service", "ProcSubset", func(v string) bool { return v == "" }, "unset (the process metrics read /proc/stat)"},
		{"Install", "WantedBy", func(v string) bool { return v == "multi-user.target" }, "multi-user.target"},
	}
	for _, tc := range tests {
		t.Run(tc.section+"."+tc.key, func(t *testing.T) {
			values := unit[tc.section][tc.key]
			v := ""
			if len(values) > 0 {
				v = values[len(values)-1]
			}
			if !tc.ok(v) {
				t.Errorf("[%s] %s=%q, want %s", tc.section, tc.key, v, tc.want)
			}
		})
	}
}

// TestSystemdAnalyzeVerify runs `systemd-analyze verify` on the unit, with
// ExecStart pointing at a binary that exists here, when systemd-analyze is
// installed. Any message about the unit fails the test: systemd-analyze
// exits 0 on unknown keys.
func TestSystemdAnalyzeVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	data, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("LLMSLO_EXPORTER_BIN")
	if bin == "" {
		if bin, err = exec.LookPath("true"); err != nil {
			t.Fatal(err)
		}
	}
	if bin, err = filepath.Abs(bin); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(unitFile))
	if err := os.WriteFile(path, bytes.ReplaceAll(data, []byte(unitBinary), []byte(bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, filepath.Base(unitFile)) {
			t.Errorf("systemd-analyze verify: %s", strings.TrimSpace(line))
		}
	}
}
