// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package rulegen

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite the golden file from the fixtures")

// fixtures reads the fixture rule files that stand in for the mixin's.
func fixtures(t *testing.T) []Source {
	t.Helper()
	var sources []Source
	for _, name := range []string{"prometheus_rules.yaml", "prometheus_alerts.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "mixin", name))
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, Source{Name: "mixin/" + name, Data: data})
	}
	return sources
}

func TestGenerateGolden(t *testing.T) {
	got, err := Generate(DefaultObject(), fixtures(t)...)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("..", "..", "testdata", "prometheusrule.golden.yaml")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("Generate() differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", golden, got, want)
	}
}

// TestGenerateKeepsRules checks that the generated object carries every
// group and rule of the sources unchanged, by decoding it back.
func TestGenerateKeepsRules(t *testing.T) {
	sources := fixtures(t)
	out, err := Generate(DefaultObject(), sources...)
	if err != nil {
		t.Fatal(err)
	}
	var want []ruleGroup
	for _, src := range sources {
		f, err := parse(src)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, f.Groups...)
	}
	var got prometheusRule
	if err := decodeStrict(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Groups) != len(want) {
		t.Fatalf("got %d groups, want %d", len(got.Spec.Groups), len(want))
	}
	for i := range want {
		g, w := got.Spec.Groups[i], want[i]
		if g.Name != w.Name || g.Interval != w.Interval || len(g.Rules) != len(w.Rules) {
			t.Fatalf("group %d: got %+v, want %+v", i, g, w)
		}
		for j := range w.Rules {
			if g.Rules[j].Expr != w.Rules[j].Expr || g.Rules[j].Alert != w.Rules[j].Alert || g.Rules[j].Record != w.Rules[j].Record {
				t.Errorf("group %q rule %d: got %+v, want %+v", w.Name, j, g.Rules[j], w.Rules[j])
			}
		}
	}
	if got.Kind != "PrometheusRule" || got.APIVersion != "monitoring.coreos.com/v1" || got.Metadata.Name != "llm-slo-exporter" {
		t.Errorf("got kind %q, apiVersion %q, name %q", got.Kind, got.APIVersion, got.Metadata.Name)
	}
}

func TestGenerateErrors(t *testing.T) {
	tests := []struct {
		name    string
		sources []Source
		want    string
	}{
		{
			name:    "empty file",
			sources: []Source{{Name: "a.yaml", Data: []byte("")}},
			want:    "a.yaml: empty rule file",
		},
		{
			name:    "unknown group field",
			sources: []Source{{Name: "a.yaml", Data: []byte("groups:\n  - name: g\n    evaluation_interval: 1m\n    rules:\n      - record: r\n        expr: up\n")}},
			want:    "a.yaml: yaml: unmarshal errors:\n  line 3: field evaluation_interval not found in type rulegen.ruleGroup",
		},
		{
			name:    "unknown rule field",
			sources: []Source{{Name: "a.yaml", Data: []byte("groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up\n        severity: page\n")}},
			want:    "a.yaml: yaml: unmarshal errors:\n  line 6: field severity not found in type rulegen.rule",
		},
		{
			name:    "two documents",
			sources: []Source{{Name: "a.yaml", Data: []byte("groups: []\n---\ngroups: []\n")}},
			want:    "a.yaml: more than one YAML document",
		},
		{
			name:    "group without name",
			sources: []Source{{Name: "a.yaml", Data: []byte("groups:\n  - rules:\n      - record: r\n        expr: up\n")}},
			want:    "a.yaml: groups[0]: name is required",
		},
		{
			name:    "group without rules",
			sources: []Source{{Name: "a.yaml", Data: []byte("groups:\n  - name: g\n    rules: []\n")}},
			want:    `a.yaml: group "g": no rules`,
		},
		{
			name:    "rule neither record nor alert",
			sources: []Source{{Name: "a.yaml", Data: []byte("groups:\n  - name: g\n    rules:\n      - expr: up\n")}},
			want:    `a.yaml: group "g": rules[0]: one of record and alert is required`,
		},
		{
			name:    "rule both record and alert",
			sources: []Source{{Name: "a.yaml", Data: []byte("groups:\n  - name: g\n    rules:\n      - record: r\n        alert: A\n        expr: up\n")}},
			want:    `a.yaml: group "g": rules[0]: record and alert are exclusive`,
		},
		{
			name:    "rule without expr",
			sources: []Source{{Name: "a.yaml", Data: []byte("groups:\n  - name: g\n    rules:\n      - alert: A\n")}},
			want:    `a.yaml: group "g": rules[0]: expr is required`,
		},
		{
			name:    "recording rule with for",
			sources: []Source{{Name: "a.yaml", Data: []byte("groups:\n  - name: g\n    rules:\n      - record: r\n        expr: up\n        for: 5m\n")}},
			want:    `a.yaml: group "g": rules[0]: recording rule "r" has alert fields (for, keep_firing_for, annotations)`,
		},
		{
			name: "group in both files",
			sources: []Source{
				{Name: "a.yaml", Data: []byte("groups:\n  - name: g\n    rules:\n      - record: r\n        expr: up\n")},
				{Name: "b.yaml", Data: []byte("groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up\n")},
			},
			want: `b.yaml: group "g" is also defined in a.yaml`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(DefaultObject(), tc.sources...)
			if err == nil {
				t.Fatalf("Generate() succeeded, want error %q", tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("Generate() error:\n got %q\nwant %q", err.Error(), tc.want)
			}
		})
	}
}

func TestGenerateNoGroups(t *testing.T) {
	out, err := Generate(DefaultObject(), Source{Name: "a.yaml", Data: []byte("groups: []\n")})
	if err != nil {
		t.Fatal(err)
	}
	var got prometheusRule
	if err := decodeStrict(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Groups == nil || len(got.Spec.Groups) != 0 {
		t.Errorf("got groups %#v, want an empty list", got.Spec.Groups)
	}
}

func decodeStrict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	return dec.Decode(v)
}
