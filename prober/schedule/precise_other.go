// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package schedule

// Precise falls back to Go's timers where timerfd does not exist.
type Precise struct{ System }
