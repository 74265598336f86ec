// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Command llm_slo_exporter probes streaming LLM endpoints and exports their
// latency SLIs and the prober's own health to Prometheus. See README.md.
package main

import (
	"os"

	"github.com/llmslo/llm_slo_exporter/app"
)

func main() {
	os.Exit(app.Run(os.Args[1:], os.Stdout, os.Stderr))
}
