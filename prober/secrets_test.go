// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package prober

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmslo/llm_slo_exporter/record"
)

const secretsYAML = `      headers:
        X-Api-Key: sk-header-secret
    http_client_config:
      authorization:
        credentials: bearer-secret-value
`

func TestFailureDetailNeverEchoesSecrets(t *testing.T) {
	// A server that quotes the request's credentials in its error body.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"message":"invalid key `+r.Header.Get("X-Api-Key")+` with `+r.Header.Get("Authorization")+`"}}`)
	}))
	defer srv.Close()
	tg := newTarget(t, srv.URL, "", secretsYAML)
	r := probe(t, tg, context.Background())
	if r.Reason != record.HTTP4xx {
		t.Fatalf("reason = %s", r.Reason)
	}
	if strings.Contains(r.Detail, "sk-header-secret") || strings.Contains(r.Detail, "bearer-secret-value") {
		t.Fatalf("detail leaks a secret: %q", r.Detail)
	}
	if !strings.Contains(r.Detail, "invalid key <secret>") {
		t.Errorf("detail = %q, want the scrubbed message", r.Detail)
	}
}

func TestCrossHostRedirectDropsCredentials(t *testing.T) {
	// The redirect target listens on another loopback address, so it is
	// another host for the client.
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	seen := make(chan http.Header, 1)
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, chunk+"data: [DONE]\n\n")
	}))
	other.Listener.Close()
	other.Listener = l
	other.Start()
	defer other.Close()
	origin := httptest.NewServer(http.RedirectHandler(other.URL+"/v1/chat/completions", http.StatusTemporaryRedirect))
	defer origin.Close()

	tg := newTarget(t, origin.URL, "", secretsYAML)
	r := probe(t, tg, context.Background())
	if r.Reason != record.OK {
		t.Fatalf("reason = %s (%s)", r.Reason, r.Detail)
	}
	h := <-seen
	for _, name := range []string{"X-Api-Key", "Authorization"} {
		if v := h.Get(name); v != "" {
			t.Errorf("the other host received %s: %q", name, v)
		}
	}
	if h.Get("X-Request-Id") == "" {
		t.Error("non-secret headers should survive the redirect")
	}
}
