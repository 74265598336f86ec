// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Package mixin_test holds the tests of the llm_slo_exporter monitoring
// mixin: drift of the generated files, the mixtool lint rules, PromQL
// parsing and the metric contract, dashboard validation, the coverage of
// the promtool rule tests, and the end-to-end scenarios with real
// Prometheus and Alertmanager servers.
package mixin_test

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-jsonnet"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// metricsDoc is the exporter's metric reference, relative to this package.
const metricsDoc = "../docs/metrics.md"

// newVM returns a jsonnet VM that resolves imports from the mixin's
// directory, as `jsonnet` run from mixin/ does.
func newVM(t *testing.T) *jsonnet.VM {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	vm := jsonnet.MakeVM()
	vm.Importer(&jsonnet.FileImporter{JPaths: []string{dir}})
	return vm
}

// evalString evaluates a jsonnet file that yields a string (jsonnet -S).
func evalString(t *testing.T, file string) string {
	t.Helper()
	vm := newVM(t)
	vm.StringOutput = true
	out, err := vm.EvaluateFile(file)
	if err != nil {
		t.Fatalf("evaluating %s: %v", file, err)
	}
	return out
}

// evalMulti evaluates a jsonnet file that yields one file per field
// (jsonnet -m).
func evalMulti(t *testing.T, file string) map[string]string {
	t.Helper()
	out, err := newVM(t).EvaluateFileMulti(file)
	if err != nil {
		t.Fatalf("evaluating %s: %v", file, err)
	}
	return out
}

// renderWith renders the mixin with a jsonnet object merged into it (for
// example `{ _config+:: { ... } }`) and returns its alerts and rules as
// YAML and its configuration as JSON.
func renderWith(t *testing.T, override string) (alerts, rules string, config map[string]any) {
	t.Helper()
	r := render(t, override)
	return r.Alerts, r.Rules, r.Config
}

// rendered is the mixin rendered by render.
type rendered struct {
	Alerts     string                     `json:"alerts"`
	Rules      string                     `json:"rules"`
	Config     map[string]any             `json:"config"`
	Dashboards map[string]json.RawMessage `json:"dashboards"`
}

// render renders the mixin with a jsonnet object merged into it.
func render(t *testing.T, override string) rendered {
	t.Helper()
	vm := newVM(t)
	snippet := "local m = (import 'mixin.libsonnet') + " + override + ";\n" +
		"{ alerts: std.manifestYamlDoc(m.prometheusAlerts, quote_keys=false), rules: std.manifestYamlDoc(m.prometheusRules, quote_keys=false), config: m._config, dashboards: m.grafanaDashboards }"
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	out, err := vm.EvaluateAnonymousSnippet(filepath.Join(dir, "render.jsonnet"), snippet)
	if err != nil {
		t.Fatalf("rendering the mixin: %v", err)
	}
	var r rendered
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// promqlParser is the PromQL parser of the pinned Prometheus version.
var promqlParser = parser.NewParser(parser.Options{})

// parseRuleFile parses and validates a rule file as Prometheus does.
func parseRuleFile(t *testing.T, file string) *rulefmt.RuleGroups {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return parseRules(t, file, b)
}

// parseRules parses and validates rule groups as Prometheus does.
func parseRules(t *testing.T, name string, b []byte) *rulefmt.RuleGroups {
	t.Helper()
	groups, errs := rulefmt.Parse(b, false, model.UTF8Validation, promqlParser, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, err := range errs {
		t.Errorf("%s: %v", name, err)
	}
	if groups == nil {
		t.Fatalf("%s: no rule groups", name)
	}
	return groups
}

// metricContract is what docs/metrics.md says about the metrics.
type metricContract struct {
	// types maps every metric name to its type.
	types map[string]string
	// edges maps a bucket family (ttft, ttfa, tpot, itl, ntpot, e2e, lag)
	// to its default classic bucket edges, as written.
	edges map[string][]string
}

// names returns every series name the contract allows: the metric names,
// and the _bucket, _sum and _count series of histograms.
func (c metricContract) names() map[string]bool {
	names := map[string]bool{}
	for name, typ := range c.types {
		names[name] = true
		if typ == "histogram" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[name+s] = true
			}
		}
	}
	return names
}

var (
	metricRow = regexp.MustCompile("^\\| `([a-z_:]+)` \\| (counter|gauge|histogram|summary) \\|")
	familyOf  = map[string][]string{
		"TTFT, TTFA":             {"ttft", "ttfa"},
		"TPOT, ITL, NTPOT":       {"tpot", "itl", "ntpot"},
		"E2E":                    {"e2e"},
		"schedule lag, loop lag": {"lag"},
	}
)

// readMetricContract parses the metric tables and the bucket table of
// docs/metrics.md.
func readMetricContract(t *testing.T) metricContract {
	t.Helper()
	f, err := os.Open(metricsDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := metricContract{types: map[string]string{}, edges: map[string][]string{}}
	inBuckets := false
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "#") {
			inBuckets = strings.Contains(line, "Default classic buckets")
			continue
		}
		if m := metricRow.FindStringSubmatch(line); m != nil {
			c.types[m[1]] = m[2]
			continue
		}
		if inBuckets && strings.HasPrefix(line, "| ") {
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			if len(cells) != 2 {
				continue
			}
			for _, fam := range familyOf[cells[0]] {
				c.edges[fam] = strings.Split(cells[1], ", ")
			}
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(c.types) < 30 || len(c.edges) != 7 {
		t.Fatalf("%s: parsed %d metrics and %d bucket families; the table format changed?", metricsDoc, len(c.types), len(c.edges))
	}
	return c
}

// grafanaVariable matches Grafana's variables in dashboard queries.
var (
	grafanaInterval = regexp.MustCompile(`\$__(rate_interval|interval|range)`)
	grafanaVariable = regexp.MustCompile(`\$\{?[a-zA-Z_][a-zA-Z0-9_]*\}?`)
)

// substituteGrafanaVariables replaces Grafana's variables with values
// that make a dashboard query plain PromQL: intervals with interval,
// other variables (always inside a regex matcher here) with ".+".
func substituteGrafanaVariables(expr, interval string) string {
	expr = grafanaInterval.ReplaceAllString(expr, interval)
	return grafanaVariable.ReplaceAllString(expr, ".+")
}

// metricNames returns the sorted metric names that an expression selects.
func metricNames(t *testing.T, expr string) ([]string, error) {
	t.Helper()
	node, err := promqlParser.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			name := vs.Name
			for _, m := range vs.LabelMatchers {
				if m.Name == model.MetricNameLabel {
					name = m.Value
				}
			}
			seen[name] = true
		}
		return nil
	})
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}
