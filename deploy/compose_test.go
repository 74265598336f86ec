// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package deploy_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"go.yaml.in/yaml/v3"
)

// composeFile is the docker-compose demo, relative to deploy/.
const composeFile = "compose/docker-compose.yml"

// loadCompose loads the compose file with compose-go, the loader of
// `docker compose`: it validates the file against the Compose
// specification's schema and resolves relative paths against the file's
// directory.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{composeFile}, cli.WithEnv(nil), cli.WithResolvedPaths(true))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", composeFile, err)
	}
	return p
}

// service returns the service called name.
func service(t *testing.T, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	s, err := p.GetService(name)
	if err != nil {
		t.Fatalf("%s: %v", composeFile, err)
	}
	return s
}

// mounts returns the bind mounts of a service, container path to host path.
func mounts(s types.ServiceConfig) map[string]string {
	m := map[string]string{}
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeBind {
			m[v.Target] = v.Source
		}
	}
	return m
}

// TestComposeReferences checks that every file the compose file refers to
// exists: build contexts, Dockerfiles and their target stages, and the
// sources of bind mounts, the mixin's generated files included. Docker would
// silently create a missing bind source as an empty directory.
func TestComposeReferences(t *testing.T) {
	p := loadCompose(t)
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	mixinDir := filepath.Join(root, "mixin") + string(filepath.Separator)
	for _, name := range p.ServiceNames() {
		s := service(t, p, name)
		t.Run(name, func(t *testing.T) {
			if s.Build != nil {
				checkBuild(t, s.Build)
			}
			for target, source := range mounts(s) {
				rel, _ := filepath.Rel(root, source)
				fi, err := os.Stat(source)
				switch {
				case errors.Is(err, os.ErrNotExist) && strings.HasPrefix(source, mixinDir):
					t.Errorf("mounts %s at %s, which does not exist: it is a file of the mixin; generate the mixin first", rel, target)
					continue
				case err != nil:
					t.Errorf("mounts %s at %s: %v", rel, target, err)
					continue
				}
				// A mount target that names a file needs a file, not a
				// directory, and the other way round.
				wantFile := slices.Contains([]string{".yml", ".yaml", ".json"}, filepath.Ext(target))
				if wantFile != fi.Mode().IsRegular() {
					t.Errorf("mounts %s at %s: file-ness of source and target differ", rel, target)
				}
			}
		})
	}
}

// checkBuild checks a service's build: the context and Dockerfile exist and
// the target stage is defined.
func checkBuild(t *testing.T, b *types.BuildConfig) {
	t.Helper()
	dockerfile := filepath.Join(b.Context, b.Dockerfile)
	if _, err := os.Stat(dockerfile); err != nil {
		t.Error(err)
		return
	}
	if b.Target == "" {
		return
	}
	if !slices.ContainsFunc(dockerfileStages(t), func(s instructions.Stage) bool { return s.Name == b.Target }) {
		t.Errorf("build target %q is not a stage of %s", b.Target, dockerfile)
	}
}

// prometheusConfig is the part of prometheus.yml that refers to files and
// services.
type prometheusConfig struct {
	RuleFiles []string `yaml:"rule_files"`
	Alerting  struct {
		Alertmanagers []struct {
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"alertmanagers"`
	} `yaml:"alerting"`
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		StaticConfigs []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
	} `yaml:"scrape_configs"`
}

// TestComposePrometheus checks that Prometheus's configuration is mounted
// where the image reads it, loads exactly the mounted mixin rule files, and
// scrapes services that exist.
func TestComposePrometheus(t *testing.T) {
	p := loadCompose(t)
	m := mounts(service(t, p, "prometheus"))
	src, ok := m["/etc/prometheus/prometheus.yml"]
	if !ok {
		t.Fatal("prometheus.yml is not mounted at /etc/prometheus/prometheus.yml, the image's default --config.file")
	}
	var cfg prometheusConfig
	readYAML(t, src, &cfg)

	for _, f := range cfg.RuleFiles {
		if _, ok := m[f]; !ok {
			t.Errorf("rule file %s is not mounted", f)
		}
	}
	for _, want := range []string{"prometheus_rules.yaml", "prometheus_alerts.yaml"} {
		if !slices.ContainsFunc(cfg.RuleFiles, func(f string) bool { return strings.HasSuffix(m[f], "/mixin/"+want) }) {
			t.Errorf("mixin/%s is not a rule file", want)
		}
	}

	var targets []string
	for _, am := range cfg.Alerting.Alertmanagers {
		for _, sc := range am.StaticConfigs {
			targets = append(targets, sc.Targets...)
		}
	}
	jobs := map[string]bool{}
	for _, sc := range cfg.ScrapeConfigs {
		jobs[sc.JobName] = true
		for _, st := range sc.StaticConfigs {
			targets = append(targets, st.Targets...)
		}
	}
	if !jobs["llm_slo_exporter"] {
		t.Error("no scrape job llm_slo_exporter")
	}
	for _, target := range targets {
		host, _, err := net.SplitHostPort(target)
		if err != nil {
			t.Errorf("target %q: %v", target, err)
			continue
		}
		if host != "localhost" && !slices.Contains(p.ServiceNames(), host) {
			t.Errorf("target %q is not a service of %s", target, composeFile)
		}
	}
}

// TestComposeGrafana checks that the dashboard provider reads the mounted
// mixin dashboards and that the data source is the demo's Prometheus.
func TestComposeGrafana(t *testing.T) {
	p := loadCompose(t)
	m := mounts(service(t, p, "grafana"))

	provisioning := map[string]string{}
	for _, kind := range []string{"datasources", "dashboards"} {
		dir, ok := m["/etc/grafana/provisioning/"+kind]
		if !ok {
			t.Fatalf("/etc/grafana/provisioning/%s is not mounted", kind)
		}
		provisioning[kind] = dir
	}

	var dashboards struct {
		Providers []struct {
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, filepath.Join(provisioning["dashboards"], "llm_slo_exporter.yml"), &dashboards)
	if len(dashboards.Providers) != 1 {
		t.Fatalf("got %d dashboard providers, want 1", len(dashboards.Providers))
	}
	dir, ok := m[dashboards.Providers[0].Options.Path]
	if !ok {
		t.Fatalf("the dashboard provider reads %s, which is not mounted", dashboards.Providers[0].Options.Path)
	}
	if !strings.HasSuffix(dir, "/mixin/dashboards_out") {
		t.Errorf("the dashboards come from %s, not mixin/dashboards_out", dir)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(files) == 0 {
		t.Errorf("mixin/dashboards_out has no dashboard (*.json): generate the mixin first")
	}

	var datasources struct {
		Datasources []struct {
			Type string `yaml:"type"`
			URL  string `yaml:"url"`
		} `yaml:"datasources"`
	}
	readYAML(t, filepath.Join(provisioning["datasources"], "prometheus.yml"), &datasources)
	for _, ds := range datasources.Datasources {
		u, err := url.Parse(ds.URL)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(p.ServiceNames(), u.Hostname()) {
			t.Errorf("data source %s is not a service of %s", ds.URL, composeFile)
		}
	}
}

// TestComposeAlertmanager checks the assembly of Alertmanager's
// configuration: the demo's alertmanager.yml followed by the mixin's inhibit
// rule, which must be a fragment with the single key inhibit_rules.
func TestComposeAlertmanager(t *testing.T) {
	p := loadCompose(t)
	s := service(t, p, "alertmanager")
	m := mounts(s)
	entrypoint := strings.Join(s.Entrypoint, " ")
	var parts []byte
	for _, target := range []string{"/etc/alertmanager/alertmanager.yml", "/etc/alertmanager/inhibit.yml"} {
		if !strings.Contains(entrypoint, target) {
			t.Errorf("the entrypoint does not read %s", target)
		}
		src, ok := m[target]
		if !ok {
			t.Fatalf("%s is not mounted", target)
		}
		data, err := os.ReadFile(src)
		if errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s does not exist: it is a file of the mixin; generate the mixin first", src)
		}
		if err != nil {
			t.Fatal(err)
		}
		var keys map[string]any
		if err := yaml.Unmarshal(data, &keys); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if target == "/etc/alertmanager/inhibit.yml" {
			rules, ok := keys["inhibit_rules"].([]any)
			if len(keys) != 1 || !ok || len(rules) == 0 {
				t.Errorf("%s must hold exactly one key, inhibit_rules, with a list of rules; got keys %v", src, slices.Sorted(maps.Keys(keys)))
			}
		} else if _, ok := keys["inhibit_rules"]; ok {
			t.Errorf("%s has inhibit_rules; they come from the mixin", src)
		}
		parts = append(parts, data...)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			parts = append(parts, '\n')
		}
	}
	var merged map[string]any
	if err := yaml.Unmarshal(parts, &merged); err != nil {
		t.Errorf("the assembled alertmanager configuration is not valid YAML: %v", err)
	}
}

// TestComposeExporterConfig checks the exporter's configuration in the demo:
// it is mounted where the command reads it, is valid, and probes services of
// the demo.
func TestComposeExporterConfig(t *testing.T) {
	p := loadCompose(t)
	s := service(t, p, "exporter")
	file := flagValue(s.Command, "--config.file")
	src, ok := mounts(s)[file]
	if !ok {
		t.Fatalf("--config.file=%s is not mounted", file)
	}
	var cfg struct {
		Targets []struct {
			URL string `yaml:"url"`
		} `yaml:"targets"`
	}
	readYAML(t, src, &cfg)
	for _, tg := range cfg.Targets {
		u, err := url.Parse(tg.URL)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(p.ServiceNames(), u.Hostname()) {
			t.Errorf("target %s is not a service of %s", tg.URL, composeFile)
		}
	}
	if bin := os.Getenv("LLMSLO_EXPORTER_BIN"); bin != "" {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkConfig(bin, data, t.TempDir()); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}

// readYAML decodes a YAML file into v, rejecting duplicate keys.
func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestComposePromtool runs `promtool check config` on the demo's Prometheus
// configuration, with the container paths of the mounted files replaced by
// their paths here, so that the mixin's rule files are checked as this
// Prometheus loads them. make deploy-check sets PROMTOOL to the promtool
// pinned in tools/go.mod.
func TestComposePromtool(t *testing.T) {
	promtool := os.Getenv("PROMTOOL")
	if promtool == "" {
		t.Skip("PROMTOOL is not set; make deploy-check sets it")
	}
	p := loadCompose(t)
	m := mounts(service(t, p, "prometheus"))
	data, err := os.ReadFile(m["/etc/prometheus/prometheus.yml"])
	if err != nil {
		t.Fatal(err)
	}
	for target, source := range m {
		data = bytes.ReplaceAll(data, []byte(target), []byte(source))
	}
	path := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "config", path).CombinedOutput()
	if err != nil {
		t.Errorf("promtool check config: %v\n%s", err, out)
	}
}
