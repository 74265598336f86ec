//go:build tools

// Package tools pins the versions of the command-line tools and servers
// that the Makefiles build: promtool (Makefile), and the Prometheus and
// Alertmanager servers that the mixin's end-to-end test runs
// (mixin/mixin.mk). It lives in its own module so that the Prometheus
// server's dependency tree never enters the exporter's go.mod.
package tools

import (
	_ "github.com/prometheus/alertmanager/cmd/alertmanager"
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
