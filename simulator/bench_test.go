package simulator_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmslo/llm_slo_exporter/simulator"
)

const benchBody = `{"model":"m","stream":true,"max_tokens":32,"ignore_eos":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"say something"}]}`

// BenchmarkHandlerStream32 measures the simulator's own cost for one 32-token
// chat stream with zero latencies, without a network or client.
func BenchmarkHandlerStream32(b *testing.B) {
	sim, err := simulator.New(simulator.Options{Config: fastConfig(), TruthCapacity: 1000})
	if err != nil {
		b.Fatal(err)
	}
	h := sim.Handler()
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, chatPath, strings.NewReader(benchBody))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkHTTPStream32 measures a 32-token chat stream over loopback HTTP,
// client included.
func BenchmarkHTTPStream32(b *testing.B) {
	sim, err := simulator.New(simulator.Options{Config: fastConfig(), TruthCapacity: 1000})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	client := srv.Client()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := client.Post(srv.URL+chatPath, "application/json", strings.NewReader(benchBody))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
