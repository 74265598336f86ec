// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package app

import (
	"os"
	"os/exec"
	"testing"
)

// workerEnv marks a re-execution of the test binary as a worker process:
// the tests run real worker processes without needing a built binary.
const workerEnv = "LLMSLO_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		os.Exit(Run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// testWorkerCommand runs worker i as this test binary's worker mode.
func testWorkerCommand(i int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], WorkerCommand, "--log.level=info")
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	return cmd
}
