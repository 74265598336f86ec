// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package prober

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/llmslo/llm_slo_exporter/record"
	"github.com/llmslo/llm_slo_exporter/simulator"
)

// End-to-end tests of every API: Target.Probe against llmsim in that
// API's mode, over real HTTP. The target asks for 8 tokens with
// ignore_eos (newTarget); llmsim's default length (128) is longer, so
// APIs that cannot force a length still stop at 8, by their cap.

// e2eAPI is one API as the end-to-end tests probe it.
type e2eAPI struct {
	api, path string
	// estimated reports that the API's stream carries no token count
	// with the default request (Triton's TensorRT-LLM ensemble).
	estimated bool
	// reasoning reports that the API has a reasoning channel.
	reasoning bool
	// perToken: the API sends one event per token whatever the chunking
	// (TGI).
	perToken bool
	// detail is the start of the failure detail of an injected error
	// status, from the API's error body.
	errDetail string
}

var e2eAPIs = []e2eAPI{
	{api: "openai-chat", path: "/v1/chat/completions", reasoning: true, errDetail: "HTTP 500: llmsim: injected error"},
	{api: "openai-completions", path: "/v1/completions", errDetail: "HTTP 500: llmsim: injected error"},
	{api: "anthropic", path: "/v1/messages", reasoning: true, errDetail: "HTTP 500: llmsim: injected error"},
	{api: "tgi", path: "/generate_stream", perToken: true, errDetail: "HTTP 500: llmsim: injected error"},
	{api: "triton", path: "/v2/models/ensemble/generate_stream", estimated: true, errDetail: "HTTP 500: llmsim: injected error"},
	{api: "llamacpp", path: "/completion", errDetail: "HTTP 500: llmsim: injected error"},
	{api: "ollama", path: "/api/chat", reasoning: true, errDetail: "HTTP 500: llmsim: injected error"},
	{api: "sglang", path: "/generate", errDetail: "HTTP 500: llmsim: injected error"},
}

// simTruth serves llmsim with c and returns its URL and a channel of its
// truth records.
func simTruth(t *testing.T, c simulator.Config) (string, chan simulator.TruthRecord) {
	t.Helper()
	recs := make(chan simulator.TruthRecord, 16)
	sim, err := simulator.New(simulator.Options{Config: c, Seed: 1, OnRecord: func(r simulator.TruthRecord) {
		select {
		case recs <- r:
		default:
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	return srv.URL, recs
}

func TestAPIsEndToEnd(t *testing.T) {
	for _, a := range e2eAPIs {
		t.Run(a.api, func(t *testing.T) {
			t.Run("ok", func(t *testing.T) {
				c := simulator.DefaultConfig()
				c.TTFT, c.ITL = 0, 0
				url, truth := simTruth(t, c)
				r := probe(t, newTarget(t, url+a.path, a.api, ""), context.Background())
				if r.Reason != record.OK {
					t.Fatalf("reason %s (%s)", r.Reason, r.Detail)
				}
				if r.OutputTokens != 8 || r.Estimated != a.estimated || r.OutputEvents != 8 || len(r.ITL) != 7 || r.HTTPStatus != 200 {
					t.Errorf("record %+v", r)
				}
				if r.TTFT <= 0 || r.TTFA != r.TTFT || r.E2E < r.TTFT || r.Gen < 0 {
					t.Errorf("timings: TTFT %v, TTFA %v, E2E %v, Gen %v", r.TTFT, r.TTFA, r.E2E, r.Gen)
				}
				tr := <-truth
				if tr.OutputTokens != r.OutputTokens || tr.API != simAPI(a.api) || tr.Outcome != simulator.OutcomeSuccess || tr.RequestID != record.RequestIDString(42) {
					t.Errorf("truth %+v", tr)
				}
				if !a.estimated && tr.PromptTokens != r.PromptTokens {
					t.Errorf("prompt tokens %d, truth %d", r.PromptTokens, tr.PromptTokens)
				}
			})
			t.Run("usage off: estimated from the stream", func(t *testing.T) {
				r := probe(t, newTarget(t, simURL(t, func(c *simulator.Config) { c.Usage = false })+a.path, a.api, ""), context.Background())
				if r.Reason != record.OK || r.OutputTokens != 8 || !r.Estimated {
					t.Errorf("record %+v", r)
				}
			})
			t.Run("three tokens per chunk", func(t *testing.T) {
				r := probe(t, newTarget(t, simURL(t, func(c *simulator.Config) { c.TokensPerChunk = 3 })+a.path, a.api, ""), context.Background())
				wantEvents := 3
				if a.perToken {
					wantEvents = 8
				}
				if a.estimated {
					// Without counts, each event is one token: the
					// estimate undercounts, and says so.
					if r.Reason != record.OK || r.OutputTokens != 3 || !r.Estimated || r.OutputEvents != wantEvents {
						t.Errorf("record %+v", r)
					}
					return
				}
				if r.Reason != record.OK || r.OutputTokens != 8 || r.Estimated || r.OutputEvents != wantEvents {
					t.Errorf("record %+v", r)
				}
			})
			t.Run("reasoning", func(t *testing.T) {
				r := probe(t, newTarget(t, simURL(t, func(c *simulator.Config) { c.ReasoningTokens = 3 })+a.path, a.api, ""), context.Background())
				if r.Reason != record.OK || r.OutputTokens != 8 || r.OutputEvents != 8 {
					t.Fatalf("record %+v", r)
				}
				if r.TTFA < r.TTFT || r.TTFT <= 0 {
					t.Errorf("TTFT %v, TTFA %v", r.TTFT, r.TTFA)
				}
				if !a.reasoning && r.TTFA != r.TTFT {
					// Without a reasoning channel the first output is
					// the first answer.
					t.Errorf("TTFA %v != TTFT %v", r.TTFA, r.TTFT)
				}
			})
			t.Run("reasoning only before a stall", func(t *testing.T) {
				// The stream stalls after its first chunk, a reasoning
				// one for APIs with a reasoning channel: TTFT is set,
				// TTFA is not (-1).
				url := simURL(t, func(c *simulator.Config) { c.ReasoningTokens, c.StallRate, c.Stall = 3, 1, 0 })
				r := probe(t, newTarget(t, url+a.path, a.api, "    idle_timeout: 100ms\n"), context.Background())
				if r.Reason != record.Stall || r.TTFT <= 0 || r.OutputEvents != 1 {
					t.Fatalf("record %+v", r)
				}
				if a.reasoning != (r.TTFA < 0) {
					t.Errorf("TTFA %v with a reasoning channel %v", r.TTFA, a.reasoning)
				}
			})
			for _, f := range []struct {
				name   string
				mutate func(*simulator.Config)
				reason record.Reason
				detail string
			}{
				{"error status 500", func(c *simulator.Config) { c.ErrorRate = 1 }, record.HTTP5xx, a.errDetail},
				{"error status 429", func(c *simulator.Config) { c.ErrorRate, c.ErrorStatus = 1, 429 }, record.HTTP4xx, "HTTP 429: llmsim: injected error"},
				{"mid-stream error", func(c *simulator.Config) { c.MidstreamErrorRate = 1 }, record.StreamError, "llmsim: injected mid-stream error"},
				{"truncation", func(c *simulator.Config) { c.TruncateRate = 1 }, record.Truncated, "closed mid-stream"},
				{"stall", func(c *simulator.Config) { c.StallRate, c.Stall = 1, 0 }, record.Stall, "idle timeout"},
			} {
				t.Run(f.name, func(t *testing.T) {
					r := probe(t, newTarget(t, simURL(t, f.mutate)+a.path, a.api, "    idle_timeout: 100ms\n"), context.Background())
					if r.Reason != f.reason || !strings.Contains(r.Detail, f.detail) {
						t.Errorf("reason %s (%s), want %s (%s)", r.Reason, r.Detail, f.reason, f.detail)
					}
				})
			}
		})
	}
}

// TestTritonCountsEndToEnd asks the simulated Triton for per-response
// counts, as the vLLM backend gives them: the count is then exact.
func TestTritonCountsEndToEnd(t *testing.T) {
	url := simURL(t, func(c *simulator.Config) { c.TokensPerChunk = 3 })
	tg := newTarget(t, url+"/v2/models/m/generate_stream", "triton", "      extra_body:\n        return_num_output_tokens: true\n")
	r := probe(t, tg, context.Background())
	if r.Reason != record.OK || r.OutputTokens != 8 || r.Estimated || r.OutputEvents != 3 || len(r.ITL) != 5 {
		t.Errorf("record %+v", r)
	}
}

// TestTGICountsEOS checks that TGI's count includes the EOS token that
// ended the generation, as TGI reports it.
func TestTGICountsEOS(t *testing.T) {
	url := simURL(t, func(c *simulator.Config) { c.OutputTokens = 5 })
	r := probe(t, newTarget(t, url+"/generate_stream", "tgi", ""), context.Background())
	if r.Reason != record.OK || r.OutputTokens != 6 || r.Estimated || r.OutputEvents != 5 {
		t.Errorf("record %+v", r)
	}
}

// simAPI maps an adapter name to llmsim's API name.
func simAPI(adapter string) string {
	switch adapter {
	case "openai-chat":
		return simulator.APIChat
	case "openai-completions":
		return simulator.APICompletions
	}
	return adapter
}

// endlessServer streams output events of ev forever (or until total bytes
// when total > 0, then end), and samples the process's live heap every
// 4 MiB written into peak. It never allocates per event itself.
func endlessServer(t *testing.T, contentType string, ev, end []byte, total int64, peak *uint64) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		// 32 events per write, like a server flushing a batch.
		batch := bytes.Repeat(ev, 32)
		var written, nextSample int64
		for total <= 0 || written < total {
			if _, err := w.Write(batch); err != nil {
				return // the prober went away
			}
			written += int64(len(batch))
			if written >= nextSample {
				nextSample += 4 << 20
				*peak = max(*peak, liveHeap())
			}
		}
		_, _ = w.Write(end)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// maxHeapGrowth bounds the live heap a probe may add while it reads a
// stream of any length: its reader buffer, its parser and the ITL slice
// (MaxITL entries) are all bounded.
const maxHeapGrowth = 8 << 20

// TestStreamMemoryBounded probes streams of 100 MB and streams that never
// end, and checks that the worker-side live heap stays flat and each
// probe ends with its documented reason.
func TestStreamMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 100 MB or more per case")
	}
	chat := []byte(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"` +
		strings.Repeat(" tok", 200) + `"},"finish_reason":null}]}` + "\n\n")
	chatEnd := []byte("data: [DONE]\n\n")
	ollama := []byte(`{"model":"m","created_at":"2025-10-26T17:15:24.155176Z","message":{"role":"assistant","content":"` +
		strings.Repeat(" tok", 200) + `"},"done":false}` + "\n")
	ollamaEnd := []byte(`{"model":"m","message":{"role":"assistant","content":""},"done":true,"eval_count":1}` + "\n")
	// Small events make the endless streams reach their caps in fewer
	// bytes, with more events than MaxITL.
	small := []byte(`data: {"choices":[{"index":0,"delta":{"content":" tok"},"finish_reason":null}]}` + "\n\n")
	smallOllama := []byte(`{"model":"m","message":{"role":"assistant","content":" tok"},"done":false}` + "\n")
	const hundredMB = 100 << 20
	for _, tc := range []struct {
		name        string
		api, ct     string
		ev, end     []byte
		total       int64
		extra       string
		want        record.Reason
		detail      string
		minEvents   int
		wantITL     int
		checkEvents bool
	}{
		{name: "100 MB SSE stream", api: "openai-chat", ct: "text/event-stream", ev: chat, end: chatEnd, total: hundredMB,
			extra: "    max_stream_bytes: 0\n    max_events: 0\n    timeout: 10m\n", want: record.OK, wantITL: MaxITL, checkEvents: true},
		{name: "100 MB NDJSON stream", api: "ollama", ct: "application/x-ndjson", ev: ollama, end: ollamaEnd, total: hundredMB,
			extra: "    max_stream_bytes: 0\n    max_events: 0\n    timeout: 10m\n", want: record.OK, wantITL: MaxITL, checkEvents: true},
		{name: "endless stream over max_events", api: "openai-chat", ct: "text/event-stream", ev: small, end: chatEnd,
			extra: "    max_events: 100000\n    timeout: 10m\n", want: record.TooLarge, detail: "max_events (100000)", wantITL: MaxITL},
		{name: "endless stream over max_stream_bytes", api: "openai-chat", ct: "text/event-stream", ev: small, end: chatEnd,
			extra: "    max_stream_bytes: 16777216\n    max_events: 0\n    timeout: 10m\n", want: record.TooLarge, detail: "max_stream_bytes (16777216)", wantITL: MaxITL},
		{name: "endless NDJSON stream over max_stream_bytes", api: "ollama", ct: "application/x-ndjson", ev: smallOllama, end: ollamaEnd,
			extra: "    max_stream_bytes: 16777216\n    max_events: 0\n    timeout: 10m\n", want: record.TooLarge, detail: "max_stream_bytes (16777216)", wantITL: MaxITL},
		{name: "endless stream until the timeout", api: "openai-chat", ct: "text/event-stream", ev: small, end: chatEnd,
			extra: "    max_stream_bytes: 0\n    max_events: 0\n    timeout: 2s\n", want: record.Timeout, detail: "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var peak uint64
			url := endlessServer(t, tc.ct, tc.ev, tc.end, tc.total, &peak)
			tg := newTarget(t, url, tc.api, tc.extra)
			// Warm up the target's pools, then take the baseline.
			probe(t, newTarget(t, endlessServer(t, tc.ct, tc.ev, tc.end, 1, new(uint64)), tc.api, ""), context.Background())
			base := liveHeap()
			r := probe(t, tg, context.Background())
			if r.Reason != tc.want || !strings.Contains(r.Detail, tc.detail) {
				t.Fatalf("reason %s (%s), want %s (%s)", r.Reason, r.Detail, tc.want, tc.detail)
			}
			if tc.wantITL > 0 && len(r.ITL) != tc.wantITL {
				t.Errorf("%d ITL entries, want the cap %d", len(r.ITL), tc.wantITL)
			}
			if tc.checkEvents {
				events := int(tc.total / int64(len(tc.ev)))
				if r.OutputEvents < events || r.OutputTokens < 1 {
					t.Errorf("%d output events, want at least %d", r.OutputEvents, events)
				}
			}
			if peak == 0 {
				t.Fatal("no heap sample taken")
			}
			if peak > base && peak-base > maxHeapGrowth {
				t.Errorf("live heap grew by %d bytes while streaming (base %d, peak %d), want at most %d", peak-base, base, peak, maxHeapGrowth)
			}
			t.Logf("live heap: base %.1f MiB, peak while streaming %.1f MiB", float64(base)/(1<<20), float64(peak)/(1<<20))
		})
	}
}

// TestStreamMemoryAllocations checks that reading a stream allocates
// nothing per event, prober and test server together: it probes an 8 MB
// and a 16 MB stream and divides the difference of the bytes allocated by
// the difference of the events. Fixed costs (connection, the ITL slice,
// capped at MaxITL gaps, which both streams reach) cancel out; one
// allocation per event would show as 8 bytes or more per event.
func TestStreamMemoryAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 24 MB")
	}
	ev := []byte(`data: {"choices":[{"index":0,"delta":{"content":" tok tok tok tok"},"finish_reason":null}],"usage":null}` + "\n\n")
	allocated := func(total int) (uint64, int) {
		url := endlessServer(t, "text/event-stream", ev, []byte("data: [DONE]\n\n"), int64(total), new(uint64))
		tg := newTarget(t, url, "openai-chat", "    max_events: 0\n")
		probe(t, tg, context.Background()) // warm up pools and the connection
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := probe(t, tg, context.Background())
		runtime.ReadMemStats(&after)
		if r.Reason != record.OK || r.OutputEvents < MaxITL {
			t.Fatalf("record %+v", r)
		}
		return after.TotalAlloc - before.TotalAlloc, r.OutputEvents
	}
	a1, e1 := allocated(8 << 20)
	a2, e2 := allocated(16 << 20)
	perEvent := (float64(a2) - float64(a1)) / float64(e2-e1)
	t.Logf("%d events: %d bytes; %d events: %d bytes; %.3f bytes per event", e1, a1, e2, a2, perEvent)
	if perEvent > 6 {
		t.Errorf("%.2f bytes allocated per event", perEvent)
	}
}
