// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package prober

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmslo/llm_slo_exporter/config"
	"github.com/llmslo/llm_slo_exporter/record"
	"github.com/llmslo/llm_slo_exporter/simulator"
)

// newTarget builds a Target for url from a YAML snippet of target
// settings, through the real configuration loader.
func newTarget(t testing.TB, url, api, extra string) *Target {
	t.Helper()
	if api == "" {
		api = "openai-chat"
	}
	y := fmt.Sprintf(`workers: 1
targets:
  - name: t
    url: %s
    api: %s
    model: m
    rate: 1
    request:
      max_tokens: 8
      ignore_eos: true
%s`, url, api, extra)
	cfg, err := config.Parse([]byte(y), "test.yml")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := NewTarget(1, &cfg.Targets[0], "test", 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.CloseIdle)
	return tg
}

func simURL(t *testing.T, mutate func(*simulator.Config)) string {
	t.Helper()
	c := simulator.DefaultConfig()
	c.TTFT, c.ITL = 0, 0
	if mutate != nil {
		mutate(&c)
	}
	return simURLWith(t, c)
}

func newTargetB(b *testing.B, url string) *Target {
	return newTarget(b, url, "", "    max_in_flight: 4\n")
}

func simURLWith(t testing.TB, c simulator.Config) string {
	t.Helper()
	sim, err := simulator.New(simulator.Options{Config: c, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// sseServer serves a fixed body with the given content type.
func sseServer(t *testing.T, status int, contentType, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func probe(t *testing.T, tg *Target, ctx context.Context) *record.Record {
	t.Helper()
	rec := &record.Record{}
	tg.Probe(ctx, time.Now(), 42, &ServiceStats{}, rec)
	return rec
}

const chunk = `data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}` + "\n\n"

func TestProbeOutcomes(t *testing.T) {
	closedAddr := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		a := l.Addr().String()
		l.Close()
		return "http://" + a
	}
	tests := []struct {
		name       string
		url        func(t *testing.T) string
		path       string
		extra      string
		wantReason record.Reason
		wantDetail string
		check      func(t *testing.T, r *record.Record)
	}{
		{
			name: "healthy simulator", path: "/v1/chat/completions", wantReason: record.OK,
			url: func(t *testing.T) string { return simURL(t, nil) },
			check: func(t *testing.T, r *record.Record) {
				if r.OutputTokens != 8 || r.Estimated || r.OutputEvents != 8 || len(r.ITL) != 7 || r.HTTPStatus != 200 {
					t.Errorf("record %+v", r)
				}
				if r.TTFT < 0 || r.E2E < r.TTFT || r.Gen < 0 || r.TTFA != r.TTFT {
					t.Errorf("timings %+v", r)
				}
			},
		},
		{
			name: "usage off: estimated from the stream", path: "/v1/chat/completions", wantReason: record.OK,
			url: func(t *testing.T) string { return simURL(t, func(c *simulator.Config) { c.Usage = false }) },
			check: func(t *testing.T, r *record.Record) {
				if r.OutputTokens != 8 || !r.Estimated || r.PromptTokens != -1 {
					t.Errorf("record %+v", r)
				}
			},
		},
		{
			name: "several tokens per chunk, usage known", path: "/v1/chat/completions", wantReason: record.OK,
			url: func(t *testing.T) string { return simURL(t, func(c *simulator.Config) { c.TokensPerChunk = 3 }) },
			check: func(t *testing.T, r *record.Record) {
				if r.OutputTokens != 8 || r.Estimated || r.OutputEvents != 3 {
					t.Errorf("record %+v", r)
				}
			},
		},
		{
			name: "completions", path: "/v1/completions", extra: "", wantReason: record.OK,
			url: func(t *testing.T) string { return simURL(t, nil) },
		},
		{
			name: "HTTP 500", path: "/v1/chat/completions", wantReason: record.HTTP5xx, wantDetail: "HTTP 500",
			url: func(t *testing.T) string { return simURL(t, func(c *simulator.Config) { c.ErrorRate = 1 }) },
		},
		{
			name: "HTTP 429", path: "/v1/chat/completions", wantReason: record.HTTP4xx, wantDetail: "HTTP 429",
			url: func(t *testing.T) string {
				return simURL(t, func(c *simulator.Config) { c.ErrorRate, c.ErrorStatus = 1, 429 })
			},
		},
		{
			name: "mid-stream error", path: "/v1/chat/completions", wantReason: record.StreamError,
			url: func(t *testing.T) string { return simURL(t, func(c *simulator.Config) { c.MidstreamErrorRate = 1 }) },
		},
		{
			name: "truncated", path: "/v1/chat/completions", wantReason: record.Truncated,
			url: func(t *testing.T) string { return simURL(t, func(c *simulator.Config) { c.TruncateRate = 1 }) },
		},
		{
			name: "stall beyond idle timeout", path: "/v1/chat/completions", extra: "    idle_timeout: 200ms\n", wantReason: record.Stall,
			url: func(t *testing.T) string { return simURL(t, func(c *simulator.Config) { c.StallRate, c.Stall = 1, 0 }) },
		},
		{
			name: "stall beyond timeout", path: "/v1/chat/completions", extra: "    timeout: 300ms\n", wantReason: record.Timeout,
			url: func(t *testing.T) string { return simURL(t, func(c *simulator.Config) { c.StallRate, c.Stall = 1, 0 }) },
		},
		{
			name: "connection refused", path: "/v1/chat/completions", wantReason: record.Connect,
			url: func(t *testing.T) string { return closedAddr() },
		},
		{
			name: "HTML page with 200", path: "/", wantReason: record.Decode, wantDetail: "text/html",
			url: func(t *testing.T) string {
				return sseServer(t, 200, "text/html; charset=utf-8", "<html><body>Bad gateway</body></html>")
			},
		},
		{
			name: "role chunk only", path: "/", wantReason: record.NoOutput,
			url: func(t *testing.T) string {
				return sseServer(t, 200, "text/event-stream",
					`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`+"\n\ndata: [DONE]\n\n")
			},
		},
		{
			name: "malformed JSON", path: "/", wantReason: record.Decode,
			url: func(t *testing.T) string {
				return sseServer(t, 200, "text/event-stream", chunk+"data: {\"choices\":[\n\ndata: [DONE]\n\n")
			},
		},
		{
			name: "error field line (old llama.cpp)", path: "/", wantReason: record.StreamError, wantDetail: "boom",
			url: func(t *testing.T) string {
				return sseServer(t, 200, "text/event-stream", chunk+`error: {"code":500,"message":"boom"}`+"\n\ndata: [DONE]\n\n")
			},
		},
		{
			name: "unframed error body with 200", path: "/", wantReason: record.Decode, wantDetail: "held no event",
			url: func(t *testing.T) string {
				return sseServer(t, 200, "text/event-stream", `{"error":{"message":"model not loaded"}}`)
			},
		},
		{
			name: "keep-alives then EOF", path: "/", wantReason: record.Truncated,
			url: func(t *testing.T) string {
				return sseServer(t, 200, "text/event-stream", ": keep-alive\n\n: keep-alive\n\n")
			},
		},
		{
			name: "clean EOF without [DONE]", path: "/", wantReason: record.Truncated,
			url: func(t *testing.T) string { return sseServer(t, 200, "text/event-stream", chunk+chunk) },
		},
		{
			name: "[DONE] without trailing blank line", path: "/", wantReason: record.OK,
			url: func(t *testing.T) string { return sseServer(t, 200, "text/event-stream", chunk+chunk+"data: [DONE]\n") },
			check: func(t *testing.T, r *record.Record) {
				if r.OutputTokens != 2 || !r.Estimated {
					t.Errorf("record %+v", r)
				}
			},
		},
		{
			name: "event over max_event_bytes", path: "/", extra: "    max_event_bytes: 1024\n", wantReason: record.TooLarge,
			url: func(t *testing.T) string {
				big := `data: {"choices":[{"delta":{"content":"` + strings.Repeat("x", 2000) + `"}}]}` + "\n\n"
				return sseServer(t, 200, "text/event-stream", big+"data: [DONE]\n\n")
			},
		},
		{
			name: "redirect not followed", path: "/", extra: "    http_client_config:\n      follow_redirects: false\n", wantReason: record.HTTPOther, wantDetail: "HTTP 307",
			url: func(t *testing.T) string {
				srv := httptest.NewServer(http.RedirectHandler("http://127.0.0.1:1/elsewhere", http.StatusTemporaryRedirect))
				t.Cleanup(srv.Close)
				return srv.URL
			},
		},
		{
			name: "connection reset mid-stream", path: "/", wantReason: record.Reset,
			url: func(t *testing.T) string {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body)
					conn, buf, err := w.(http.Hijacker).Hijack()
					if err != nil {
						return
					}
					_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 100000\r\n\r\n" + chunk)
					_ = buf.Flush()
					_ = conn.(*net.TCPConn).SetLinger(0) // close with RST
					conn.Close()
				}))
				t.Cleanup(srv.Close)
				return srv.URL
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := ""
			if tc.path == "/v1/completions" {
				api = "openai-completions"
			}
			tg := newTarget(t, tc.url(t)+tc.path, api, tc.extra)
			r := probe(t, tg, context.Background())
			if r.Reason != tc.wantReason {
				t.Fatalf("reason = %s (%s), want %s", r.Reason, r.Detail, tc.wantReason)
			}
			if !strings.Contains(r.Detail, tc.wantDetail) {
				t.Errorf("detail %q lacks %q", r.Detail, tc.wantDetail)
			}
			if r.RequestID != 42 || r.TargetID != 1 {
				t.Errorf("ids %d/%d", r.RequestID, r.TargetID)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func TestProbeCanceledByParent(t *testing.T) {
	url := simURL(t, func(c *simulator.Config) { c.StallRate, c.Stall = 1, 0 })
	tg := newTarget(t, url+"/v1/chat/completions", "", "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *record.Record)
	go func() { done <- probe(t, tg, ctx) }()
	cancel()
	if r := <-done; r.Reason != record.Canceled {
		t.Fatalf("reason = %s (%s), want canceled", r.Reason, r.Detail)
	}
}

// TestTTFTIgnoresRoleAndComments checks what stops TTFT: a server that
// sends the role-only chunk and keep-alive comments at once and the first
// content only after a delay. TTFT must include the delay (a lower bound
// is causal, not a timing assertion: output cannot arrive before it is
// written).
func TestTTFTIgnoresRoleAndComments(t *testing.T) {
	const delay = 50 * time.Millisecond
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": keep-alive\n\n"+`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"usage":null}`+"\n\n")
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, chunk+chunk+`data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	tg := newTarget(t, srv.URL, "", "")
	go func() {
		time.Sleep(delay) // the server's think time, not synchronisation
		close(release)
	}()
	r := probe(t, tg, context.Background())
	if r.Reason != record.OK {
		t.Fatalf("reason %s (%s)", r.Reason, r.Detail)
	}
	if r.TTFT < delay {
		t.Errorf("TTFT = %v < %v: the role chunk or the comment stopped it", r.TTFT, delay)
	}
	if r.OutputTokens != 2 || r.PromptTokens != 3 || r.Estimated {
		t.Errorf("tokens %+v", r)
	}
	// Both content chunks arrived in one write: one Read, so a zero gap.
	if len(r.ITL) != 1 || r.ITL[0] < 0 {
		t.Errorf("ITL = %v", r.ITL)
	}
}

func TestProbeSendsRequestIDAndNoCompression(t *testing.T) {
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, chunk+"data: [DONE]\n\n")
	}))
	defer srv.Close()
	tg := newTarget(t, srv.URL, "", "      headers:\n        X-Custom: \"yes\"\n")
	if r := probe(t, tg, context.Background()); r.Reason != record.OK {
		t.Fatalf("reason %s", r.Reason)
	}
	h := <-got
	if h.Get("X-Request-Id") != record.RequestIDString(42) {
		t.Errorf("x-request-id = %q", h.Get("X-Request-Id"))
	}
	if h.Get("X-Custom") != "yes" {
		t.Errorf("X-Custom = %q, want the configured header", h.Get("X-Custom"))
	}
	if h.Get("Accept-Encoding") != "identity" {
		t.Errorf("Accept-Encoding = %q, want identity", h.Get("Accept-Encoding"))
	}
}
