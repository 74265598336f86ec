// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadGood(t *testing.T) {
	c, data, err := LoadFile("testdata/good.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 {
		t.Fatal("no bytes returned")
	}
	if c.Workers != 2 || c.Seed != 42 || len(c.Targets) != 2 {
		t.Fatalf("got %+v", c)
	}
	sim := c.Targets[0]
	if sim.Rate != 2 || sim.MaxInFlight != 64 || sim.Timeout != Duration(time.Minute) || sim.Request.MaxTokens != 32 || !sim.Request.IgnoreEOS {
		t.Errorf("sim = %+v", sim)
	}
	so, ok := sim.Request.ExtraBody["stream_options"].(map[string]any)
	if !ok || so["continuous_usage_stats"] != true {
		t.Errorf("extra_body = %#v", sim.Request.ExtraBody)
	}
	// Defaults of the second target.
	comp := c.Targets[1]
	if comp.MaxInFlight != DefaultMaxInFlight || comp.Timeout != DefaultTimeout || comp.Request.MaxTokens != DefaultMaxTokens ||
		comp.Request.Prompt != DefaultPrompt || comp.MaxEventBytes != DefaultMaxEventBytes || !comp.HTTPClientConfig.FollowRedirects {
		t.Errorf("defaults not applied: %+v", comp)
	}
}

func TestLoadEmpty(t *testing.T) {
	c, _, err := LoadFile("testdata/empty.yml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Workers != DefaultWorkers || len(c.Targets) != 0 {
		t.Errorf("got %+v", c)
	}
}

func TestLoadBad(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"unknown-field.yml", "testdata/unknown-field.yml:7: field rte not found in type config.plain"},
		{"unknown-nested.yml", "testdata/unknown-nested.yml:7: field bearer_tokn not found in type config.plain"},
		{"bad-rate.yml", "testdata/bad-rate.yml:5: targets[0].rate: must be > 0, got -1"},
		{"duplicate-name.yml", `testdata/duplicate-name.yml:6: targets[1].name: duplicate target name "sim" (also targets[0])`},
		{"missing-model.yml", "testdata/missing-model.yml:2: targets[0].model: is required"},
		{"bad-url.yml", `testdata/bad-url.yml:3: targets[0].url: scheme must be http or https, got "ftp"`},
		{"bad-buckets.yml", "testdata/bad-buckets.yml:7: targets[0].buckets.tpot: edges must be strictly increasing (0.05 after 0.1)"},
		{"in-flight-below-workers.yml", "testdata/in-flight-below-workers.yml:7: targets[0].max_in_flight: must be at least workers (4), since the cap is split over the workers; got 2"},
		{"bad-duration.yml", `testdata/bad-duration.yml:6: not a valid duration: "soon"`},
		{"bad-api.yml", `testdata/bad-api.yml:4: targets[0].api: unknown api "openai-chatt" (known: anthropic, llamacpp, ollama, openai-chat, openai-completions, sglang, tgi, triton)`},
		{"over-budget.yml", "testdata/over-budget.yml:5: targets[0].rate: rate 1000 probes/s is 3.6e+06 probes/hour, over budget.probes_per_hour (36000): probing paid APIs costs money, so raise the budget explicitly (0 means no cap)"},
		{"bad-workers.yml", "testdata/bad-workers.yml:1: workers: must be between 1 and 256, got 0"},
		{"bad-yaml.yml", "testdata/bad-yaml.yml:1: did not find expected '-' indicator"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			_, _, err := LoadFile(filepath.Join("testdata", tc.file))
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("error = %q\nwant    %q", err.Error(), tc.want)
			}
		})
	}
}

func TestRedacted(t *testing.T) {
	c, _, err := LoadFile("testdata/good.yml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, secret := range []string{"sk-live-0123456789", "hunter2-token", "pass@", "key=abc"} {
		if strings.Contains(s, secret) {
			t.Errorf("redacted config contains %q:\n%s", secret, s)
		}
	}
	for _, want := range []string{"<secret>", "name: sim", "user:xxxxx@llm.example"} {
		if !strings.Contains(s, want) {
			t.Errorf("redacted config lacks %q:\n%s", want, s)
		}
	}
	// Redaction must not touch the live configuration.
	if string(c.Targets[0].Request.Headers["X-Api-Key"]) != "sk-live-0123456789" || !strings.Contains(c.Targets[1].URL, "key=abc") {
		t.Error("Redacted modified the configuration")
	}
}

func TestChecksum(t *testing.T) {
	a, b := Checksum([]byte("a")), Checksum([]byte("b"))
	if a == b || len(a) != 64 || a != Checksum([]byte("a")) {
		t.Errorf("checksums %q %q", a, b)
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://127.0.0.1:8000/v1/chat/completions", "http://127.0.0.1:8000/v1/chat/completions"},
		// A path that says "secret" is not a secret and stays as it is.
		{"https://llm.example/secret-model/v1/completions?key=abc&b=1", "https://llm.example/secret-model/v1/completions?b=<secret>&key=<secret>"},
		{"https://user:pass@llm.example/v1", "https://user:xxxxx@llm.example/v1"},
		{"https://user@llm.example/v1", "https://user@llm.example/v1"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := RedactURL(tc.in); got != tc.want {
				t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
