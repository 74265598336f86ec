//go:build tools

// Package tools pins the versions of the command-line tools that the
// Makefile builds (promtool). It lives in its own module so that the
// Prometheus server's dependency tree never enters the exporter's go.mod.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
