package simulator

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// ttftBuckets are the bucket edges (seconds) of
// llmsim_time_to_first_token_seconds: vLLM V1's edges for
// vllm:time_to_first_token_seconds.
var ttftBuckets = []float64{
	0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
	1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
}

// itlBuckets are the bucket edges (seconds) of
// llmsim_inter_token_latency_seconds: the union of ttftBuckets, vLLM V1's
// inter-token-latency edges and finer edges below 10ms.
var itlBuckets = mergeEdges(ttftBuckets,
	[]float64{0.0001, 0.00025, 0.0005, 0.002, 0.003, 0.004, 0.006, 0.007, 0.008, 0.009, 0.0125, 0.015},
	[]float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0},
)

// durationBuckets are the bucket edges (seconds) of
// llmsim_request_duration_seconds: vLLM V1's e2e request latency edges with
// finer edges below 0.3s.
var durationBuckets = mergeEdges(
	[]float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0},
	[]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25},
)

func mergeEdges(sets ...[]float64) []float64 {
	var all []float64
	for _, s := range sets {
		all = append(all, s...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// metrics holds the simulator's server-side truth as Prometheus metrics.
type metrics struct {
	ttft         *prometheus.HistogramVec
	itl          *prometheus.HistogramVec
	duration     *prometheus.HistogramVec
	requests     *prometheus.CounterVec
	outputTokens *prometheus.CounterVec
	promptTokens *prometheus.CounterVec
	inFlight     prometheus.Gauge
	configs      prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "llmsim_time_to_first_token_seconds",
			Help:    "Server-side time to first token: request received to first content chunk written and flushed. Successful requests only.",
			Buckets: ttftBuckets,
		}, []string{"model"}),
		itl: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "llmsim_inter_token_latency_seconds",
			Help:    "Server-side gap between consecutive content chunk writes (one observation per gap, not per token). Successful requests only.",
			Buckets: itlBuckets,
		}, []string{"model"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "llmsim_request_duration_seconds",
			Help:    "Server-side request duration: request received to end of stream written. Successful requests only.",
			Buckets: durationBuckets,
		}, []string{"model"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmsim_requests_total",
			Help: "Generation requests finished, by outcome (success, stalled, error_status, midstream_error, truncated, canceled, bad_request).",
		}, []string{"model", "outcome"}),
		outputTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmsim_output_tokens_total",
			Help: "Content tokens written, all outcomes.",
		}, []string{"model"}),
		promptTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmsim_prompt_tokens_total",
			Help: "Estimated prompt tokens (whitespace-separated words) of finished requests.",
		}, []string{"model"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "llmsim_requests_in_flight",
			Help: "Generation requests being served.",
		}),
		configs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "llmsim_config_updates_total",
			Help: "Successful configuration updates through /admin/config.",
		}),
	}
	reg.MustRegister(m.ttft, m.itl, m.duration, m.requests, m.outputTokens, m.promptTokens, m.inFlight, m.configs)
	return m
}

// observe records a finished request. Latency histograms take successful
// requests only, like the prober's, so both sides compare like with like.
func (m *metrics) observe(r *TruthRecord) {
	m.requests.WithLabelValues(r.Model, r.Outcome).Inc()
	m.outputTokens.WithLabelValues(r.Model).Add(float64(r.OutputTokens))
	m.promptTokens.WithLabelValues(r.Model).Add(float64(r.PromptTokens))
	if r.Outcome != OutcomeSuccess && r.Outcome != OutcomeStalled || len(r.ChunksWritten) == 0 {
		return
	}
	const ns = 1e9
	m.ttft.WithLabelValues(r.Model).Observe(float64(r.FirstByteWritten-r.Received) / ns)
	m.duration.WithLabelValues(r.Model).Observe(float64(r.EndWritten-r.Received) / ns)
	if len(r.ChunksWritten) > 1 {
		itl := m.itl.WithLabelValues(r.Model)
		for i := 1; i < len(r.ChunksWritten); i++ {
			itl.Observe(float64(r.ChunksWritten[i]-r.ChunksWritten[i-1]) / ns)
		}
	}
}
