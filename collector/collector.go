// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Package collector turns what the workers report into metrics. It owns
// all metric state: workers send records and heartbeats, and a worker that
// dies loses nothing already reported. See docs/metrics.md for the
// contract this package implements.
package collector

import (
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/llmslo/llm_slo_exporter/config"
	"github.com/llmslo/llm_slo_exporter/record"
)

// Native histogram settings shared by every histogram: a bucket factor of
// 1.1 (about 5% relative error), at most 160 buckets before resolution is
// reduced, reset at most once an hour.
const (
	nativeFactor     = 1.1
	nativeMaxBuckets = 160
	nativeMinReset   = time.Hour
)

// UtilizationWindow is the span over which the utilization gauge and the
// predicted wait are computed: short enough to show a saturation episode
// within seconds, long enough to hold several heartbeats.
const UtilizationWindow = 5 * time.Second

// RecentProbes is how many probe results per target /probes keeps.
const RecentProbes = 100

// TargetInfo describes a target of the current plan.
type TargetInfo struct {
	ID      uint32
	Name    string
	Model   string
	API     string
	Rate    float64
	Buckets config.Buckets
}

// labels returns the identity labels of a target.
func (t TargetInfo) labels() prometheus.Labels {
	return prometheus.Labels{"target": t.Name, "model": t.Model, "api": t.API}
}

// Collector turns records and heartbeats into metrics.
type Collector struct {
	mu      sync.RWMutex
	targets map[uint32]*targetMetrics
	byName  map[string]*targetMetrics

	wmu     sync.Mutex
	workers map[int]*workerState
	running map[int]bool

	utilization   *prometheus.GaugeVec
	cpuSeconds    *prometheus.CounterVec
	waitSeconds   *prometheus.CounterVec
	loopLag       *prometheus.HistogramVec
	predictedWait *prometheus.GaugeVec
	serviceMean   *prometheus.GaugeVec
	eventRate     *prometheus.GaugeVec
	workerInFl    *prometheus.GaugeVec
	workerRSS     *prometheus.GaugeVec
	lastBeat      *prometheus.GaugeVec
	workersUp     prometheus.Gauge
	restarts      *prometheus.CounterVec
	unknownTarget prometheus.Counter
}

// New returns a Collector whose metrics are registered with reg.
func New(reg prometheus.Registerer) *Collector {
	f := promauto.With(reg)
	c := &Collector{
		targets: map[uint32]*targetMetrics{},
		byName:  map[string]*targetMetrics{},
		workers: map[int]*workerState{},
		running: map[int]bool{},
		utilization: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llm_prober_utilization",
			Help: "Demand of a worker process on its CPU over the last " + UtilizationWindow.String() + ": (CPU time + run-queue wait) / wall time, summed over its threads. Near 1 the worker is saturated and its latency figures include its own queueing delay.",
		}, []string{"worker"}),
		cpuSeconds: f.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_prober_cpu_seconds_total",
			Help: "CPU time used by a worker process, summed over its threads.",
		}, []string{"worker"}),
		waitSeconds: f.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_prober_cpu_wait_seconds_total",
			Help: "Time a worker's threads spent runnable but waiting for a CPU (run-queue wait, /proc schedstat).",
		}, []string{"worker"}),
		loopLag: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:                            "llm_prober_loop_lag_seconds",
			Help:                            "Lateness of a worker's canary timer, which fires every 10ms: client-side delay, visible even when probes are rare.",
			Buckets:                         DefaultLagBuckets,
			NativeHistogramBucketFactor:     nativeFactor,
			NativeHistogramMaxBucketNumber:  nativeMaxBuckets,
			NativeHistogramMinResetDuration: nativeMinReset,
		}, []string{"worker"}),
		predictedWait: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llm_prober_predicted_queue_wait_seconds",
			Help: "Pollaczek-Khinchine mean queueing delay of a worker, lambda*E[S^2]/(2(1-lambda*E[S])), from its measured event rate lambda and event service times S over the last " + UtilizationWindow.String() + "; +Inf when lambda*E[S] >= 1.",
		}, []string{"worker"}),
		serviceMean: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llm_prober_event_service_seconds",
			Help: "Mean service time E[S] of the events (stream reads) a worker handled over the last " + UtilizationWindow.String() + ".",
		}, []string{"worker"}),
		eventRate: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llm_prober_events_per_second",
			Help: "Rate lambda of the events (stream reads) a worker handled over the last " + UtilizationWindow.String() + ".",
		}, []string{"worker"}),
		workerInFl: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llm_prober_in_flight",
			Help: "Probes in flight in a worker process.",
		}, []string{"worker"}),
		workerRSS: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llm_prober_resident_memory_bytes",
			Help: "Resident set size of a worker process.",
		}, []string{"worker"}),
		lastBeat: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llm_prober_last_heartbeat_timestamp_seconds",
			Help: "When the supervisor last received a worker's heartbeat (sent every 500ms). A worker starved of CPU cannot send one, and its other gauges then hold their last values: time() minus this says how stale they are.",
		}, []string{"worker"}),
		workersUp: f.NewGauge(prometheus.GaugeOpts{
			Name: "llm_prober_workers",
			Help: "Worker processes running.",
		}),
		restarts: f.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_prober_worker_restarts_total",
			Help: "Times a worker process was restarted after it exited.",
		}, []string{"worker"}),
		unknownTarget: f.NewCounter(prometheus.CounterOpts{
			Name: "llm_prober_orphan_records_total",
			Help: "Records for a target that is no longer configured (probes that finished after a reload removed their target).",
		}),
	}
	reg.MustRegister(targetCollector{c})
	return c
}

// targetMetrics holds one target's metrics. Each target owns its
// histograms (rather than sharing a HistogramVec) because bucket edges can
// differ per target.
type targetMetrics struct {
	info TargetInfo

	// mu makes the ledger consistent: the counters and the in-flight
	// gauge of a target change together under it and are collected under
	// it, so every scrape satisfies arrivals = requests + dropped + in
	// flight exactly, even mid-probe.
	mu sync.Mutex

	arrivals     prometheus.Counter
	requests     prometheus.Counter
	failures     map[record.Reason]prometheus.Counter
	dropped      map[record.Reason]prometheus.Counter
	outputTokens prometheus.Counter
	promptTokens prometheus.Counter
	estimated    prometheus.Counter
	ttft         prometheus.Histogram
	ttfa         prometheus.Histogram
	tpot         prometheus.Histogram
	itl          prometheus.Histogram
	ntpot        prometheus.Histogram
	e2e          prometheus.Histogram
	lag          prometheus.Histogram
	rate         prometheus.Gauge
	inFlight     prometheus.Gauge
	inFlightN    int64

	recentMu sync.Mutex
	recent   []ProbeView
	next     int
}

func newTargetMetrics(t TargetInfo) *targetMetrics {
	l := t.labels()
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: l})
	}
	hist := func(name, help string, buckets []float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: name, Help: help, ConstLabels: l, Buckets: buckets,
			NativeHistogramBucketFactor:     nativeFactor,
			NativeHistogramMaxBucketNumber:  nativeMaxBuckets,
			NativeHistogramMinResetDuration: nativeMinReset,
			// Exemplars ride on the classic buckets (one per bucket, the
			// latest); a second set on the native histogram cost a sixth
			// of the supervisor's CPU per probe in profiles.
			NativeHistogramMaxExemplars: -1,
		})
	}
	ttft, ttfa, tpot, itl, ntpot, e2e := resolve(t.Buckets)
	m := &targetMetrics{
		info:         t,
		arrivals:     counter("llm_probe_arrivals_total", "Poisson arrivals scheduled for a target: sent probes plus arrivals dropped before sending."),
		requests:     counter("llm_probe_requests_total", "Probes that finished, successfully or not. Successes = requests - failures."),
		outputTokens: counter("llm_probe_output_tokens_total", "Output tokens of successful probes (server usage, or the estimate where the server reported none)."),
		promptTokens: counter("llm_probe_prompt_tokens_total", "Prompt tokens of successful probes, as reported by the server."),
		estimated:    counter("llm_probe_token_count_estimated_total", "Successful probes whose output token count was estimated from the stream because the server reported no usage."),
		ttft:         hist("llm_probe_time_to_first_token_seconds", "Time from dispatch to the first stream event carrying output (content, reasoning or tool call), successful probes.", ttft),
		ttfa:         hist("llm_probe_time_to_first_answer_token_seconds", "Time from dispatch to the first event carrying answer output (content or tool call, not reasoning), successful probes.", ttfa),
		tpot:         hist("llm_probe_time_per_output_token_seconds", "(last output event - first output event) / (output tokens - 1), successful probes with at least 2 tokens.", tpot),
		itl:          hist("llm_probe_inter_token_latency_seconds", "Gaps between consecutive output events; an event the server says carries k tokens contributes k gaps of gap/k.", itl),
		ntpot:        hist("llm_probe_normalized_time_per_output_token_seconds", "End-to-end duration / output tokens (NTPOT), successful probes.", ntpot),
		e2e:          hist("llm_probe_request_duration_seconds", "Time from dispatch to the stream's end marker, successful probes.", e2e),
		lag:          hist("llm_probe_schedule_lag_seconds", "Dispatch time - scheduled (Poisson) time of every sent probe: the client's own lateness.", DefaultLagBuckets),
		rate: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "llm_probe_configured_rate", Help: "Configured mean probe rate of a target, in probes per second.", ConstLabels: l,
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "llm_probe_in_flight", Help: "Probes of a target in flight over all workers.", ConstLabels: l,
		}),
		failures: map[record.Reason]prometheus.Counter{},
		dropped:  map[record.Reason]prometheus.Counter{},
	}
	m.rate.Set(t.Rate)
	// Every reason's series exists from the start at 0, so rate() and
	// ratios work before the first failure.
	for _, r := range record.FailureReasons() {
		m.failures[r] = prometheus.NewCounter(prometheus.CounterOpts{
			Name: "llm_probe_failures_total", Help: "Probes that failed, by reason.",
			ConstLabels: withReason(l, r),
		})
	}
	for _, r := range record.DropReasons() {
		m.dropped[r] = prometheus.NewCounter(prometheus.CounterOpts{
			Name: "llm_probe_dropped_total", Help: "Arrivals that produced no result, by reason: not sent (in_flight_limit, budget) or lost in flight (worker_lost, canceled).",
			ConstLabels: withReason(l, r),
		})
	}
	return m
}

func withReason(l prometheus.Labels, r record.Reason) prometheus.Labels {
	out := prometheus.Labels{"reason": r.String()}
	for k, v := range l {
		out[k] = v
	}
	return out
}

func (m *targetMetrics) collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inFlight.Set(float64(m.inFlightN))
	for _, c := range []prometheus.Collector{m.arrivals, m.requests, m.outputTokens, m.promptTokens, m.estimated,
		m.ttft, m.ttfa, m.tpot, m.itl, m.ntpot, m.e2e, m.lag, m.rate, m.inFlight} {
		c.Collect(ch)
	}
	for _, r := range record.FailureReasons() {
		m.failures[r].Collect(ch)
	}
	for _, r := range record.DropReasons() {
		m.dropped[r].Collect(ch)
	}
}

// targetCollector exposes the per-target metrics. It is an unchecked
// collector (Describe sends nothing) because targets come and go with
// reloads.
type targetCollector struct{ c *Collector }

func (targetCollector) Describe(chan<- *prometheus.Desc) {}

func (t targetCollector) Collect(ch chan<- prometheus.Metric) {
	t.c.mu.RLock()
	ms := make([]*targetMetrics, 0, len(t.c.targets))
	for _, m := range t.c.targets {
		ms = append(ms, m)
	}
	t.c.mu.RUnlock()
	slices.SortFunc(ms, func(a, b *targetMetrics) int { return int(a.info.ID) - int(b.info.ID) })
	for _, m := range ms {
		m.collect(ch)
	}
}

// SetTargets makes targets the current set. A target whose id is already
// known keeps its metrics (counts continue across reloads); a new id
// starts from zero; ids not in targets are removed, so their series
// disappear from /metrics.
func (c *Collector) SetTargets(targets []TargetInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[uint32]*targetMetrics, len(targets))
	byName := make(map[string]*targetMetrics, len(targets))
	for _, t := range targets {
		m, ok := c.targets[t.ID]
		if !ok {
			m = newTargetMetrics(t)
		}
		m.rate.Set(t.Rate)
		next[t.ID] = m
		byName[t.Name] = m
	}
	c.targets = next
	c.byName = byName
}

func (c *Collector) target(id uint32) *targetMetrics {
	c.mu.RLock()
	m := c.targets[id]
	c.mu.RUnlock()
	if m == nil {
		c.unknownTarget.Inc()
	}
	return m
}

// workerState is the supervisor's view of one worker process.
type workerState struct {
	label    string
	inFlight map[uint32]int // by target id
	window   []record.Heartbeat
	last     record.Heartbeat
	hasLast  bool
}

func (c *Collector) worker(i int) *workerState {
	w := c.workers[i]
	if w == nil {
		w = &workerState{label: strconv.Itoa(i), inFlight: map[uint32]int{}}
		c.workers[i] = w
	}
	return w
}

// Dispatch counts a probe sent by worker i.
func (c *Collector) Dispatch(worker int, d record.Dispatch) {
	m := c.target(d.TargetID)
	c.wmu.Lock()
	w := c.worker(worker)
	w.inFlight[d.TargetID]++
	c.workerInFl.WithLabelValues(w.label).Inc()
	c.wmu.Unlock()
	if m != nil {
		m.mu.Lock()
		m.arrivals.Inc()
		m.inFlightN++
		m.mu.Unlock()
	}
}

// Drop counts arrivals worker i did not send.
func (c *Collector) Drop(worker int, d record.Drop) {
	m := c.target(d.TargetID)
	if m == nil {
		return
	}
	m.mu.Lock()
	m.arrivals.Add(float64(d.Count))
	m.dropped[d.Reason].Add(float64(d.Count))
	m.mu.Unlock()
}

// Record accounts one finished probe of worker i.
func (c *Collector) Record(worker int, r *record.Record) {
	m := c.target(r.TargetID)
	c.wmu.Lock()
	w := c.worker(worker)
	dispatched := w.inFlight[r.TargetID] > 0
	if dispatched {
		w.inFlight[r.TargetID]--
		c.workerInFl.WithLabelValues(w.label).Dec()
	}
	c.wmu.Unlock()
	if m == nil {
		return
	}
	m.remember(worker, r)
	m.mu.Lock()
	defer m.mu.Unlock()
	if dispatched {
		m.inFlightN--
	} else {
		// No dispatch mark was seen (it cannot happen with a sound worker):
		// count the arrival here so that the ledger still balances.
		m.arrivals.Inc()
	}
	if r.Reason.IsDrop() {
		// Canceled in flight (reload or shutdown): no outcome.
		m.dropped[r.Reason].Inc()
		return
	}
	m.requests.Inc()
	m.lag.Observe(r.Lag.Seconds())
	if r.Reason != record.OK {
		m.failures[r.Reason].Inc()
		return
	}
	ex := prometheus.Labels{"request_id": record.RequestIDString(r.RequestID)}
	observe(m.ttft, r.TTFT.Seconds(), ex)
	if r.TTFA >= 0 {
		observe(m.ttfa, r.TTFA.Seconds(), ex)
	}
	observe(m.e2e, r.E2E.Seconds(), ex)
	if tpot, ok := r.TPOT(); ok {
		observe(m.tpot, tpot.Seconds(), ex)
	}
	if ntpot, ok := r.NTPOT(); ok {
		observe(m.ntpot, ntpot.Seconds(), ex)
	}
	for _, g := range r.ITL {
		m.itl.Observe(g.Seconds())
	}
	m.outputTokens.Add(float64(r.OutputTokens))
	if r.PromptTokens > 0 {
		m.promptTokens.Add(float64(r.PromptTokens))
	}
	if r.Estimated {
		m.estimated.Inc()
	}
}

func observe(h prometheus.Histogram, v float64, ex prometheus.Labels) {
	h.(prometheus.ExemplarObserver).ObserveWithExemplar(v, ex)
}

// Heartbeat updates worker i's health metrics.
func (c *Collector) Heartbeat(worker int, hb *record.Heartbeat) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	w := c.worker(worker)
	for _, l := range hb.LoopLag {
		c.loopLag.WithLabelValues(w.label).Observe(l.Seconds())
	}
	c.workerRSS.WithLabelValues(w.label).Set(float64(hb.RSS))
	c.lastBeat.WithLabelValues(w.label).SetToCurrentTime()
	cur := *hb
	cur.LoopLag = nil
	if w.hasLast {
		// Counters are cumulative per process: add the increase, or the
		// whole value after a restart reset them.
		c.cpuSeconds.WithLabelValues(w.label).Add(delta(cur.CPU, w.last.CPU).Seconds())
		c.waitSeconds.WithLabelValues(w.label).Add(delta(cur.Wait, w.last.Wait).Seconds())
	} else {
		c.cpuSeconds.WithLabelValues(w.label).Add(cur.CPU.Seconds())
		c.waitSeconds.WithLabelValues(w.label).Add(cur.Wait.Seconds())
	}
	w.last, w.hasLast = cur, true
	w.window = append(w.window, cur)
	for len(w.window) > 2 && cur.Wall-w.window[1].Wall >= UtilizationWindow {
		w.window = w.window[1:]
	}
	if len(w.window) < 2 {
		return
	}
	st := windowStats(w.window[0], cur)
	c.utilization.WithLabelValues(w.label).Set(st.rho)
	c.predictedWait.WithLabelValues(w.label).Set(st.wait)
	c.serviceMean.WithLabelValues(w.label).Set(st.meanS)
	c.eventRate.WithLabelValues(w.label).Set(st.lambda)
}

func delta(cur, prev time.Duration) time.Duration {
	if cur < prev {
		return cur
	}
	return cur - prev
}

// stats is what a window of heartbeats says about a worker.
type stats struct {
	rho    float64 // (CPU + wait) / wall
	lambda float64 // events per second
	meanS  float64 // E[S], seconds
	wait   float64 // P-K predicted mean queueing delay, seconds
}

// windowStats computes a worker's utilization and Pollaczek-Khinchine
// prediction between two heartbeats of the same process.
func windowStats(a, b record.Heartbeat) stats {
	wall := (b.Wall - a.Wall).Seconds()
	if wall <= 0 {
		return stats{}
	}
	var s stats
	s.rho = ((b.CPU - a.CPU) + (b.Wait - a.Wait)).Seconds() / wall
	n := float64(b.Events - a.Events)
	if b.Events < a.Events || n == 0 {
		return s
	}
	s.lambda = n / wall
	s.meanS = (b.ServiceSum - a.ServiceSum) / n
	es2 := (b.ServiceSumSq - a.ServiceSumSq) / n
	rhoPK := s.lambda * s.meanS
	if rhoPK >= 1 {
		s.wait = math.Inf(1)
	} else {
		s.wait = s.lambda * es2 / (2 * (1 - rhoPK))
	}
	return s
}

// WorkerStarted notes that worker i runs as a new process.
func (c *Collector) WorkerStarted(worker int) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	w := c.worker(worker)
	w.window = w.window[:0]
	w.hasLast = false
	// The restart counter exists from the first start at 0, so that
	// increase() sees the first restart too.
	c.restarts.WithLabelValues(w.label)
	c.running[worker] = true
	c.workersUp.Set(float64(len(c.running)))
}

// WorkerExited accounts the probes worker i had in flight when its process
// ended: they are counted as dropped with reason worker_lost. Every frame
// the process wrote has been handled before this is called.
func (c *Collector) WorkerExited(worker int) {
	c.wmu.Lock()
	w := c.worker(worker)
	lost := w.inFlight
	w.inFlight = map[uint32]int{}
	c.workerInFl.WithLabelValues(w.label).Set(0)
	delete(c.running, worker)
	c.workersUp.Set(float64(len(c.running)))
	c.wmu.Unlock()
	for id, n := range lost {
		if m := c.target(id); m != nil && n > 0 {
			m.mu.Lock()
			m.dropped[record.WorkerLost].Add(float64(n))
			m.inFlightN -= int64(n)
			m.mu.Unlock()
		}
	}
}

// WorkerRestarted counts a restart of worker i.
func (c *Collector) WorkerRestarted(worker int) {
	c.restarts.WithLabelValues(strconv.Itoa(worker)).Inc()
}

// RetireWorker removes the series of a worker that the plan no longer has.
func (c *Collector) RetireWorker(worker int) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	delete(c.workers, worker)
	delete(c.running, worker)
	c.workersUp.Set(float64(len(c.running)))
	l := strconv.Itoa(worker)
	for _, v := range []interface{ DeleteLabelValues(...string) bool }{
		c.utilization, c.cpuSeconds, c.waitSeconds, c.loopLag, c.predictedWait, c.serviceMean,
		c.eventRate, c.workerInFl, c.workerRSS, c.lastBeat, c.restarts,
	} {
		v.DeleteLabelValues(l)
	}
}

// ProbeView is one probe result as /probes shows it.
type ProbeView struct {
	Time         time.Time `json:"time"`
	RequestID    string    `json:"request_id"`
	Worker       int       `json:"worker"`
	Outcome      string    `json:"outcome"`
	Reason       string    `json:"reason,omitempty"`
	HTTPStatus   int       `json:"http_status,omitempty"`
	ScheduleLag  float64   `json:"schedule_lag_seconds"`
	TTFT         *float64  `json:"ttft_seconds,omitempty"`
	TPOT         *float64  `json:"tpot_seconds,omitempty"`
	NTPOT        *float64  `json:"ntpot_seconds,omitempty"`
	E2E          *float64  `json:"e2e_seconds,omitempty"`
	OutputTokens int       `json:"output_tokens,omitempty"`
	Estimated    bool      `json:"output_tokens_estimated,omitempty"`
	Detail       string    `json:"detail,omitempty"`
}

func secs(d time.Duration, ok bool) *float64 {
	if !ok || d < 0 {
		return nil
	}
	s := d.Seconds()
	return &s
}

func (m *targetMetrics) remember(worker int, r *record.Record) {
	v := ProbeView{
		Time:        time.Unix(0, r.Scheduled).UTC(),
		RequestID:   record.RequestIDString(r.RequestID),
		Worker:      worker,
		Outcome:     "success",
		HTTPStatus:  r.HTTPStatus,
		ScheduleLag: r.Lag.Seconds(),
		E2E:         secs(r.E2E, true),
		Detail:      r.Detail,
	}
	switch {
	case r.Reason.IsDrop():
		v.Outcome, v.Reason = "dropped", r.Reason.String()
	case r.Reason != record.OK:
		v.Outcome, v.Reason = "failure", r.Reason.String()
	default:
		v.TTFT = secs(r.TTFT, true)
		v.TPOT = secs(r.TPOT())
		v.NTPOT = secs(r.NTPOT())
		v.OutputTokens, v.Estimated = r.OutputTokens, r.Estimated
	}
	m.recentMu.Lock()
	if len(m.recent) < RecentProbes {
		m.recent = append(m.recent, v)
	} else {
		m.recent[m.next] = v
	}
	m.next = (m.next + 1) % RecentProbes
	m.recentMu.Unlock()
}

// TargetProbes is the recent probes of one target, newest first.
type TargetProbes struct {
	Target string      `json:"target"`
	Model  string      `json:"model"`
	API    string      `json:"api"`
	Probes []ProbeView `json:"probes"`
}

// Recent returns the recent probes of every target, ordered by name.
func (c *Collector) Recent() []TargetProbes {
	c.mu.RLock()
	ms := make([]*targetMetrics, 0, len(c.byName))
	for _, m := range c.byName {
		ms = append(ms, m)
	}
	c.mu.RUnlock()
	slices.SortFunc(ms, func(a, b *targetMetrics) int {
		switch {
		case a.info.Name < b.info.Name:
			return -1
		case a.info.Name > b.info.Name:
			return 1
		}
		return 0
	})
	out := make([]TargetProbes, 0, len(ms))
	for _, m := range ms {
		tp := TargetProbes{Target: m.info.Name, Model: m.info.Model, API: m.info.API, Probes: []ProbeView{}}
		m.recentMu.Lock()
		n := len(m.recent)
		for i := 1; i <= n; i++ {
			tp.Probes = append(tp.Probes, m.recent[(m.next-i+n)%n])
		}
		m.recentMu.Unlock()
		out = append(out, tp)
	}
	return out
}
