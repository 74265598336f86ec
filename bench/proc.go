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

// procPSS returns the proportional set size of a process in bytes: its
// resident pages, each shared page divided by the number of processes that
// map it. Summed over the supervisor and its workers, which map the same
// binary, it counts that binary once, where a sum of RSS counts it once
// per process.
func procPSS(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "Pss:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, err := strconv.ParseUint(f[1], 10, 64)
				return kb << 10, err
			}
		}
	}
	return 0, fmt.Errorf("no Pss in smaps_rollup of %d", pid)
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
	PSS uint64
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
		if r, err := procPSS(p); err == nil {
			s.PSS += r
		}
		s.N++
	}
	return s
}
