// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package jsonscan

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzScan checks the scanner against encoding/json: the same inputs are
// valid (except input nested deeper than MaxDepth, which encoding/json
// accepts), a walk of the top level fails on every invalid input, and Get
// finds what encoding/json finds along a few paths.
func FuzzScan(f *testing.F) {
	for _, tc := range validCases {
		f.Add([]byte(tc.in))
	}
	for _, s := range []string{
		sampleChunk,
		`{"a":{"b":[1,"x",null]},"a":{"b":{"c":"\ud83d\ude00"}}}`,
		`{"choices":[{"delta":{"content":"\\\"","reasoning":null}}],"usage":{"completion_tokens":3}}`,
		`[{"a":1},{"b":2}]`,
		`{"a\u0000":1,"a":"\u00e9"}`,
		"{\"a\":\"\xff\"}",
		`{"a":-0.0e-0,"b":1E+2}`,
	} {
		f.Add([]byte(s))
	}
	paths := [][]string{
		{"a"},
		{"a", "b"},
		{"0"},
		{"choices", "0", "delta", "content"},
		{"usage", "completion_tokens"},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Trusted walks of any bytes must end without a panic.
		var junk []string
		_ = walk(Value{Kind: Object, Raw: data, checked: true}, true, "", 0, &junk)
		_ = walk(Value{Kind: Array, Raw: data, checked: true}, true, "", 0, &junk)

		v, err := Parse(data)
		ours, ref := err == nil, json.Valid(data)
		if errors.Is(err, ErrTooDeep) {
			// encoding/json allows deeper nesting; and the depth error
			// may come before a syntax error further on.
			return
		}
		if ours != ref {
			t.Fatalf("Valid(%q) = %v (err %v), encoding/json says %v", data, ours, err, ref)
		}
		objErr := ObjectEach(data, func(_, _ Value) error { return nil })
		arrErr := ArrayEach(data, func(int, Value) error { return nil })
		if !ours {
			if objErr == nil || arrErr == nil {
				t.Fatalf("walking invalid %q succeeded: %v, %v", data, objErr, arrErr)
			}
			if g, err := Get(data, "a"); err == nil || g.Exists() {
				t.Fatalf("Get on invalid %q = %v, %v", data, g, err)
			}
			return
		}
		if (objErr == nil) != (v.Kind == Object) || (arrErr == nil) != (v.Kind == Array) {
			t.Fatalf("walks of %s %q: %v, %v", v.Kind, data, objErr, arrErr)
		}
		refV := decodeRef(t, data)
		switch x := refV.(type) {
		case map[string]any:
			n := 0
			it := IterObject(data)
			for it.Next() {
				if _, ok := x[string(it.Key().Unquote(nil))]; !ok {
					t.Fatalf("key %s not in encoding/json's map", it.Key().Raw)
				}
				n++
			}
			if n < len(x) {
				t.Fatalf("%d members, encoding/json has %d distinct keys", n, len(x))
			}
		case []any:
			n := 0
			_ = ArrayEach(data, func(int, Value) error { n++; return nil })
			if n != len(x) {
				t.Fatalf("%d elements, encoding/json has %d", n, len(x))
			}
		}
		for _, p := range paths {
			checkGet(t, data, refV, p...)
		}
		var slow, fast []string
		errSlow, errFast := walk(v, false, "", 0, &slow), walk(v, true, "", 0, &fast)
		if errSlow != nil || errFast != nil || !reflect.DeepEqual(slow, fast) {
			t.Fatalf("walks of %q differ: %v %q / %v %q", data, errSlow, slow, errFast, fast)
		}
	})
}
