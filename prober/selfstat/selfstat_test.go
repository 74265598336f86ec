// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package selfstat

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeTask(t *testing.T, dir, tid, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, tid), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, tid, "schedstat"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadSumsThreadsAndKeepsRetired(t *testing.T) {
	dir := t.TempDir()
	writeTask(t, dir, "100", "1000 50 3\n")
	writeTask(t, dir, "101", "2000 25 7\n")
	r := newReader(dir)
	s := r.Read()
	if !s.Schedstat || s.CPU != 3000 || s.Wait != 75 {
		t.Fatalf("first read = %+v, want CPU 3000 Wait 75", s)
	}
	// Thread 101 exits; 100 advances. Its time must not vanish.
	if err := os.RemoveAll(filepath.Join(dir, "101")); err != nil {
		t.Fatal(err)
	}
	writeTask(t, dir, "100", "1500 60 4\n")
	s = r.Read()
	if s.CPU != 3500 || s.Wait != 85 {
		t.Fatalf("after thread exit = %+v, want CPU 3500 Wait 85", s)
	}
}

func TestParseSchedstat(t *testing.T) {
	tests := []struct {
		in   string
		want [2]int64
		ok   bool
	}{
		{"123 456 7\n", [2]int64{123, 456}, true},
		{"123", [2]int64{}, false},
		{"a b c", [2]int64{}, false},
		{"", [2]int64{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := parseSchedstat([]byte(tc.in))
			if got != tc.want || ok != tc.ok {
				t.Errorf("parseSchedstat(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestFallbackWithoutSchedstat(t *testing.T) {
	r := newReader(filepath.Join(t.TempDir(), "missing"))
	// Burn a little CPU so getrusage has something to report.
	deadline := time.Now().Add(20 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	s := r.Read()
	if s.Schedstat || s.CPU <= 0 || s.Wait != 0 {
		t.Fatalf("fallback = %+v (x=%d), want getrusage CPU only", s, x)
	}
}

func TestLiveProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	s := NewReader().Read()
	if !s.Schedstat || s.CPU <= 0 {
		t.Fatalf("live = %+v", s)
	}
	if RSS() == 0 {
		t.Error("RSS = 0")
	}
}
