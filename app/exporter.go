// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Package app wires the exporter together: configuration and reloads, the
// supervisor and its workers, the collector, and the HTTP endpoints. It is
// a package rather than code in main so that tests run the whole exporter
// in-process.
package app

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/llmslo/llm_slo_exporter/collector"
	"github.com/llmslo/llm_slo_exporter/config"
	"github.com/llmslo/llm_slo_exporter/supervisor"
)

// Exporter is a running exporter: its configuration, its collector and its
// supervisor.
type Exporter struct {
	logger     *slog.Logger
	configFile string
	coll       *collector.Collector
	sup        *supervisor.Supervisor

	mu       sync.RWMutex
	cfg      *config.Config
	checksum string
	seed     uint64
	ids      map[string]uint32 // target identity -> id
	nextID   uint32

	reloadMu      sync.Mutex
	rejected      string // checksum (or read error) of the last file rejected
	reloadOK      prometheus.Gauge
	reloadSuccess prometheus.Gauge
	reloads       *prometheus.CounterVec
}

// NewExporter returns an Exporter whose metrics are registered with reg.
// The supervisor is built by the caller so that tests can inject how
// workers are started.
func NewExporter(configFile string, reg prometheus.Registerer, logger *slog.Logger, newSupervisor func(supervisor.Sink) *supervisor.Supervisor) *Exporter {
	f := promauto.With(reg)
	e := &Exporter{
		logger:     logger,
		configFile: configFile,
		coll:       collector.New(reg),
		ids:        map[string]uint32{},
		reloadOK: f.NewGauge(prometheus.GaugeOpts{
			Name: "llm_slo_exporter_config_last_reload_successful",
			Help: "Whether the last configuration reload attempt was successful.",
		}),
		reloadSuccess: f.NewGauge(prometheus.GaugeOpts{
			Name: "llm_slo_exporter_config_last_reload_success_timestamp_seconds",
			Help: "Timestamp of the last successful configuration reload.",
		}),
		reloads: f.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_slo_exporter_config_reloads_total",
			Help: "Configuration reload attempts by result (success, failure, unchanged).",
		}, []string{"result"}),
	}
	for _, r := range []string{"success", "failure", "unchanged"} {
		e.reloads.WithLabelValues(r)
	}
	e.sup = newSupervisor(e.coll)
	return e
}

// Collector returns the exporter's collector.
func (e *Exporter) Collector() *collector.Collector { return e.coll }

// Supervisor returns the exporter's supervisor.
func (e *Exporter) Supervisor() *supervisor.Supervisor { return e.sup }

// Config returns the running configuration.
func (e *Exporter) Config() *config.Config {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.cfg
}

// identity is what must stay equal for a target to keep its series across
// a reload: its labels and its bucket layout (histograms cannot change
// buckets in place).
func identity(t *config.Target) string {
	b, _ := json.Marshal(struct {
		Name, Model, API string
		Buckets          config.Buckets
	}{t.Name, t.Model, t.API, t.Buckets})
	return string(b)
}

// Reload loads the configuration file and, if it changed and is valid,
// makes it the running one. It is the one path of SIGHUP, POST /-/reload
// and the auto-reload timer. A bad file keeps the running configuration.
func (e *Exporter) Reload() error { return e.reload(false) }

// reload is Reload; auto marks the auto-reload timer's calls, which skip a
// file already rejected (its error was logged and counted once) instead of
// failing again on every tick, and do not count unchanged files as reload
// attempts.
func (e *Exporter) reload(auto bool) error {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	fail := func(err error) error {
		e.reloadOK.Set(0)
		e.reloads.WithLabelValues("failure").Inc()
		e.logger.Error("error loading config; keeping the running configuration", "file", e.configFile, "err", err)
		return err
	}
	data, err := os.ReadFile(e.configFile)
	if err != nil {
		if auto && err.Error() == e.rejected {
			return nil
		}
		e.rejected = err.Error()
		return fail(fmt.Errorf("reading config file: %w", err))
	}
	// Compare checksums before parsing: an unchanged file costs one read.
	sum := config.Checksum(data)
	e.mu.RLock()
	unchanged := e.cfg != nil && sum == e.checksum
	e.mu.RUnlock()
	if unchanged {
		e.reloadOK.Set(1)
		e.rejected = ""
		if !auto {
			e.reloads.WithLabelValues("unchanged").Inc()
			e.logger.Debug("config unchanged; reload skipped", "file", e.configFile)
		}
		return nil
	}
	if auto && sum == e.rejected {
		return nil
	}
	cfg, err := config.Parse(data, e.configFile)
	if err != nil {
		e.rejected = sum
		return fail(err)
	}
	e.rejected = ""
	e.apply(cfg, data, sum)
	e.reloadOK.Set(1)
	e.reloadSuccess.SetToCurrentTime()
	e.reloads.WithLabelValues("success").Inc()
	e.logger.Info("loaded config", "file", e.configFile, "targets", len(cfg.Targets), "workers", cfg.Workers)
	return nil
}

func (e *Exporter) apply(cfg *config.Config, data []byte, sum string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	seed := cfg.Seed
	if seed == 0 {
		// Draw once and keep it across reloads, so that unchanged targets
		// keep their streams and restarted workers resume theirs.
		if e.seed == 0 {
			var b [8]byte
			_, _ = rand.Read(b[:])
			e.seed = binary.LittleEndian.Uint64(b[:]) | 1
		}
		seed = e.seed
	}
	ids := map[string]uint32{}
	infos := make([]collector.TargetInfo, 0, len(cfg.Targets))
	nextIDs := map[string]uint32{}
	for i := range cfg.Targets {
		t := &cfg.Targets[i]
		key := identity(t)
		id, ok := e.ids[key]
		if !ok {
			e.nextID++
			id = e.nextID
		}
		nextIDs[key] = id
		ids[t.Name] = id
		infos = append(infos, collector.TargetInfo{ID: id, Name: t.Name, Model: t.Model, API: t.API, Rate: t.Rate, Buckets: t.Buckets})
	}
	e.ids = nextIDs
	e.coll.SetTargets(infos)
	e.sup.Apply(data, e.configFile, cfg.Workers, seed, ids)
	e.cfg, e.checksum = cfg, sum
}

// Ready reports whether every planned worker process is running.
func (e *Exporter) Ready() bool {
	cfg := e.Config()
	return cfg != nil && len(e.sup.PIDs()) >= cfg.Workers
}

// autoReload calls Reload every interval until stop is closed.
func (e *Exporter) autoReload(interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			_ = e.reload(true) // failures are logged and counted by reload

		}
	}
}
