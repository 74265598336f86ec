// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package prober

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmslo/llm_slo_exporter/prober/api"
	"github.com/llmslo/llm_slo_exporter/record"
)

// FuzzConsume runs any body through the real event reader and parser of
// any adapter, as a probe reads it, whole and split at byte boundaries
// drawn from seed: never a panic, a result that does not depend on how
// the bytes arrived, and the invariants of a Stream. The seeds are the
// golden corpus's bodies.
func FuzzConsume(f *testing.F) {
	names := api.Names()
	for _, c := range loadCorpus(f) {
		if c.ext == "http" {
			continue
		}
		for i, n := range names {
			if n == c.want.API {
				f.Add(c.body, uint8(i), uint64(len(c.body)), uint16(0))
			}
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, apiIndex uint8, seed uint64, caps uint16) {
		ad, _ := api.Lookup(names[int(apiIndex)%len(names)])
		// Small caps, from caps, reach the too_large paths.
		lim := Limits{MaxEventBytes: 1 << 20}
		if caps != 0 {
			lim = Limits{MaxEventBytes: 1024 + int(caps%4096), MaxStreamBytes: int64(caps % 8192), MaxEvents: int(caps % 64)}
		}
		whole := consumeBody(ad, bytes.NewReader(body), lim)
		checkStreamInvariants(t, whole)
		r := rand.New(rand.NewPCG(seed, uint64(apiIndex)))
		split := consumeBody(ad, &pieceReader{b: body, next: func() int { return 1 + r.IntN(1+int(seed%300)) }}, lim)
		if got, want := outcomeOf(split), outcomeOf(whole); got != want {
			t.Fatalf("%s: split result %+v\nwhole result %+v", ad.Name(), got, want)
		}
	})
}

// checkStreamInvariants checks what holds for every stream, whatever its
// bytes.
func checkStreamInvariants(t *testing.T, st *Stream) {
	t.Helper()
	if !st.Reason.Valid() || st.Reason.IsDrop() {
		t.Fatalf("reason %v", st.Reason)
	}
	if st.Reason == record.OK && (st.OutputEvents == 0 || st.Done.IsZero() || st.Detail != "") {
		t.Fatalf("success without output or end: %+v", st)
	}
	if st.Reason != record.OK && (st.Detail == "" || !utf8.ValidString(st.Detail) || strings.ContainsAny(st.Detail, "\x00\n\r")) {
		t.Fatalf("failure %v with detail %q", st.Reason, st.Detail)
	}
	if st.OutputEvents > st.Events || (st.OutputEvents > 0) != (st.FirstOutput >= 0) || st.FirstOutput >= st.Events {
		t.Fatalf("events %d, output events %d, first output %d", st.Events, st.OutputEvents, st.FirstOutput)
	}
	if st.FirstAnswer >= 0 && st.FirstAnswer < st.FirstOutput {
		t.Fatalf("first answer %d before first output %d", st.FirstAnswer, st.FirstOutput)
	}
	if len(st.ITL) > MaxITL || st.Estimate < st.OutputEvents {
		t.Fatalf("%d ITL entries, estimate %d for %d output events", len(st.ITL), st.Estimate, st.OutputEvents)
	}
	if n, _ := st.Tokens(); n < 0 {
		t.Fatalf("%d tokens", n)
	}
	checkStreamTimes(t, st)
}
