// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Command llmslo-bench measures llm_slo_exporter's own bias, cost and
// pacing against server truth: it runs llmsim and the exporter as separate
// processes on loopback, joins every probe's client-side timings with the
// simulator's per-request truth, and compares the exporter's CPU per probe
// with a floor client's. See docs/benchmarks.md.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: llmslo-bench ladder|saturation|floor [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "ladder":
		err = runLadder(os.Args[2:])
	case "saturation":
		err = runSaturation(os.Args[2:])
	case "hog":
		runHog(os.Args[2:])
	case "floor":
		err = runFloor(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "llmslo-bench:", err)
		os.Exit(1)
	}
}
