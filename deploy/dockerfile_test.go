// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package deploy_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
	digest "github.com/opencontainers/go-digest"
)

// offlineResolver stands in for the image registry when the Dockerfile is
// linted: every base image resolves to an empty linux/amd64 image, so that
// linting needs no network.
type offlineResolver struct{}

func (offlineResolver) ResolveImageConfig(_ context.Context, ref string, _ sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	return ref, digest.FromString(ref), []byte(`{"architecture":"amd64","os":"linux","config":{}}`), nil
}

// TestDockerfileLint runs BuildKit's Dockerfile linter, the checks of
// `docker build --check`, without a Docker engine.
func TestDockerfileLint(t *testing.T) {
	dt, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	sm := llb.NewSourceMap(nil, "Dockerfile", "Dockerfile", dt)
	sm.Definition = &llb.Definition{}
	res, err := dockerfile2llb.DockerfileLint(context.Background(), dt, dockerfile2llb.ConvertOpt{
		SourceMap:    sm,
		MetaResolver: offlineResolver{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		t.Errorf("Dockerfile: %s", res.Error.Message)
	}
	for _, w := range res.Warnings {
		line := 0
		if len(w.Location.Ranges) > 0 {
			line = int(w.Location.Ranges[0].Start.Line)
		}
		t.Errorf("Dockerfile:%d: %s: %s", line, w.RuleName, w.Detail)
	}
}

// dockerfileStages parses the Dockerfile into its stages.
func dockerfileStages(t *testing.T) []instructions.Stage {
	t.Helper()
	dt, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	ast, err := parser.Parse(bytes.NewReader(dt))
	if err != nil {
		t.Fatal(err)
	}
	stages, _, err := instructions.Parse(ast.AST, nil)
	if err != nil {
		t.Fatal(err)
	}
	return stages
}

// TestDockerfileRuntimeStages checks the conventions of the runtime images:
// a non-root numeric user, the port, the ENTRYPOINT/CMD split with the
// configuration path the image ships, and the OCI labels.
func TestDockerfileRuntimeStages(t *testing.T) {
	stages := dockerfileStages(t)
	tests := []struct {
		stage      string // "" is the last stage, the default image
		binary     string
		port       string
		configFlag string // CMD's flag that names a file COPY'd into the stage
	}{
		{stage: "", binary: "/bin/llm_slo_exporter", port: "10240", configFlag: "--config.file"},
		{stage: "llmsim", binary: "/bin/llmsim", port: "8000"},
	}
	for _, tc := range tests {
		name := tc.stage
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			st := stages[len(stages)-1]
			if tc.stage != "" {
				i := slices.IndexFunc(stages, func(s instructions.Stage) bool { return s.Name == tc.stage })
				if i < 0 {
					t.Fatalf("no stage %q", tc.stage)
				}
				st = stages[i]
			}
			var (
				user, entrypoint, cmd []string
				ports                 []string
				copied                []string
				labels                = map[string]string{}
			)
			for _, c := range st.Commands {
				switch c := c.(type) {
				case *instructions.UserCommand:
					user = []string{c.User}
				case *instructions.ExposeCommand:
					ports = append(ports, c.Ports...)
				case *instructions.EntrypointCommand:
					if c.PrependShell {
						t.Error("ENTRYPOINT is in shell form; signals would go to a shell")
					}
					entrypoint = c.CmdLine
				case *instructions.CmdCommand:
					if c.PrependShell {
						t.Error("CMD is in shell form")
					}
					cmd = c.CmdLine
				case *instructions.LabelCommand:
					for _, kv := range c.Labels {
						labels[kv.Key] = kv.Value
					}
				case *instructions.CopyCommand:
					copied = append(copied, c.DestPath)
				}
			}
			if !slices.Equal(user, []string{"65534:65534"}) {
				t.Errorf("USER %v, want 65534:65534 (nobody)", user)
			}
			if !slices.Equal(ports, []string{tc.port}) {
				t.Errorf("EXPOSE %v, want %s", ports, tc.port)
			}
			if !slices.Equal(entrypoint, []string{tc.binary}) {
				t.Errorf("ENTRYPOINT %v, want [%s]", entrypoint, tc.binary)
			}
			if !slices.Contains(copied, tc.binary) {
				t.Errorf("%s is not copied into the stage", tc.binary)
			}
			if tc.configFlag != "" {
				file := flagValue(cmd, tc.configFlag)
				if file == "" {
					t.Errorf("CMD %v has no %s", cmd, tc.configFlag)
				} else if !slices.Contains(copied, file) {
					t.Errorf("CMD's %s=%s is not a file copied into the image", tc.configFlag, file)
				}
			}
			for _, key := range []string{
				"org.opencontainers.image.title",
				"org.opencontainers.image.description",
				"org.opencontainers.image.source",
				"org.opencontainers.image.url",
				"org.opencontainers.image.documentation",
				"org.opencontainers.image.licenses",
				"org.opencontainers.image.version",
				"org.opencontainers.image.revision",
				"io.prometheus.image.variant",
			} {
				if labels[key] == "" {
					t.Errorf("no LABEL %s", key)
				}
			}
		})
	}
}

// TestDockerfileVersionLdflags checks that the build stage sets every
// variable of prometheus/common/version, as the Makefile does, so that
// --version and llm_slo_exporter_build_info are filled in the image.
func TestDockerfileVersionLdflags(t *testing.T) {
	var runs strings.Builder
	for _, st := range dockerfileStages(t) {
		for _, c := range st.Commands {
			if r, ok := c.(*instructions.RunCommand); ok {
				runs.WriteString(strings.Join(r.CmdLine, " "))
				runs.WriteString("\n")
			}
		}
	}
	for _, v := range []string{"Version", "Revision", "Branch", "BuildUser", "BuildDate"} {
		if want := "-X ${VPKG}." + v + "="; !strings.Contains(runs.String(), want) {
			t.Errorf("no RUN sets %s (want %q with VPKG=github.com/prometheus/common/version)", v, want)
		}
	}
	if !strings.Contains(runs.String(), "VPKG=github.com/prometheus/common/version") {
		t.Error("VPKG is not github.com/prometheus/common/version")
	}
	if !strings.Contains(runs.String(), "$(cat VERSION)") {
		t.Error("the version does not come from the VERSION file")
	}
}

// TestDockerfileContext checks that every file the Dockerfile copies from
// the build context exists and is not excluded by .dockerignore.
func TestDockerfileContext(t *testing.T) {
	f, err := os.Open(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, st := range dockerfileStages(t) {
		for _, c := range st.Commands {
			if cp, ok := c.(*instructions.CopyCommand); ok && cp.From == "" {
				sources = append(sources, cp.SourcePaths...)
			}
		}
	}
	// The build also reads these through `COPY . .`.
	sources = append(sources, "VERSION", "cmd/llm_slo_exporter/main.go", "cmd/llmsim/main.go")
	for _, src := range sources {
		t.Run(src, func(t *testing.T) {
			if src == "." {
				return
			}
			if _, err := os.Stat(filepath.Join(repoRoot, src)); err != nil {
				t.Error(err)
			}
			excluded, err := pm.MatchesOrParentMatches(path.Clean(src))
			if err != nil {
				t.Fatal(err)
			}
			if excluded {
				t.Errorf("%s is excluded from the build context by .dockerignore", src)
			}
		})
	}
}

// TestDefaultConfigValid runs the exporter's --config.check on the
// configuration that the image ships and the systemd unit's install steps
// copy.
func TestDefaultConfigValid(t *testing.T) {
	bin := exporterBinary(t)
	data, err := os.ReadFile("llm_slo_exporter.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkConfig(bin, data, t.TempDir()); err != nil {
		t.Error(fmt.Errorf("llm_slo_exporter.yml: %w", err))
	}
}
