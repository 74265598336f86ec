// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package collector

import "github.com/llmslo/llm_slo_exporter/config"

// Default classic bucket edges, in seconds. Each family is a superset of
// vLLM V1's edges for the same quantity (vllm/v1/metrics/buckets.py), so a
// dashboard can put the prober's client-side histogram and the server's
// own on one panel with the same le values. The additions are finer edges
// where a prober needs them:
//   - TTFT gains 0.0025, 0.05, 0.15, 0.2, 0.3, 0.4, 1.5, 2 and 3 so common
//     SLO thresholds (200 ms, 300 ms, 2 s) are exact edges: bucket ratios
//     are exact only at edges, while histogram_quantile interpolates.
//   - TPOT, ITL and NTPOT gain 1 ms to 7.5 ms edges: vLLM's start at 10 ms,
//     but small models decode faster than that, and a TPOT SLO of 100 ms or
//     an NTPOT SLO of 150 ms needs those edges too (0.1 and 0.15 are vLLM's).
//   - E2E gains 0.05, 0.1 and 0.2 for short probes, below vLLM's 0.3.
var (
	DefaultTTFTBuckets = []float64{
		0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.05, 0.06, 0.08, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5,
		0.75, 1, 1.5, 2, 2.5, 3, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560,
	}
	DefaultTPOTBuckets = []float64{
		0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2,
		0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80,
	}
	DefaultE2EBuckets = []float64{
		0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480,
		960, 1920, 7680,
	}
	// DefaultLagBuckets serve the schedule lag and the canary's loop lag:
	// a healthy client is late by microseconds, a saturated one by
	// milliseconds to seconds. 0.01 is the edge of the default lag alert.
	DefaultLagBuckets = []float64{
		0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
		2.5, 5, 10,
	}
)

// bucketsOr returns edges, or def when edges is empty.
func bucketsOr(edges, def []float64) []float64 {
	if len(edges) > 0 {
		return edges
	}
	return def
}

// resolve returns the bucket edges of each family for a target.
func resolve(b config.Buckets) (ttft, ttfa, tpot, itl, ntpot, e2e []float64) {
	return bucketsOr(b.TTFT, DefaultTTFTBuckets),
		bucketsOr(b.TTFA, bucketsOr(b.TTFT, DefaultTTFTBuckets)),
		bucketsOr(b.TPOT, DefaultTPOTBuckets),
		bucketsOr(b.ITL, DefaultTPOTBuckets),
		bucketsOr(b.NTPOT, DefaultTPOTBuckets),
		bucketsOr(b.E2E, DefaultE2EBuckets)
}
