// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package prober

import (
	"context"
	"testing"
	"time"

	"github.com/llmslo/llm_slo_exporter/record"
	"github.com/llmslo/llm_slo_exporter/simulator"
)

// BenchmarkProbe runs whole probes, one after another, against an
// in-process llmsim with no latency: 32 tokens, one per chunk, usage on.
// Its CPU profile shows where a worker's time goes per probe (the
// simulator's share appears under package simulator and net/http's server).
func BenchmarkProbe(b *testing.B) {
	url := simURLB(b)
	tg := newTargetB(b, url+"/v1/chat/completions")
	rec := &record.Record{}
	stats := &ServiceStats{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		tg.Probe(ctx, time.Now(), 1, stats, rec)
		if rec.Reason != record.OK {
			b.Fatalf("probe failed: %s %s", rec.Reason, rec.Detail)
		}
	}
}

func simURLB(b *testing.B) string {
	c := simulator.DefaultConfig()
	c.TTFT, c.ITL = 0, 0
	return simURLWith(b, c)
}
