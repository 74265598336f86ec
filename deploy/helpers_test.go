// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Package deploy_test checks the deployment files of llm_slo_exporter: the
// Kubernetes kustomizations, the docker-compose demo, the systemd unit, the
// Dockerfile and every configuration file they ship. The tests run from
// deploy/, the root of this module; the repository root is its parent.
package deploy_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// repoRoot is the repository root, relative to deploy/.
const repoRoot = ".."

// decodeJSONStrict decodes one JSON document into v, rejecting fields that v
// does not have and trailing data.
func decodeJSONStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON document")
	}
	return nil
}

// exporterConfig holds the few fields of an llm_slo_exporter configuration
// that the deployment files must agree with. It is decoded leniently: the
// exporter's own --config.check validates the whole file.
type exporterConfig struct {
	Workers *int `yaml:"workers"`
	Targets []struct {
		Name             string `yaml:"name"`
		HTTPClientConfig struct {
			Authorization struct {
				CredentialsFile string `yaml:"credentials_file"`
			} `yaml:"authorization"`
		} `yaml:"http_client_config"`
	} `yaml:"targets"`
}

// workers returns the worker count, with the exporter's default of 2.
func (c exporterConfig) workers() int {
	if c.Workers == nil {
		return 2
	}
	return *c.Workers
}

func parseExporterConfig(data []byte) (exporterConfig, error) {
	var c exporterConfig
	err := yaml.Unmarshal(data, &c)
	return c, err
}

// exporterBinary returns the llm_slo_exporter binary named by
// LLMSLO_EXPORTER_BIN (make deploy-check builds it and sets it), or skips
// the test when it is not set.
func exporterBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("LLMSLO_EXPORTER_BIN")
	if bin == "" {
		t.Skip("LLMSLO_EXPORTER_BIN is not set; make deploy-check sets it")
	}
	return bin
}

// checkConfig runs `llm_slo_exporter --config.check` on a configuration.
func checkConfig(bin string, data []byte, dir string) error {
	path := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	out, err := exec.Command(bin, "--config.check", "--config.file="+path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// readVersion returns the content of the repository's VERSION file.
func readVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}
