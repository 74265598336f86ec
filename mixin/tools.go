//go:build tools

// Package tools pins the version of the jsonnet command that mixin.mk
// builds into .bin/: go-jsonnet, through this module's go.mod.
package tools

import (
	_ "github.com/google/go-jsonnet/cmd/jsonnet"
	_ "github.com/google/go-jsonnet/cmd/jsonnetfmt"
)
