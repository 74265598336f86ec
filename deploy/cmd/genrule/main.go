// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Command genrule writes deploy/kubernetes/prometheusrule.yaml from the
// mixin's generated rule files. Run it from deploy/ (make deploy-manifests
// does); the default paths are relative to that directory.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/llmslo/llm_slo_exporter/deploy/internal/rulegen"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("genrule", flag.ContinueOnError)
	rules := fs.String("rules", "../mixin/prometheus_rules.yaml", "Recording rules file of the mixin.")
	alerts := fs.String("alerts", "../mixin/prometheus_alerts.yaml", "Alerting rules file of the mixin.")
	out := fs.String("out", "kubernetes/prometheusrule.yaml", "PrometheusRule file to write.")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var sources []rulegen.Source
	for _, path := range []string{*rules, *alerts} {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "genrule: %v (generate the mixin first)\n", err)
			return 1
		}
		sources = append(sources, rulegen.Source{Name: sourceName(path), Data: data})
	}
	data, err := rulegen.Generate(rulegen.DefaultObject(), sources...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "genrule: %v\n", err)
		return 1
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "genrule: %v\n", err)
		return 1
	}
	return 0
}

// sourceName names a rule file relative to the repository root (the parent
// of deploy/), so that the output does not depend on where it was made.
func sourceName(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	root, err := filepath.Abs("..")
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}
