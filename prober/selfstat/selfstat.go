// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Package selfstat measures the calling process's demand on the CPU: the
// CPU time of all its threads and the time they spent runnable but waiting
// for a CPU.
//
// Why both: a worker whose CPU is taken by a neighbour barely accumulates
// more CPU time (it is not running), but its run-queue wait grows; CPU ÷
// wall alone would report a starved worker as idle. Linux reports both per
// thread in /proc/self/task/<tid>/schedstat ("run_ns wait_ns timeslices").
// Go's runtime/metrics CPU classes only advance at GC, so they cannot feed
// a timely gauge.
package selfstat

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Sample is a cumulative reading since the process started.
type Sample struct {
	CPU  time.Duration
	Wait time.Duration
	// Schedstat is false when the reading fell back to getrusage, which
	// has no run-queue wait.
	Schedstat bool
}

// Reader reads samples. It remembers each thread's last values so that a
// thread that exits does not make the totals go backwards.
type Reader struct {
	dir     string
	last    map[string][2]int64
	retired [2]int64
	buf     []byte
}

// NewReader returns a Reader for the calling process.
func NewReader() *Reader { return newReader("/proc/self/task") }

func newReader(dir string) *Reader {
	return &Reader{dir: dir, last: map[string][2]int64{}, buf: make([]byte, 128)}
}

// Read returns the current totals.
func (r *Reader) Read() Sample {
	if s, ok := r.readSchedstat(); ok {
		return s
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Sample{}
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return Sample{CPU: cpu}
}

func (r *Reader) readSchedstat() (Sample, bool) {
	d, err := os.Open(r.dir)
	if err != nil {
		return Sample{}, false
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil || len(names) == 0 {
		return Sample{}, false
	}
	seen := make(map[string]bool, len(names))
	var total [2]int64
	for _, tid := range names {
		v, ok := r.readTask(tid)
		if !ok {
			continue
		}
		seen[tid] = true
		r.last[tid] = v
		total[0] += v[0]
		total[1] += v[1]
	}
	if len(seen) == 0 {
		return Sample{}, false
	}
	for tid, v := range r.last {
		if !seen[tid] {
			r.retired[0] += v[0]
			r.retired[1] += v[1]
			delete(r.last, tid)
		}
	}
	return Sample{
		CPU:       time.Duration(total[0] + r.retired[0]),
		Wait:      time.Duration(total[1] + r.retired[1]),
		Schedstat: true,
	}, true
}

func (r *Reader) readTask(tid string) ([2]int64, bool) {
	f, err := os.Open(filepath.Join(r.dir, tid, "schedstat"))
	if err != nil {
		return [2]int64{}, false
	}
	n, _ := f.Read(r.buf)
	f.Close()
	return parseSchedstat(r.buf[:n])
}

// parseSchedstat parses "run_ns wait_ns timeslices\n".
func parseSchedstat(b []byte) ([2]int64, bool) {
	fields := bytes.Fields(b)
	if len(fields) < 2 {
		return [2]int64{}, false
	}
	run, err1 := strconv.ParseInt(string(fields[0]), 10, 64)
	wait, err2 := strconv.ParseInt(string(fields[1]), 10, 64)
	if err1 != nil || err2 != nil {
		return [2]int64{}, false
	}
	return [2]int64{run, wait}, true
}

// RSS returns the resident set size of the calling process in bytes, or 0.
func RSS() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}
