// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, the unit of utime and stime in /proc/<pid>/stat;
// 100 on every Linux architecture Go supports.
const clockTick = 100

// procCPU returns the CPU time (user + system) of a process.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("bad stat of %d", pid)
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0] is field 3 (state); utime is field 14, stime 15.
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bad stat of %d", pid)
	}
	return time.Duration(ut+st) * time.Second / clockTick, nil
}

// procRSS returns the resident set size of a process in bytes.
func procRSS(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("bad statm of %d", pid)
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize()), err
}

// children returns the pids of a process's children.
func children(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// tree is a process and its children: CPU and RSS summed.
type treeSample struct {
	CPU time.Duration
	RSS uint64
	N   int
}

func sampleTree(pid int) treeSample {
	var s treeSample
	for _, p := range append([]int{pid}, children(pid)...) {
		if c, err := procCPU(p); err == nil {
			s.CPU += c
		}
		if r, err := procRSS(p); err == nil {
			s.RSS += r
		}
		s.N++
	}
	return s
}
