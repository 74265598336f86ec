// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package app

import (
	"bufio"
	"fmt"
	"os"
	"sync"

	"github.com/llmslo/llm_slo_exporter/record"
	"github.com/llmslo/llm_slo_exporter/supervisor"
)

// recordLog is a supervisor.Sink that also appends every probe record, in
// the workers' binary frame format, to a file: the raw material of the
// benchmarks (client-side timings per request id, to compare with the
// server's truth) and of offline analysis. Re-encoding a record costs
// about a microsecond, so the file barely changes what it measures.
type recordLog struct {
	supervisor.Sink
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	buf []byte
}

func newRecordLog(path string, next supervisor.Sink) (*recordLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening probe record file: %w", err)
	}
	return &recordLog{Sink: next, f: f, w: bufio.NewWriterSize(f, 256<<10)}, nil
}

// Record writes r to the file and hands it on.
func (l *recordLog) Record(worker int, r *record.Record) {
	l.mu.Lock()
	l.buf = record.AppendRecord(l.buf[:0], r)
	_, _ = l.w.Write(l.buf)
	l.mu.Unlock()
	l.Sink.Record(worker, r)
}

// Flush writes buffered records to the file.
func (l *recordLog) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Flush()
}

// Close flushes and closes the file.
func (l *recordLog) Close() error {
	if err := l.Flush(); err != nil {
		l.f.Close()
		return err
	}
	return l.f.Close()
}
