// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"slices"
)

// summary is mean, p50, p99 and max of a sample.
type summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

func summarize(xs []float64) summary {
	if len(xs) == 0 {
		return summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return summary{N: len(s), Mean: sum / float64(len(s)), P50: quantile(s, 0.5), P99: quantile(s, 0.99), Max: s[len(s)-1]}
}

// quantile of a sorted sample, nearest rank.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// ksExp is the Kolmogorov-Smirnov statistic of gaps (seconds) against
// Exp(rate).
func ksExp(gaps []float64, rate float64) float64 {
	s := slices.Clone(gaps)
	slices.Sort(s)
	n := float64(len(s))
	d := 0.0
	for i, x := range s {
		f := 1 - math.Exp(-rate*x)
		d = max(d, math.Abs(f-float64(i)/n), math.Abs(float64(i+1)/n-f))
	}
	return d
}

// ksCritical is the KS critical value at significance 0.01 for n samples.
func ksCritical(n int) float64 { return 1.63 / math.Sqrt(float64(n)) }
