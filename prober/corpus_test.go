// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package prober

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmslo/llm_slo_exporter/config"
	"github.com/llmslo/llm_slo_exporter/prober/api"
	"github.com/llmslo/llm_slo_exporter/record"
)

// The golden corpus: testdata/streams/<name>.<ext> holds a response body
// as a server sent it (.sse, .ndjson) or a whole HTTP response, status
// line and headers included (.http); <name>.expected says what probing it
// must give. Body cases run through the real event reader and adapter
// (consume), whole and split at random byte boundaries; HTTP cases run
// through a test server and Target.Probe.

const corpusDir = "../testdata/streams"

// expectation is the content of a .expected file.
type expectation struct {
	// API is the adapter's name (`api:`).
	API string `json:"api"`
	// Outcome is "ok" or "fail", and Reason the record.Reason's name.
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
	// Detail, when set, must be a substring of the failure detail.
	Detail string `json:"detail"`
	// TTFTEventIndex is the 0-based index of the first output event
	// among the events the reader returned, -1 for none. Body cases only.
	TTFTEventIndex *int `json:"ttft_event_index"`
	// TTFAEventIndex is the same for the first answer event; when absent
	// it equals TTFTEventIndex.
	TTFAEventIndex *int `json:"ttfa_event_index"`
	// OutputTokens and Estimated are N and whether it was estimated: the
	// server's count as the parser had it when the stream ended (also for
	// failures), or the stream's estimate.
	OutputTokens *int  `json:"output_tokens"`
	Estimated    *bool `json:"estimated"`
	// PromptTokens, OutputEvents and ITLEntries are checked when set.
	PromptTokens *int `json:"prompt_tokens"`
	OutputEvents *int `json:"output_events"`
	ITLEntries   *int `json:"itl_entries"`
	// Limits overrides the target's caps (the configuration's defaults
	// otherwise).
	Limits *struct {
		MaxEventBytes  int   `json:"max_event_bytes"`
		MaxStreamBytes int64 `json:"max_stream_bytes"`
		MaxEvents      int   `json:"max_events"`
	} `json:"limits"`
	// Source says where the stream comes from.
	Source string `json:"source"`
}

type corpusCase struct {
	name, path string
	ext        string
	body       []byte
	want       expectation
}

// loadCorpus reads every case of the corpus.
func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	exps, err := filepath.Glob(filepath.Join(corpusDir, "*.expected"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []corpusCase
	for _, e := range exps {
		name := strings.TrimSuffix(filepath.Base(e), ".expected")
		c := corpusCase{name: name}
		raw, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c.want); err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		for _, ext := range []string{"sse", "ndjson", "http"} {
			p := filepath.Join(corpusDir, name+"."+ext)
			if b, err := os.ReadFile(p); err == nil {
				if c.path != "" {
					t.Fatalf("%s: two stream files", name)
				}
				c.path, c.ext, c.body = p, ext, b
			}
		}
		if c.path == "" {
			t.Fatalf("%s: no .sse, .ndjson or .http file", name)
		}
		cases = append(cases, c)
	}
	// Every stream file has its expectation.
	all, _ := filepath.Glob(filepath.Join(corpusDir, "*"))
	for _, f := range all {
		base := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		if !slices.ContainsFunc(cases, func(c corpusCase) bool { return c.name == base }) {
			t.Errorf("%s has no .expected file", f)
		}
	}
	return cases
}

func TestCorpusSize(t *testing.T) {
	if n := len(loadCorpus(t)); n < 30 {
		t.Errorf("%d corpus cases, want at least 30", n)
	}
}

// fakeClock stamps each Read one millisecond after the previous one, so
// event times are deterministic and ordered.
type fakeClock struct{ n int }

func (c *fakeClock) now() time.Time {
	c.n++
	return time.Unix(1_800_000_000, 0).Add(time.Duration(c.n) * time.Millisecond)
}

// pieceReader returns b in pieces whose sizes come from next.
type pieceReader struct {
	b    []byte
	next func() int
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.b), max(1, r.next()))
	copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

// limitsFor returns the configuration's default caps, or the case's.
func limitsFor(e expectation) Limits {
	lim := Limits{MaxEventBytes: config.DefaultMaxEventBytes, MaxStreamBytes: config.DefaultMaxStreamBytes, MaxEvents: config.DefaultMaxEvents}
	if e.Limits != nil {
		lim = Limits{MaxEventBytes: e.Limits.MaxEventBytes, MaxStreamBytes: e.Limits.MaxStreamBytes, MaxEvents: e.Limits.MaxEvents}
		if lim.MaxEventBytes == 0 {
			lim.MaxEventBytes = config.DefaultMaxEventBytes
		}
	}
	return lim
}

// consumeBody runs body through ad's real event reader and parser, as
// Target.Probe does, and classifies a read error the same way. The
// stream's usage is the parser's at the end, failures included.
func consumeBody(ad api.Adapter, r io.Reader, lim Limits) *Stream {
	rd := newEventReader(ad.Framing(), lim.MaxEventBytes)
	clock := &fakeClock{}
	rd.Reset(r)
	rd.SetNow(clock.now)
	p := ad.NewParser()
	st := &Stream{}
	if err := consume(rd, p, lim, st); err != nil {
		st.Reason, st.Detail = classifyReadError(err, lim)
	}
	st.Usage = p.Usage()
	return st
}

// streamOutcome is what the corpus compares between runs of one case.
type streamOutcome struct {
	Reason                   record.Reason
	Detail                   string
	Events                   int
	FirstOutput, FirstAnswer int
	OutputEvents             int
	Tokens                   int
	Estimated                bool
	Usage                    api.Usage
	ITL                      int
}

func outcomeOf(st *Stream) streamOutcome {
	n, est := st.Tokens()
	return streamOutcome{st.Reason, st.Detail, st.Events, st.FirstOutput, st.FirstAnswer, st.OutputEvents, n, est, st.Usage, len(st.ITL)}
}

func TestCorpus(t *testing.T) {
	for _, c := range loadCorpus(t) {
		t.Run(c.name, func(t *testing.T) {
			ad, ok := api.Lookup(c.want.API)
			if !ok {
				t.Fatalf("unknown api %q", c.want.API)
			}
			wantReason := c.want.Reason
			if (wantReason == "ok") != (c.want.Outcome == "ok") {
				t.Fatalf("outcome %q contradicts reason %q", c.want.Outcome, wantReason)
			}
			if c.ext == "http" {
				checkHTTPCase(t, c)
				return
			}
			if wantFramed := map[string]api.Framing{"sse": api.SSE, "ndjson": api.NDJSON}[c.ext]; ad.Framing() != wantFramed {
				t.Fatalf("a .%s file for an adapter with framing %v", c.ext, ad.Framing())
			}
			lim := limitsFor(c.want)
			st := consumeBody(ad, bytes.NewReader(c.body), lim)
			whole := outcomeOf(st)
			checkExpectation(t, c.want, whole)
			checkStreamTimes(t, st)
			// The same bytes split anywhere give the same result: one
			// byte per Read, then random pieces.
			splits := []func() int{func() int { return 1 }}
			for seed := range uint64(8) {
				r := rand.New(rand.NewPCG(seed, 0x5eed))
				maxPiece := []int{3, 17, 200, 5000}[seed%4]
				splits = append(splits, func() int { return 1 + r.IntN(maxPiece) })
			}
			for i, next := range splits {
				st := consumeBody(ad, &pieceReader{b: c.body, next: next}, lim)
				if got := outcomeOf(st); got != whole {
					t.Errorf("split %d: %+v\nwhole:   %+v", i, got, whole)
				}
				checkStreamTimes(t, st)
			}
		})
	}
}

// checkExpectation compares a body case's outcome with its expectation.
func checkExpectation(t *testing.T, e expectation, got streamOutcome) {
	t.Helper()
	if got.Reason.String() != e.Reason {
		t.Errorf("reason %s (%s), want %s", got.Reason, got.Detail, e.Reason)
	}
	if !strings.Contains(got.Detail, e.Detail) {
		t.Errorf("detail %q lacks %q", got.Detail, e.Detail)
	}
	if e.TTFTEventIndex == nil || e.OutputTokens == nil || e.Estimated == nil {
		t.Fatal("a body case needs ttft_event_index, output_tokens and estimated")
	}
	if got.FirstOutput != *e.TTFTEventIndex {
		t.Errorf("first output event %d, want %d", got.FirstOutput, *e.TTFTEventIndex)
	}
	wantTTFA := *e.TTFTEventIndex
	if e.TTFAEventIndex != nil {
		wantTTFA = *e.TTFAEventIndex
	}
	if got.FirstAnswer != wantTTFA {
		t.Errorf("first answer event %d, want %d", got.FirstAnswer, wantTTFA)
	}
	if got.Tokens != *e.OutputTokens || got.Estimated != *e.Estimated {
		t.Errorf("tokens %d (estimated %v), want %d (estimated %v)", got.Tokens, got.Estimated, *e.OutputTokens, *e.Estimated)
	}
	if e.PromptTokens != nil && got.Usage.PromptTokens != *e.PromptTokens {
		t.Errorf("prompt tokens %d, want %d", got.Usage.PromptTokens, *e.PromptTokens)
	}
	if e.OutputEvents != nil && got.OutputEvents != *e.OutputEvents {
		t.Errorf("output events %d, want %d", got.OutputEvents, *e.OutputEvents)
	}
	if e.ITLEntries != nil && got.ITL != *e.ITLEntries {
		t.Errorf("ITL entries %d, want %d", got.ITL, *e.ITLEntries)
	}
}

// checkStreamTimes checks the order of a stream's timestamps.
func checkStreamTimes(t *testing.T, st *Stream) {
	t.Helper()
	if st.OutputEvents == 0 {
		return
	}
	if st.First.IsZero() || st.Last.Before(st.First) {
		t.Errorf("first %v, last %v", st.First, st.Last)
	}
	if !st.FirstAnswerAt.IsZero() && (st.FirstAnswerAt.Before(st.First) || st.Last.Before(st.FirstAnswerAt)) {
		t.Errorf("first answer %v outside [%v, %v]", st.FirstAnswerAt, st.First, st.Last)
	}
	if st.Reason == record.OK && st.Done.Before(st.Last) {
		t.Errorf("done %v before the last output %v", st.Done, st.Last)
	}
	for i, g := range st.ITL {
		if g < 0 {
			t.Errorf("ITL[%d] = %v", i, g)
		}
	}
}

// checkHTTPCase serves a whole recorded HTTP response and probes it.
func checkHTTPCase(t *testing.T, c corpusCase) {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(c.body)), nil)
	if err != nil {
		t.Fatalf("%s: %v", c.path, err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	extra := ""
	if l := c.want.Limits; l != nil {
		extra = fmt.Sprintf("    max_event_bytes: %d\n    max_stream_bytes: %d\n    max_events: %d\n", limitsFor(c.want).MaxEventBytes, l.MaxStreamBytes, l.MaxEvents)
	}
	tg := newTarget(t, srv.URL, c.want.API, extra)
	rec := &record.Record{}
	tg.Probe(context.Background(), time.Now(), 7, &ServiceStats{}, rec)
	if rec.Reason.String() != c.want.Reason {
		t.Errorf("reason %s (%s), want %s", rec.Reason, rec.Detail, c.want.Reason)
	}
	if !strings.Contains(rec.Detail, c.want.Detail) {
		t.Errorf("detail %q lacks %q", rec.Detail, c.want.Detail)
	}
	if rec.HTTPStatus != resp.StatusCode {
		t.Errorf("HTTP status %d, want %d", rec.HTTPStatus, resp.StatusCode)
	}
	if c.want.TTFTEventIndex != nil {
		t.Error("ttft_event_index applies to body cases only")
	}
	if c.want.OutputTokens != nil && rec.OutputTokens != *c.want.OutputTokens {
		t.Errorf("output tokens %d, want %d", rec.OutputTokens, *c.want.OutputTokens)
	}
	if c.want.Estimated != nil && rec.Estimated != *c.want.Estimated {
		t.Errorf("estimated %v, want %v", rec.Estimated, *c.want.Estimated)
	}
}
