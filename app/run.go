// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/llmslo/llm_slo_exporter/config"
	"github.com/llmslo/llm_slo_exporter/prober"
	"github.com/llmslo/llm_slo_exporter/record"
	"github.com/llmslo/llm_slo_exporter/supervisor"
)

// Name is the program's name, used for build info and the user agent.
const Name = "llm_slo_exporter"

// DefaultListenAddress is the default --web.listen-address. Port 10240 is
// outside Prometheus' default port allocations (9100-9999, all taken), as
// the exporter guide recommends for new exporters, and clear of the usual
// ports of LLM servers (8000, 8080, 11434, 30000).
const DefaultListenAddress = ":10240"

// WorkerCommand is the hidden subcommand that runs a worker process.
const WorkerCommand = "worker"

// Run runs the program with args (without the program name) and returns
// its exit code. stdout and stderr are where help and logs go.
func Run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == WorkerCommand {
		return runWorker(args[1:], os.Stdin, os.Stdout, stderr)
	}
	a := kingpin.New(Name, "Prometheus exporter that probes streaming LLM endpoints with an open-loop Poisson schedule and exports TTFT, TPOT, ITL, E2E and NTPOT histograms together with the prober's own utilization.")
	a.UsageWriter(stdout)
	a.ErrorWriter(stderr)
	var (
		configFile   = a.Flag("config.file", "Configuration file.").Default("llm_slo_exporter.yml").String()
		configCheck  = a.Flag("config.check", "Validate the configuration file and exit (0 valid, 1 invalid).").Bool()
		autoReload   = a.Flag("config.auto-reload-interval", "Reload the configuration file this often if it changed (0 disables; SIGHUP and POST /-/reload always work).").Default("0s").Duration()
		metricsPath  = a.Flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").String()
		maxRequests  = a.Flag("web.max-requests", "Maximum number of parallel scrape requests; 0 means no limit.").Default("40").Int()
		noExpMetrics = a.Flag("web.disable-exporter-metrics", "Exclude the supervisor's Go runtime and process metrics (go_*, process_*) from /metrics.").Bool()
		recordFile   = a.Flag("debug.probe-record-file", "Append every probe's record (binary frames, see package record) to this file, for benchmarks and offline analysis. Flushed every second and at exit.").Hidden().String()
		toolkitFlags = kingpinflag.AddFlags(a, DefaultListenAddress)
	)
	logConfig := &promslog.Config{Writer: stderr}
	promslogflag.AddFlags(a, logConfig)
	a.Version(version.Print(Name))
	a.HelpFlag.Short('h')
	if _, err := a.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: error: %s\n", Name, err)
		return 2
	}
	logger := promslog.New(logConfig)

	if *configCheck {
		if _, _, err := config.LoadFile(*configFile); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprintf(stdout, "%s: configuration is valid\n", *configFile)
		return 0
	}

	logger.Info("starting "+Name, "version", version.Info(), "build_context", version.BuildContext())
	reg := prometheus.NewRegistry()
	reg.MustRegister(versioncollector.NewCollector(Name))
	gatherers := prometheus.Gatherers{reg}
	if !*noExpMetrics {
		own := prometheus.NewRegistry()
		own.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		gatherers = append(gatherers, own)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		rlog    *recordLog
		rlogErr error
	)
	exp := NewExporter(*configFile, reg, logger, func(sink supervisor.Sink) *supervisor.Supervisor {
		if *recordFile != "" {
			l, err := newRecordLog(*recordFile, sink)
			if err != nil {
				rlogErr = err
			} else {
				rlog, sink = l, l
			}
		}
		return supervisor.New(supervisor.Options{
			Command: supervisor.DefaultCommand(logConfig.Level.String()),
			Sink:    sink,
			Logger:  logger,
		})
	})
	if rlogErr != nil {
		logger.Error("cannot write probe records", "err", rlogErr)
		return 1
	}
	if err := exp.Reload(); err != nil {
		// Like Prometheus: a bad configuration at start is fatal; at a
		// reload it keeps the running one.
		return 1
	}
	supDone := make(chan struct{})
	go func() {
		defer close(supDone)
		exp.Supervisor().Run(ctx)
	}()

	handler, err := exp.Handler(HandlerOptions{MetricsPath: *metricsPath, Gatherer: gatherers, MaxRequests: *maxRequests})
	if err != nil {
		logger.Error("building HTTP handler", "err", err)
		return 1
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	srvErr := make(chan error, 1)
	go func() { srvErr <- web.ListenAndServe(srv, toolkitFlags, logger) }()

	stopReload := make(chan struct{})
	defer close(stopReload)
	if rlog != nil {
		defer rlog.Close()
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-stopReload:
					return
				case <-t.C:
					_ = rlog.Flush()
				}
			}
		}()
	}
	if *autoReload > 0 {
		go exp.autoReload(*autoReload, stopReload)
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	code := 0
loop:
	for {
		select {
		case s := <-sig:
			if s == syscall.SIGHUP {
				_ = exp.Reload()
				continue
			}
			logger.Info("received signal, exiting", "signal", s.String())
			break loop
		case err := <-srvErr:
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error("HTTP server failed", "err", err)
				code = 1
			}
			break loop
		}
	}
	shutCtx, shutCancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer shutCancel()
	_ = srv.Shutdown(shutCtx)
	cancel()
	<-supDone
	return code
}

// runWorker is the body of a worker process. Its logs go to stderr as
// JSON, which the supervisor re-emits with a worker label in the user's
// format.
func runWorker(args []string, stdin io.Reader, stdout io.Writer, stderr io.Writer) int {
	runtime.GOMAXPROCS(1)
	// A worker's live heap is small (its probes in flight) and its GC
	// costs about 1% of its CPU, so trading a little more GC for a
	// smaller heap is cheap; GOGC in the environment still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	a := kingpin.New(Name+" "+WorkerCommand, "Prober worker process (started by the supervisor; not for direct use).")
	a.ErrorWriter(stderr)
	level := a.Flag("log.level", "Log level.").Default("info").String()
	if _, err := a.Parse(args); err != nil {
		fmt.Fprintf(stderr, "worker: %s\n", err)
		return 2
	}
	lvl := promslog.NewLevel()
	if err := lvl.Set(*level); err != nil {
		fmt.Fprintf(stderr, "worker: %s\n", err)
		return 2
	}
	fmtJSON := promslog.NewFormat()
	_ = fmtJSON.Set("json")
	logger := promslog.New(&promslog.Config{Level: lvl, Format: fmtJSON, Writer: stderr})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The supervisor asks a worker to stop by closing its stdin; signals
	// end it too (Ctrl-C reaches the whole process group).
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-sig:
			cancel()
		case <-ctx.Done():
		}
	}()
	// A CPU profile of each worker, for benchmarks: the supervisor's own
	// profile is at /debug/pprof.
	if dir := os.Getenv("LLMSLO_WORKER_CPUPROFILE"); dir != "" {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("worker-%d.prof", os.Getpid())))
		if err == nil {
			defer f.Close() // after StopCPUProfile, which writes the profile
			if err := pprof.StartCPUProfile(f); err == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	w := record.NewWriter(stdout)
	if err := prober.Run(ctx, stdin, w, logger, version.ComponentUserAgent(Name)); err != nil {
		logger.Error("worker failed", "err", err)
		return 1
	}
	return 0
}

// NewLogger returns a logger for tests and embedders.
func NewLogger(w io.Writer, level string) *slog.Logger {
	lvl := promslog.NewLevel()
	_ = lvl.Set(level)
	return promslog.New(&promslog.Config{Level: lvl, Writer: w})
}
