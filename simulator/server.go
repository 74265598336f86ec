package simulator

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultTruthCapacity is the default number of TruthRecords kept.
const DefaultTruthCapacity = 100000

// maxAdminBody bounds the size of a POST /admin/config body.
const maxAdminBody = 1 << 20

// Options configures New.
type Options struct {
	// Config is the initial behaviour; it must pass Config.Validate. Start
	// from DefaultConfig.
	Config Config
	// TruthCapacity is the number of most recent TruthRecords kept for
	// /admin/truth. Zero disables the ring; negative is an error.
	TruthCapacity int
	// Seed seeds the random draws (failure injection, latencies, output
	// lengths). Requests draw their own sub-seeds in arrival order, so a
	// sequential client sees the same behaviour for the same seed. Zero
	// means a random seed.
	Seed uint64
	// Logger receives the simulator's logs; nil discards them.
	Logger *slog.Logger
	// OnRecord, if not nil, is called synchronously with each request's
	// TruthRecord once it is complete and its metrics are recorded (whether
	// or not the ring keeps it). It runs on the request's goroutine and must
	// be fast; it must not modify the record's ChunksWritten.
	OnRecord func(TruthRecord)
}

// Server is an LLM endpoint simulator speaking OpenAI's and the other
// APIs listed at Handler. Create it with New
// and serve Handler; it is safe for concurrent use.
type Server struct {
	cfg      atomic.Pointer[compiled]
	cfgMu    sync.Mutex // serialises configuration updates (readers use cfg)
	reg      *prometheus.Registry
	metrics  *metrics
	truth    truthRing
	logger   *slog.Logger
	onRecord func(TruthRecord)

	rngMu sync.Mutex
	rng   *rand.Rand

	idPrefix string
	idSeq    atomic.Uint64
}

// New returns a Server with the given options, or an error if the initial
// configuration or the options are invalid.
func New(opts Options) (*Server, error) {
	c, err := compile(opts.Config)
	if err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	if opts.TruthCapacity < 0 {
		return nil, fmt.Errorf("truth capacity must not be negative (got %d)", opts.TruthCapacity)
	}
	seed := opts.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		reg:      prometheus.NewRegistry(),
		truth:    truthRing{cap: opts.TruthCapacity},
		logger:   logger,
		onRecord: opts.OnRecord,
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
	}
	s.idPrefix = "llmsim-" + strconv.FormatUint(s.rng.Uint64()>>32, 16) + "-"
	s.metrics = newMetrics(s.reg)
	s.cfg.Store(c)
	return s, nil
}

// Config returns the configuration in force.
func (s *Server) Config() Config {
	return s.cfg.Load().Config
}

// SetConfig validates c and, if it is valid, makes it the configuration for
// requests that arrive from now on. Requests in flight keep the
// configuration they started with.
func (s *Server) SetConfig(c Config) error {
	cc, err := compile(c)
	if err != nil {
		return err
	}
	s.cfgMu.Lock()
	s.cfg.Store(cc)
	s.cfgMu.Unlock()
	return nil
}

// Registry returns the Prometheus registry served on /metrics. Callers may
// register more collectors (build info, Go runtime) on it.
func (s *Server) Registry() *prometheus.Registry {
	return s.reg
}

// Truth returns the kept TruthRecords, oldest first; a non-empty requestID
// keeps only the records with that ID.
func (s *Server) Truth(requestID string) []TruthRecord {
	return s.truth.snapshot(requestID)
}

// ClearTruth drops every kept TruthRecord.
func (s *Server) ClearTruth() {
	s.truth.clear()
}

// Handler returns the simulator's HTTP handler:
//
//	POST /v1/chat/completions   OpenAI chat completions (streaming or not)
//	POST /v1/completions        OpenAI legacy completions (streaming or not)
//	POST /v1/messages           Anthropic Messages (streaming)
//	POST /generate_stream       Hugging Face TGI
//	POST /v2/models/{model}/generate_stream   Triton generate (TensorRT-LLM)
//	POST /completion            llama.cpp (streaming)
//	POST /api/chat              Ollama (NDJSON stream)
//	POST /generate              SGLang native (streaming)
//	GET  /admin/config          the configuration as JSON
//	POST /admin/config          partial JSON update of the configuration
//	GET  /admin/truth           truth records as JSON lines (?request_id=X)
//	DELETE /admin/truth         drop all truth records
//	GET  /metrics               Prometheus metrics (the Server's own registry)
//	GET  /health                200 OK (vLLM's health path)
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, route := range []struct {
		pattern string
		api     *apiSpec
	}{
		{"POST /v1/chat/completions", apiChat},
		{"POST /v1/completions", apiCompletions},
		{"POST /v1/messages", apiAnthropic},
		{"POST /generate_stream", apiTGI},
		{"POST /v2/models/{model}/generate_stream", apiTriton},
		{"POST /completion", apiLlamaCpp},
		{"POST /api/chat", apiOllama},
		{"POST /generate", apiSGLang},
	} {
		api := route.api
		mux.HandleFunc(route.pattern, func(w http.ResponseWriter, r *http.Request) {
			s.serveGenerate(w, r, api)
		})
	}
	mux.HandleFunc("GET /admin/config", s.serveGetConfig)
	mux.HandleFunc("POST /admin/config", s.servePostConfig)
	mux.HandleFunc("GET /admin/truth", s.serveGetTruth)
	mux.HandleFunc("DELETE /admin/truth", s.serveDeleteTruth)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	return mux
}

func (s *Server) serveGetConfig(w http.ResponseWriter, _ *http.Request) {
	writeConfig(w, s.Config())
}

// servePostConfig merges the JSON body into the current configuration. The
// whole read-merge-validate-store runs under cfgMu so that two concurrent
// partial updates cannot lose each other's fields.
func (s *Server) servePostConfig(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAdminBody))
	if err != nil {
		http.Error(w, "reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.cfgMu.Lock()
	c := s.cfg.Load().Config
	if err := json.Unmarshal(body, &c); err != nil {
		s.cfgMu.Unlock()
		http.Error(w, "invalid configuration JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	cc, err := compile(c)
	if err != nil {
		s.cfgMu.Unlock()
		http.Error(w, "invalid configuration: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.cfg.Store(cc)
	s.cfgMu.Unlock()
	s.metrics.configs.Inc()
	s.logger.Info("Configuration updated", "update", string(body))
	writeConfig(w, c)
}

func writeConfig(w http.ResponseWriter, c Config) {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

// serveGetTruth writes the kept records as JSON lines. It encodes a snapshot,
// so a slow reader does not hold up requests that are recording.
func (s *Server) serveGetTruth(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("request_id")
	recs := s.truth.snapshot(id)
	if id != "" && len(recs) == 0 {
		http.Error(w, "no truth record for request_id "+strconv.Quote(id), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return
		}
	}
	_ = bw.Flush()
}

func (s *Server) serveDeleteTruth(w http.ResponseWriter, _ *http.Request) {
	s.truth.clear()
	w.WriteHeader(http.StatusNoContent)
}

// newRand returns a generator for one request, seeded from the server's
// generator: one short critical section per request, none per draw.
func (s *Server) newRand() *rand.Rand {
	s.rngMu.Lock()
	a, b := s.rng.Uint64(), s.rng.Uint64()
	s.rngMu.Unlock()
	return rand.New(rand.NewPCG(a, b))
}

// newRequestID returns a process-unique request ID.
func (s *Server) newRequestID() string {
	var b [48]byte
	buf := append(b[:0], s.idPrefix...)
	buf = strconv.AppendUint(buf, s.idSeq.Add(1), 10)
	return string(buf)
}

// finish records a finished request: metrics, truth ring, OnRecord.
func (s *Server) finish(rec *TruthRecord) {
	s.metrics.observe(rec)
	s.truth.add(*rec)
	if s.onRecord != nil {
		s.onRecord(*rec)
	}
}

// errClientGone reports that the client went away or a write failed.
var errClientGone = errors.New("client gone")
