// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"maps"
	"slices"
)

// adapters maps each adapter's Name to the adapter. It is filled by the
// init functions of the files that define adapters (one register call per
// adapter), so that adding an API touches no shared list.
var adapters = map[string]Adapter{}

// register adds a to the registry. It panics on a duplicate name: two
// adapters answering to one `api:` value is a programming error.
func register(a Adapter) {
	name := a.Name()
	if _, dup := adapters[name]; dup {
		panic("api: adapter " + name + " registered twice")
	}
	adapters[name] = a
}

// Lookup returns the adapter selected by the configuration value name
// (`api:`), and whether there is one.
func Lookup(name string) (Adapter, bool) {
	a, ok := adapters[name]
	return a, ok
}

// Names returns the names of all adapters, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(adapters))
}
