// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package app

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/http/pprof"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/llmslo/llm_slo_exporter/collector"
)

// HandlerOptions configure the exporter's HTTP endpoints.
type HandlerOptions struct {
	// MetricsPath is where metrics are served (--web.telemetry-path).
	MetricsPath string
	// Gatherer gathers everything /metrics shows.
	Gatherer prometheus.Gatherer
	// MaxRequests limits parallel scrapes (--web.max-requests).
	MaxRequests int
}

// Handler returns the exporter's HTTP endpoints: the landing page,
// metrics, health, readiness, reload, the redacted configuration and the
// recent probes.
func (e *Exporter) Handler(o HandlerOptions) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.Handle(o.MetricsPath, promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{
		// OpenMetrics carries the request_id exemplars.
		EnableOpenMetrics:   true,
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: o.MaxRequests,
		ErrorLog:            slogPrinter{e},
	}))
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
		fmt.Fprintln(w, "Healthy")
	})
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, _ *http.Request) {
		if !e.Ready() {
			http.Error(w, "Not ready: workers are starting", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "Ready")
	})
	mux.HandleFunc("/-/reload", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "This endpoint requires a POST request.", http.StatusMethodNotAllowed)
			return
		}
		if err := e.Reload(); err != nil {
			http.Error(w, fmt.Sprintf("failed to reload config: %s", err), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "Reloaded")
	})
	mux.HandleFunc("/config", func(w http.ResponseWriter, _ *http.Request) {
		cfg := e.Config()
		if cfg == nil {
			http.Error(w, "no configuration loaded", http.StatusServiceUnavailable)
			return
		}
		out, err := cfg.Redacted()
		if err != nil {
			http.Error(w, fmt.Sprintf("error marshaling configuration: %s", err), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(out)
	})
	mux.HandleFunc("/probes", e.probesHandler)
	// The supervisor's profiles, as Prometheus servers expose them.
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	if o.MetricsPath != "/" {
		landing, err := web.NewLandingPage(web.LandingConfig{
			Name:        "LLM SLO Exporter",
			Description: "Open-loop Poisson prober of streaming LLM endpoints: TTFT, TPOT, ITL, E2E and NTPOT histograms, with the prober's own utilization beside them.",
			Version:     version.Info(),
			Links: []web.LandingLinks{
				{Address: o.MetricsPath, Text: "Metrics"},
				{Address: "/probes", Text: "Recent probes"},
				{Address: "/config", Text: "Configuration (secrets redacted)"},
				{Address: "/-/healthy", Text: "Health"},
				{Address: "/-/ready", Text: "Readiness"},
			},
		})
		if err != nil {
			return nil, fmt.Errorf("landing page: %w", err)
		}
		mux.Handle("/", landing)
	}
	return mux, nil
}

type slogPrinter struct{ e *Exporter }

func (p slogPrinter) Println(v ...any) { p.e.logger.Error(fmt.Sprint(v...)) }

var probesTemplate = template.Must(template.New("probes").Funcs(template.FuncMap{
	"ms": func(v *float64) string {
		if v == nil {
			return ""
		}
		return fmt.Sprintf("%.2f", *v*1000)
	},
	"lag": func(v float64) string { return fmt.Sprintf("%.3f", v*1000) },
}).Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Recent probes - LLM SLO Exporter</title>
<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse;margin-bottom:2em}td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px;text-align:right}td.l,th.l{text-align:left}tr.failure{background:#fdd}tr.dropped{background:#eee}</style>
</head><body><h1>Recent probes</h1><p>Newest first; <a href="?format=json">JSON</a>. Times in milliseconds.</p>
{{range .}}<h2>{{.Target}} <small>({{.Model}}, {{.API}})</small></h2>
<table><tr><th class="l">scheduled (UTC)</th><th class="l">request id</th><th>worker</th><th class="l">outcome</th><th class="l">reason</th><th>status</th><th>schedule lag</th><th>TTFT</th><th>TPOT</th><th>NTPOT</th><th>E2E</th><th>tokens</th><th class="l">detail</th></tr>
{{range .Probes}}<tr class="{{.Outcome}}"><td class="l">{{.Time.Format "15:04:05.000"}}</td><td class="l">{{.RequestID}}</td><td>{{.Worker}}</td><td class="l">{{.Outcome}}</td><td class="l">{{.Reason}}</td><td>{{if .HTTPStatus}}{{.HTTPStatus}}{{end}}</td><td>{{lag .ScheduleLag}}</td><td>{{ms .TTFT}}</td><td>{{ms .TPOT}}</td><td>{{ms .NTPOT}}</td><td>{{ms .E2E}}</td><td>{{if .OutputTokens}}{{.OutputTokens}}{{if .Estimated}}~{{end}}{{end}}</td><td class="l">{{.Detail}}</td></tr>
{{end}}</table>{{else}}<p>No targets configured.</p>{{end}}
</body></html>`))

func (e *Exporter) probesHandler(w http.ResponseWriter, r *http.Request) {
	recent := e.coll.Recent()
	if r.URL.Query().Get("format") == "json" {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(struct {
			Targets []collector.TargetProbes `json:"targets"`
		}{recent})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := probesTemplate.Execute(w, recent); err != nil {
		e.logger.Error("rendering /probes", "err", err)
	}
}
