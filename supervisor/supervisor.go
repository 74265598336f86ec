// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Package supervisor runs the prober worker processes: it starts them,
// hands each its plan over stdin, decodes the frames they write to stdout,
// re-emits their stderr logs with a worker label, and restarts any that
// exits, with backoff.
//
// Why processes and not goroutines: each worker is one M/G/1 server
// (GOMAXPROCS=1), so its utilization is measured rather than guessed, and
// a crash or a GC pause in one worker cannot touch another's timings or the
// supervisor's metric state.
package supervisor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/llmslo/llm_slo_exporter/prober"
	"github.com/llmslo/llm_slo_exporter/record"
)

// Sink receives what the workers report. The collector implements it.
// Calls for one worker are sequential and in the order the worker wrote
// them; calls for different workers may be concurrent.
type Sink interface {
	Record(worker int, r *record.Record)
	Dispatch(worker int, d record.Dispatch)
	Drop(worker int, d record.Drop)
	Heartbeat(worker int, hb *record.Heartbeat)
	// WorkerStarted is called when a process for the worker started.
	WorkerStarted(worker int)
	// WorkerExited is called after every frame of the process was handled.
	WorkerExited(worker int)
	// WorkerRestarted is called when an exited worker is started again.
	WorkerRestarted(worker int)
	// RetireWorker is called when the plan no longer has the worker.
	RetireWorker(worker int)
}

// Options configure a Supervisor.
type Options struct {
	// Command returns the command that runs worker i. The default runs
	// this executable with the hidden "worker" subcommand.
	Command func(i int) *exec.Cmd
	// Sink receives the workers' reports.
	Sink Sink
	// Logger receives the supervisor's logs and the workers' re-emitted
	// logs.
	Logger *slog.Logger
	// MinBackoff and MaxBackoff bound the delay before a restart; it
	// doubles with each quick successive exit and resets after a worker
	// ran for StableAfter.
	MinBackoff, MaxBackoff, StableAfter time.Duration
	// StopTimeout is how long a stopping worker may take to report its
	// canceled probes before it is killed.
	StopTimeout time.Duration
}

// DefaultCommand runs this executable's "worker" subcommand with
// GOMAXPROCS=1, passing the log level and format.
func DefaultCommand(logLevel string) func(i int) *exec.Cmd {
	return func(i int) *exec.Cmd {
		exe, err := os.Executable()
		if err != nil {
			exe = os.Args[0]
		}
		cmd := exec.Command(exe, "worker", "--log.level="+logLevel)
		return cmd
	}
}

// Supervisor runs the worker processes.
type Supervisor struct {
	opts Options

	mu    sync.Mutex
	slots map[int]*slot
	gen   uint64
	ctx   context.Context
	wg    sync.WaitGroup
}

// New returns a Supervisor. Call Run, then Apply.
func New(opts Options) *Supervisor {
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 100 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 10 * time.Second
	}
	if opts.StableAfter <= 0 {
		// A worker that ran this long was working, not crash-looping: its
		// next restart starts from MinBackoff again. Only quick successive
		// exits (a worker that cannot start) back off to MaxBackoff.
		opts.StableAfter = 5 * time.Second
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Supervisor{opts: opts, slots: map[int]*slot{}, ctx: context.Background()}
}

// slot is one worker index and the process currently running it.
type slot struct {
	i      int
	mu     sync.Mutex
	plan   []byte // JSON of the current prober.Plan
	stdin  io.WriteCloser
	pid    int
	retire context.CancelFunc
	done   chan struct{}
}

// Apply makes the workers run a new plan: the configuration's bytes and
// file name, the number of workers, the global seed and the target ids.
// Workers beyond the new count are stopped; missing ones are started.
func (s *Supervisor) Apply(cfg []byte, file string, workers int, seed uint64, ids map[string]uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	for i := range workers {
		plan, _ := json.Marshal(prober.Plan{
			Generation: s.gen, Worker: i, Workers: workers, Seed: seed,
			Config: cfg, ConfigFile: file, TargetIDs: ids,
		})
		sl := s.slots[i]
		if sl == nil {
			ctx, cancel := context.WithCancel(s.ctx)
			sl = &slot{i: i, retire: cancel, done: make(chan struct{}), plan: plan}
			s.slots[i] = sl
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer close(sl.done)
				s.runSlot(ctx, sl)
			}()
			continue
		}
		sl.mu.Lock()
		sl.plan = plan
		if sl.stdin != nil {
			if err := writePlan(sl.stdin, plan); err != nil {
				s.opts.Logger.Warn("cannot send plan to worker; it will get it when restarted", "worker", i, "err", err)
			}
		}
		sl.mu.Unlock()
	}
	for i, sl := range s.slots {
		if i >= workers {
			delete(s.slots, i)
			sl.retire()
			go func() {
				<-sl.done
				s.opts.Sink.RetireWorker(i)
			}()
		}
	}
}

func writePlan(w io.Writer, plan []byte) error {
	rw := record.NewWriter(w)
	rw.WriteRaw(record.KindPlan, plan)
	return rw.Flush()
}

// Run supervises the workers until ctx is done, then stops them all,
// letting each report its canceled probes, and returns.
func (s *Supervisor) Run(ctx context.Context) {
	s.mu.Lock()
	// Slots started by an Apply before Run inherit Background; make the
	// ones started from now on children of ctx. All are retired below
	// (slots an Apply removed were retired then).
	s.ctx = ctx
	s.mu.Unlock()
	<-ctx.Done()
	s.mu.Lock()
	for _, sl := range s.slots {
		sl.retire()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// PIDs returns the process ids of the running workers, by worker index.
func (s *Supervisor) PIDs() map[int]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int]int{}
	for i, sl := range s.slots {
		sl.mu.Lock()
		if sl.pid != 0 {
			out[i] = sl.pid
		}
		sl.mu.Unlock()
	}
	return out
}

// runSlot keeps worker sl.i running until ctx is done.
func (s *Supervisor) runSlot(ctx context.Context, sl *slot) {
	backoff := s.opts.MinBackoff
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			s.opts.Sink.WorkerRestarted(sl.i)
		}
		started := time.Now()
		err := s.runProcess(ctx, sl)
		if ctx.Err() != nil {
			return
		}
		ran := time.Since(started)
		s.opts.Logger.Warn("worker exited; restarting", "worker", sl.i, "ran", ran.Round(time.Millisecond), "backoff", backoff, "err", err)
		if ran >= s.opts.StableAfter {
			backoff = s.opts.MinBackoff
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, s.opts.MaxBackoff)
	}
}

// runProcess runs one process for sl until it exits. When ctx is done it
// closes the worker's stdin, which asks it to stop; a worker that does not
// exit within StopTimeout is killed.
func (s *Supervisor) runProcess(ctx context.Context, sl *slot) error {
	cmd := s.opts.Command(sl.i)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "GOMAXPROCS=1")
	// The worker dies with the supervisor, whatever kills it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("stdin pipe: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("stdout pipe: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return fmt.Errorf("stderr pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting worker: %w", err)
	}
	s.opts.Sink.WorkerStarted(sl.i)
	s.opts.Logger.Debug("worker started", "worker", sl.i, "pid", cmd.Process.Pid)

	sl.mu.Lock()
	sl.stdin, sl.pid = stdin, cmd.Process.Pid
	if err := writePlan(stdin, sl.plan); err != nil {
		s.opts.Logger.Warn("cannot send plan to worker", "worker", sl.i, "err", err)
	}
	sl.mu.Unlock()

	logsDone := make(chan struct{})
	go func() {
		defer close(logsDone)
		relayLogs(stderr, s.opts.Logger, sl.i)
	}()

	exited := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			sl.mu.Lock()
			_ = stdin.Close()
			sl.mu.Unlock()
			t := time.NewTimer(s.opts.StopTimeout)
			defer t.Stop()
			select {
			case <-exited:
			case <-t.C:
				s.opts.Logger.Warn("worker did not stop in time; killing it", "worker", sl.i)
				_ = cmd.Process.Kill()
			}
		case <-exited:
		}
	}()

	readErr := s.readFrames(stdout, sl.i)
	<-logsDone
	waitErr := cmd.Wait()
	close(exited)
	sl.mu.Lock()
	sl.stdin, sl.pid = nil, 0
	sl.mu.Unlock()
	s.opts.Sink.WorkerExited(sl.i)
	if readErr != nil {
		return readErr
	}
	return waitErr
}

// readFrames hands every frame of a worker to the sink until EOF.
func (s *Supervisor) readFrames(r io.Reader, worker int) error {
	rd := record.NewReader(r)
	sink := s.opts.Sink
	for {
		k, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			// A torn frame means the worker died mid-write: drain the pipe
			// so the process can exit, and report.
			_, _ = io.Copy(io.Discard, r)
			return fmt.Errorf("reading worker frames: %w", err)
		}
		switch k {
		case record.KindRecord:
			rec, err := rd.Record()
			if err != nil {
				s.opts.Logger.Error("bad record from worker", "worker", worker, "err", err)
				continue
			}
			sink.Record(worker, rec)
		case record.KindDispatch:
			if d, err := rd.Dispatch(); err == nil {
				sink.Dispatch(worker, d)
			}
		case record.KindDrop:
			if d, err := rd.Drop(); err == nil {
				sink.Drop(worker, d)
			} else {
				s.opts.Logger.Error("bad drop from worker", "worker", worker, "err", err)
			}
		case record.KindHeartbeat:
			if hb, err := rd.Heartbeat(); err == nil {
				sink.Heartbeat(worker, hb)
			}
		case record.KindAck:
			if a, err := rd.Ack(); err == nil {
				s.opts.Logger.Debug("worker runs plan", "worker", worker, "generation", a.Generation)
			}
		default:
			s.opts.Logger.Error("unknown frame from worker", "worker", worker, "kind", k)
		}
	}
}

// relayLogs re-emits a worker's JSON log lines through logger with a
// worker attribute; lines that are not JSON (a panic's stack trace) are
// logged as errors verbatim.
func relayLogs(r io.Reader, logger *slog.Logger, worker int) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			logger.Error("worker output", "worker", worker, "line", string(line))
			continue
		}
		level := slog.LevelInfo
		if l, ok := m["level"].(string); ok {
			_ = level.UnmarshalText([]byte(l))
		}
		msg, _ := m["msg"].(string)
		delete(m, "msg")
		delete(m, "level")
		delete(m, "time")
		delete(m, "source")
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		attrs := make([]slog.Attr, 0, len(keys)+1)
		attrs = append(attrs, slog.Int("worker", worker))
		for _, k := range keys {
			attrs = append(attrs, slog.Any(k, m[k]))
		}
		logger.LogAttrs(context.Background(), level, msg, attrs...)
	}
}
