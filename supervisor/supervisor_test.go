// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package supervisor

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/llmslo/llm_slo_exporter/record"
)

func TestRelayLogs(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	in := strings.Join([]string{
		`{"time":"2026-01-01T00:00:00Z","level":"WARN","source":"worker.go:1","msg":"cannot apply plan","generation":3,"err":"boom"}`,
		`{"level":"DEBUG","msg":"applied plan"}`,
		`panic: runtime error: index out of range`,
	}, "\n")
	relayLogs(strings.NewReader(in), logger, 1)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines:\n%s", len(lines), buf.String())
	}
	for i, want := range []string{
		`level=WARN msg="cannot apply plan" worker=1 err=boom generation=3`,
		`level=DEBUG msg="applied plan" worker=1`,
		`level=ERROR msg="worker output" worker=1 line="panic: runtime error: index out of range"`,
	} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d = %q, want it to contain %q", i, lines[i], want)
		}
	}
	if strings.Contains(buf.String(), "source=worker.go") {
		t.Error("the worker's source attribute leaked into the supervisor's log")
	}
}

// sink records what readFrames hands it.
type sink struct {
	mu                        sync.Mutex
	records, dispatches, hbs  int
	drops                     map[record.Reason]int
	started, exited, restarts int
}

func (s *sink) Record(int, *record.Record) { s.mu.Lock(); s.records++; s.mu.Unlock() }
func (s *sink) Dispatch(int, record.Dispatch) {
	s.mu.Lock()
	s.dispatches++
	s.mu.Unlock()
}
func (s *sink) Drop(_ int, d record.Drop) {
	s.mu.Lock()
	if s.drops == nil {
		s.drops = map[record.Reason]int{}
	}
	s.drops[d.Reason] += int(d.Count)
	s.mu.Unlock()
}
func (s *sink) Heartbeat(int, *record.Heartbeat) { s.mu.Lock(); s.hbs++; s.mu.Unlock() }
func (s *sink) WorkerStarted(int)                { s.mu.Lock(); s.started++; s.mu.Unlock() }
func (s *sink) WorkerExited(int)                 { s.mu.Lock(); s.exited++; s.mu.Unlock() }
func (s *sink) WorkerRestarted(int)              { s.mu.Lock(); s.restarts++; s.mu.Unlock() }
func (s *sink) RetireWorker(int)                 {}

func TestReadFrames(t *testing.T) {
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	w.WriteDispatch(record.Dispatch{TargetID: 1})
	w.WriteRecord(&record.Record{TargetID: 1, Reason: record.OK})
	w.WriteDrop(record.Drop{TargetID: 1, Reason: record.InFlightLimit, Count: 3})
	w.WriteHeartbeat(&record.Heartbeat{})
	w.WriteAck(record.Ack{Generation: 1})
	_ = w.Flush()
	full := buf.Bytes()

	t.Run("clean end", func(t *testing.T) {
		s := &sink{}
		sup := New(Options{Sink: s})
		if err := sup.readFrames(bytes.NewReader(full), 0); err != nil {
			t.Fatal(err)
		}
		if s.dispatches != 1 || s.records != 1 || s.drops[record.InFlightLimit] != 3 || s.hbs != 1 {
			t.Errorf("sink = %+v", s)
		}
	})
	t.Run("torn frame", func(t *testing.T) {
		// A worker killed mid-write leaves half a frame: the frames before
		// it count, the torn one is an error, nothing panics.
		s := &sink{}
		sup := New(Options{Sink: s})
		err := sup.readFrames(bytes.NewReader(full[:len(full)-3]), 0)
		if err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
			t.Fatalf("err = %v, want unexpected EOF", err)
		}
		if s.dispatches != 1 || s.records != 1 {
			t.Errorf("sink = %+v", s)
		}
	})
}
