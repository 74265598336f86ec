// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package prober

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmslo/llm_slo_exporter/config"
	"github.com/llmslo/llm_slo_exporter/prober/schedule"
	"github.com/llmslo/llm_slo_exporter/prober/selfstat"
	"github.com/llmslo/llm_slo_exporter/record"
)

// Plan is what the supervisor sends a worker: its index, the configuration
// and the stable ids of the targets. A worker receives a new Plan on every
// reload.
type Plan struct {
	// Generation increases with every plan the supervisor makes.
	Generation uint64 `json:"generation"`
	// Worker is this worker's index, 0 <= Worker < Workers.
	Worker  int `json:"worker"`
	Workers int `json:"workers"`
	// Seed is the global seed (never 0: the supervisor draws one when the
	// configuration says 0, so that restarted workers keep their streams).
	Seed uint64 `json:"seed"`
	// Config is the configuration file's bytes and ConfigFile its path (for
	// error messages and relative credential files). The worker parses the
	// same bytes the supervisor validated, rather than re-reading the file,
	// so the two can never disagree; the bytes may hold secrets and travel
	// only over the worker's private stdin pipe.
	Config     []byte `json:"config"`
	ConfigFile string `json:"config_file"`
	// TargetIDs maps each target name to its id in records.
	TargetIDs map[string]uint32 `json:"target_ids"`
}

// Timing of a worker's own instrumentation.
const (
	// HeartbeatInterval is how often a worker reports its health.
	HeartbeatInterval = 500 * time.Millisecond
	// CanaryInterval is the period of the lag canary: a timer whose
	// lateness shows client delay even when probes are rare.
	CanaryInterval = 10 * time.Millisecond
	// FlushInterval is how long a worker lets frames accumulate before it
	// writes them to the supervisor. A worker killed mid-interval loses the
	// frames of that interval, so this also bounds what a crash can hide.
	FlushInterval = 5 * time.Millisecond
)

// Worker runs one worker process's share of the plan.
type Worker struct {
	out       *record.Writer
	logger    *slog.Logger
	clock     schedule.Clock
	userAgent string

	stats ServiceStats
	start time.Time

	mu      sync.Mutex
	runners map[string]*runner
	plan    *Plan
	probes  sync.WaitGroup
	probeCx context.Context // canceled at shutdown: in-flight probes end as Canceled
	stopAll context.CancelFunc

	// global is the worker's share of the exporter-wide budget.
	globalProbes, globalTokens *bucket
	globalKey                  string

	ids   *mrand.Rand
	idsMu sync.Mutex

	lagMu sync.Mutex
	lags  []time.Duration
}

// NewWorker returns a Worker that reports to out.
func NewWorker(out *record.Writer, logger *slog.Logger, clock schedule.Clock, userAgent string) *Worker {
	var seed [16]byte
	_, _ = rand.Read(seed[:])
	ctx, cancel := context.WithCancel(context.Background())
	return &Worker{
		out:       out,
		logger:    logger,
		clock:     clock,
		userAgent: userAgent,
		start:     clock.Now(),
		runners:   map[string]*runner{},
		probeCx:   ctx,
		stopAll:   cancel,
		ids:       mrand.New(mrand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:]))),
	}
}

// runner is one target's schedule in this worker.
type runner struct {
	target *Target
	// tProbes and tTokens are the target's own caps (nil: none); budget
	// combines them with the worker's global caps and is swapped on every
	// plan, since the global caps may change while the target stays.
	tProbes, tTokens *bucket
	budget           atomic.Pointer[budgets]
	key              string // what must stay equal for the runner to be kept on a new plan
	cancel           context.CancelFunc
	done             chan struct{}
	inFlight         atomic.Int32
	cap              int32
}

// share splits total over workers: worker i gets total/workers, plus one of
// the remainder for the first total%workers workers.
func share(total, workers, i int) int {
	n := total / workers
	if i < total%workers {
		n++
	}
	return n
}

// Apply makes the worker run plan. Targets whose settings did not change
// keep their schedule and their in-flight probes; changed and removed
// targets stop scheduling, and their in-flight probes finish normally.
func (w *Worker) Apply(plan *Plan) error {
	cfg, err := config.Parse(plan.Config, plan.ConfigFile)
	if err != nil {
		return fmt.Errorf("parsing plan configuration: %w", err)
	}
	if plan.Workers < 1 || plan.Worker < 0 || plan.Worker >= plan.Workers {
		return fmt.Errorf("invalid plan: worker %d of %d", plan.Worker, plan.Workers)
	}
	// Build every new target before touching the running ones, so a plan
	// that fails leaves the worker as it was.
	next := map[string]*runner{}
	w.mu.Lock()
	defer w.mu.Unlock()
	if gk := fmt.Sprint(cfg.Budget, plan.Workers); gk != w.globalKey {
		w.globalProbes, w.globalTokens = newBudgetPair(cfg.Budget, plan.Workers, w.clock)
		w.globalKey = gk
	}
	for i := range cfg.Targets {
		tc := &cfg.Targets[i]
		id, ok := plan.TargetIDs[tc.Name]
		if !ok {
			return fmt.Errorf("plan has no id for target %q", tc.Name)
		}
		spec, _ := json.Marshal(struct {
			T    *config.Target
			ID   uint32
			W, N int
			Seed uint64
			// Secrets marshal as <secret>: their values make a plan that
			// only changes a credential rebuild the target too.
			Secrets []string
		}{tc, id, plan.Worker, plan.Workers, plan.Seed, secretValues(tc)})
		key := string(spec)
		if old, ok := w.runners[tc.Name]; ok && old.key == key {
			// Keep the schedule, the in-flight probes and what is left of
			// the target's budget.
			next[tc.Name] = old
			continue
		}
		capN := share(tc.MaxInFlight, plan.Workers, plan.Worker)
		t, err := NewTarget(id, tc, w.userAgent, capN)
		if err != nil {
			for _, r := range next {
				if w.runners[r.target.Name] != r {
					r.target.CloseIdle()
				}
			}
			return err
		}
		r := &runner{target: t, key: key, cap: int32(capN), done: make(chan struct{})}
		r.tProbes, r.tTokens = newBudgetPair(tc.Budget, plan.Workers, w.clock)
		next[tc.Name] = r
	}
	for _, r := range next {
		r.budget.Store(&budgets{probes: nonNil(r.tProbes, w.globalProbes), tokens: nonNil(r.tTokens, w.globalTokens)})
	}
	for name, old := range w.runners {
		if next[name] != old {
			old.cancel()
			<-old.done
			old.target.CloseIdle()
		}
	}
	for name, r := range next {
		if w.runners[name] == r {
			continue
		}
		tc := cfg.Targets[indexOf(cfg, name)]
		rate := tc.Rate / float64(plan.Workers)
		ctx, cancel := context.WithCancel(w.probeCx)
		r.cancel = cancel
		p := schedule.NewPoisson(rate, schedule.NewRand(schedule.Seed(plan.Seed, plan.Worker, name)))
		go func() {
			defer close(r.done)
			schedule.Run(ctx, w.clock, w.clock.Now(), p, func(at time.Time) { w.fire(r, at) })
		}()
	}
	w.runners = next
	w.plan = plan
	w.out.WriteAck(record.Ack{Generation: plan.Generation})
	return nil
}

// nonNil returns the non-nil buckets among bs.
func nonNil(bs ...*bucket) []*bucket {
	out := make([]*bucket, 0, len(bs))
	for _, b := range bs {
		if b != nil {
			out = append(out, b)
		}
	}
	return out
}

func indexOf(c *config.Config, name string) int {
	for i := range c.Targets {
		if c.Targets[i].Name == name {
			return i
		}
	}
	return -1
}

func (w *Worker) nextID() uint64 {
	w.idsMu.Lock()
	defer w.idsMu.Unlock()
	return w.ids.Uint64()
}

// fire handles one arrival: it is sent in its own goroutine if the
// target's in-flight cap allows, and dropped (never queued) otherwise.
func (w *Worker) fire(r *runner, scheduled time.Time) {
	if r.inFlight.Load() >= r.cap {
		w.out.WriteDrop(record.Drop{TargetID: r.target.ID, Reason: record.InFlightLimit, Count: 1})
		return
	}
	if !r.budget.Load().admit() {
		w.out.WriteDrop(record.Drop{TargetID: r.target.ID, Reason: record.Budget, Count: 1})
		return
	}
	r.inFlight.Add(1)
	w.probes.Add(1)
	w.out.WriteDispatch(record.Dispatch{TargetID: r.target.ID})
	go func() {
		defer w.probes.Done()
		rec := recordPool.Get().(*record.Record)
		r.target.Probe(w.probeCx, scheduled, w.nextID(), &w.stats, rec)
		r.inFlight.Add(-1)
		r.budget.Load().spendTokens(rec.OutputTokens)
		w.out.WriteRecord(rec)
		recordPool.Put(rec)
	}()
}

var recordPool = sync.Pool{New: func() any { return &record.Record{} }}

// heartbeat writes one Heartbeat.
func (w *Worker) heartbeat(ss *selfstat.Reader, hb *record.Heartbeat) {
	s := ss.Read()
	n, sum, sumSq := w.stats.Read()
	w.lagMu.Lock()
	hb.LoopLag = append(hb.LoopLag[:0], w.lags...)
	w.lags = w.lags[:0]
	w.lagMu.Unlock()
	hb.Wall = w.clock.Now().Sub(w.start)
	hb.CPU, hb.Wait = s.CPU, s.Wait
	hb.Events, hb.ServiceSum, hb.ServiceSumSq = n, sum, sumSq
	hb.RSS = selfstat.RSS()
	w.out.WriteHeartbeat(hb)
}

// runHealth sends heartbeats and runs the lag canary until ctx is done.
func (w *Worker) runHealth(ctx context.Context) {
	ss := selfstat.NewReader()
	hb := &record.Heartbeat{}
	w.heartbeat(ss, hb)
	beat := time.NewTicker(HeartbeatInterval)
	defer beat.Stop()
	// The canary runs on the worker's clock, like the schedules, so its
	// lateness is the worker's own scheduling delay and not Go's timer
	// granularity.
	canary := w.clock.NewTimer(CanaryInterval)
	defer canary.Stop()
	expected := time.Now().Add(CanaryInterval)
	for {
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
			w.heartbeat(ss, hb)
		case <-canary.C():
			late := time.Since(expected)
			w.lagMu.Lock()
			if len(w.lags) < 4096 {
				w.lags = append(w.lags, max(late, 0))
			}
			w.lagMu.Unlock()
			expected = time.Now().Add(CanaryInterval)
			canary.Reset(CanaryInterval)
		}
	}
}

// Run is the body of a worker process: it reads plans from in, probes,
// and writes frames to out's underlying writer until in is closed (the
// supervisor stopped or died) or ctx is done. In-flight probes are then
// canceled and reported as dropped.
func Run(ctx context.Context, in io.Reader, out *record.Writer, logger *slog.Logger, userAgent string) error {
	w := NewWorker(out, logger, schedule.Precise{}, userAgent)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	flushErr := make(chan error, 1)
	flushDone := make(chan struct{})
	go func() {
		defer close(flushDone)
		// Coalesce: at most one write per FlushInterval. At high rates this
		// turns hundreds of small pipe writes (and supervisor wake-ups) a
		// second into a few hundred bytes-to-kilobytes batches.
		hold := time.NewTimer(0)
		<-hold.C
		for {
			select {
			case <-out.Notify():
				hold.Reset(FlushInterval)
				select {
				case <-hold.C:
				case <-ctx.Done():
					return
				}
				if err := out.Flush(); err != nil {
					flushErr <- err
					cancel()
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	go w.runHealth(ctx)

	plans := make(chan *Plan)
	readErr := make(chan error, 1)
	go func() {
		rd := record.NewReader(in)
		for {
			k, err := rd.Next()
			if err != nil {
				readErr <- err
				return
			}
			if k != record.KindPlan {
				continue
			}
			p := &Plan{}
			if err := json.Unmarshal(rd.Payload(), p); err != nil {
				readErr <- fmt.Errorf("decoding plan: %w", err)
				return
			}
			select {
			case plans <- p:
			case <-ctx.Done():
				return
			}
		}
	}()

	var err error
loop:
	for {
		select {
		case p := <-plans:
			if aerr := w.Apply(p); aerr != nil {
				// The supervisor validated this configuration; failing here
				// means the worker cannot build a client (for example a
				// credentials file that vanished). Keep the old plan running.
				logger.Error("cannot apply plan", "generation", p.Generation, "err", aerr)
			} else {
				logger.Debug("applied plan", "generation", p.Generation, "targets", len(p.TargetIDs))
			}
		case e := <-readErr:
			if !errors.Is(e, io.EOF) {
				err = e
			}
			break loop
		case e := <-flushErr:
			err = fmt.Errorf("writing to supervisor: %w", e)
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	w.shutdown()
	cancel()
	<-flushDone
	if ferr := out.Flush(); ferr != nil && err == nil && !errors.Is(ferr, io.ErrClosedPipe) {
		err = fmt.Errorf("final flush: %w", ferr)
	}
	return err
}

// shutdown stops all schedules and cancels the probes in flight; their
// records (reason canceled) are queued before it returns.
func (w *Worker) shutdown() {
	w.mu.Lock()
	for _, r := range w.runners {
		r.cancel()
		<-r.done
	}
	w.mu.Unlock()
	w.stopAll()
	w.probes.Wait()
}
