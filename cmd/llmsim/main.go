// Command llmsim is an OpenAI-compatible LLM inference endpoint simulator with
// controllable latency, output length, chunking and failure injection, and
// with server-side truth exported as Prometheus metrics and per-request
// records. It is the default target of the llm_slo_exporter demo, tests and
// benchmarks. See simulator/README.md for its endpoints and admin API.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"

	"github.com/llmslo/llm_slo_exporter/simulator"
)

const name = "llmsim"

// shutdownGrace is how long in-flight requests get to finish after SIGINT or
// SIGTERM before their connections are closed.
const shutdownGrace = 5 * time.Second

func main() { os.Exit(run()) }

func run() int {
	app := kingpin.New(name, "An OpenAI-compatible LLM endpoint simulator with controllable behaviour and server-side truth.")
	app.Version(version.Print(name))
	app.HelpFlag.Short('h')
	logConfig := &promslog.Config{}
	promslogflag.AddFlags(app, logConfig)

	cfg := simulator.DefaultConfig()
	var ttftDist, itlDist string
	listen := app.Flag("listen-address", "Address to listen on.").Default("127.0.0.1:8000").String()
	truthCap := app.Flag("truth.capacity", "Number of most recent per-request truth records kept for /admin/truth (0 disables).").Default(fmt.Sprint(simulator.DefaultTruthCapacity)).Int()
	seed := app.Flag("seed", "Seed for the random draws (0: random).").Default("0").Uint64()
	app.Flag("ttft", "Mean time to first token.").Default(cfg.TTFT.String()).DurationVar(&cfg.TTFT)
	app.Flag("ttft.distribution", "Distribution of TTFT.").Default(string(cfg.TTFTDistribution)).EnumVar(&ttftDist, simulator.Distributions...)
	app.Flag("ttft.stddev", "Standard deviation of TTFT (normal, lognormal).").Default(cfg.TTFTStddev.String()).DurationVar(&cfg.TTFTStddev)
	app.Flag("itl", "Mean inter-token latency; a chunk of K tokens follows the previous one after K draws.").Default(cfg.ITL.String()).DurationVar(&cfg.ITL)
	app.Flag("itl.distribution", "Distribution of ITL.").Default(string(cfg.ITLDistribution)).EnumVar(&itlDist, simulator.Distributions...)
	app.Flag("itl.stddev", "Standard deviation of ITL (normal, lognormal).").Default(cfg.ITLStddev.String()).DurationVar(&cfg.ITLStddev)
	app.Flag("output-tokens", "Output length when the request does not force one (max_tokens with ignore_eos).").Default(fmt.Sprint(cfg.OutputTokens)).IntVar(&cfg.OutputTokens)
	app.Flag("output-tokens.stddev", "If positive, draw the output length from a normal distribution around --output-tokens.").Default("0").Float64Var(&cfg.OutputTokensStddev)
	app.Flag("tokens-per-chunk", "Tokens per content chunk (the last chunk may carry fewer).").Default(fmt.Sprint(cfg.TokensPerChunk)).IntVar(&cfg.TokensPerChunk)
	app.Flag("usage", "Honour stream_options.include_usage with a final usage chunk (--no-usage: never report usage).").Default("true").BoolVar(&cfg.Usage)
	app.Flag("role-chunk", "Start chat streams with a role-only chunk (--no-role-chunk: role on the first content chunk).").Default("true").BoolVar(&cfg.RoleChunk)
	app.Flag("error-rate", "Probability of answering a request with --error-status and an error body.").Default("0").Float64Var(&cfg.ErrorRate)
	app.Flag("error-status", "HTTP status for --error-rate.").Default(fmt.Sprint(cfg.ErrorStatus)).IntVar(&cfg.ErrorStatus)
	app.Flag("midstream-error-rate", "Probability of ending a stream half-way with an error event and [DONE].").Default("0").Float64Var(&cfg.MidstreamErrorRate)
	app.Flag("truncate-rate", "Probability of aborting a stream half-way without finish chunk or [DONE].").Default("0").Float64Var(&cfg.TruncateRate)
	app.Flag("stall-rate", "Probability of stalling a stream after its first content chunk.").Default("0").Float64Var(&cfg.StallRate)
	app.Flag("stall", "Length of an injected stall (0: hang until the client goes away).").Default("0s").DurationVar(&cfg.Stall)

	if _, err := app.Parse(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		app.Usage(os.Args[1:])
		return 2
	}
	cfg.TTFTDistribution = simulator.Distribution(ttftDist)
	cfg.ITLDistribution = simulator.Distribution(itlDist)
	logger := promslog.New(logConfig)

	sim, err := simulator.New(simulator.Options{
		Config:        cfg,
		TruthCapacity: *truthCap,
		Seed:          *seed,
		Logger:        logger,
	})
	if err != nil {
		logger.Error("Invalid flags", "err", err)
		return 2
	}
	sim.Registry().MustRegister(
		versioncollector.NewCollector(name),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		logger.Error("Cannot listen", "address", *listen, "err", err)
		return 1
	}
	srv := &http.Server{
		Handler:           sim.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
	}
	logger.Info("Starting "+name, "version", version.Info(), "build_context", version.BuildContext())
	logger.Info("Listening", "address", ln.Addr().String(), "config", configString(sim.Config()))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	select {
	case err := <-errc:
		logger.Error("Server failed", "err", err)
		return 1
	case <-ctx.Done():
	}
	stop()
	logger.Info("Shutting down", "grace", shutdownGrace)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		// Streams still running (a hung stall, say): cut them.
		logger.Warn("Graceful shutdown incomplete, closing connections", "err", err)
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Error("Server failed", "err", err)
		return 1
	}
	return 0
}

func configString(c simulator.Config) string {
	b, err := c.MarshalJSON()
	if err != nil {
		return err.Error()
	}
	return string(b)
}
