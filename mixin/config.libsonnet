// Configuration of the llm_slo_exporter mixin. Override any knob with a
// `_config+::` merge, for example:
//
//   (import 'mixin.libsonnet') + {
//     _config+:: {
//       exporterSelector: 'job="llm-prober"',
//       slos+: { ttft+: { threshold: '1', objective: 0.99 } },
//     },
//   }
//
// Metric names, labels and bucket edges are those of docs/metrics.md.
{
  _config+:: {
    // Selects the exporter's series in every rule, alert and dashboard.
    exporterSelector: 'job="llm_slo_exporter"',

    // Labels that SLI recording rules and SLO alerts keep. They must
    // include proberLabels, so that an SLO alert can be matched with the
    // health of the prober that measured it.
    sliLabels: ['job', 'instance', 'target', 'model'],

    // Labels that identify one exporter (one prober with its workers).
    proberLabels: ['job', 'instance'],

    // The SLOs. Each latency SLO says: `objective` of the probes have a
    // latency at most `threshold` seconds. `threshold` is a string and
    // must be an exact classic bucket edge of the histogram (see
    // bucketEdges), so that the SLI is an exact bucket ratio, not an
    // interpolated quantile. A failed probe has no latency and counts as
    // bad for every latency SLO. The `errors` SLO says: `objective` of the
    // probes succeed.
    //
    // `name` is the middle of the alert name (LLMProbe<name>BudgetBurn),
    // `sloName` names the SLO in the alert's summary and `title` the
    // measured quantity.
    slos: {
      ttft: {
        name: 'TTFT',
        sloName: 'TTFT',
        title: 'Time to first token',
        histogram: 'llm_probe_time_to_first_token_seconds',
        family: 'ttft',
        threshold: '0.5',
        objective: 0.95,
        // Every finished probe has a TTFT or a failure, so the total is
        // llm_probe_requests_total.
        total: 'requests',
      },
      tpot: {
        name: 'TPOT',
        sloName: 'TPOT',
        title: 'Time per output token',
        histogram: 'llm_probe_time_per_output_token_seconds',
        family: 'tpot',
        threshold: '0.1',
        objective: 0.95,
        // A success with a single output token has no TPOT, so the total
        // is the TPOT histogram's count plus the failures.
        total: 'histogram',
      },
      ntpot: {
        name: 'NTPOT',
        sloName: 'NTPOT',
        title: 'Normalized time per output token',
        histogram: 'llm_probe_normalized_time_per_output_token_seconds',
        family: 'ntpot',
        threshold: '0.15',
        objective: 0.95,
        total: 'requests',
      },
      errors: {
        name: 'Error',
        sloName: 'success rate',
        title: 'Successful probes',
        objective: 0.99,
      },
    },

    // Per-target SLOs: target name -> { slo key -> fields of that SLO to
    // override }. For example { 'big-model': { ttft: { threshold: '2.5' } } }.
    // Every overridden target gets its own rules and alerts, selected by
    // its `target` label; the defaults apply to all other targets.
    sloTargetOverrides: {},

    // Classic bucket edges of the exporter's histogram families (the
    // defaults of docs/metrics.md). If you set `buckets:` for a target in
    // the exporter's configuration, add your edges here so that your
    // thresholds pass the check.
    bucketEdges: {
      ttft: ['0.001', '0.0025', '0.005', '0.01', '0.02', '0.04', '0.05', '0.06', '0.08', '0.1', '0.15', '0.2', '0.25', '0.3', '0.4', '0.5', '0.75', '1', '1.5', '2', '2.5', '3', '5', '7.5', '10', '20', '40', '80', '160', '640', '2560'],
      tpot: ['0.001', '0.0025', '0.005', '0.0075', '0.01', '0.015', '0.02', '0.025', '0.03', '0.04', '0.05', '0.075', '0.1', '0.15', '0.2', '0.3', '0.4', '0.5', '0.75', '1', '2.5', '5', '7.5', '10', '20', '40', '80'],
      ttfa: self.ttft,
      ntpot: self.tpot,
      itl: self.tpot,
      e2e: ['0.05', '0.1', '0.2', '0.3', '0.5', '0.8', '1', '1.5', '2', '2.5', '5', '10', '15', '20', '30', '40', '50', '60', '120', '240', '480', '960', '1920', '7680'],
      lag: ['0.00005', '0.0001', '0.00025', '0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10'],
    },

    // Multi-window, multi-burn-rate alerting (Google SRE workbook, as in
    // kubernetes-mixin and Sloth), for a 30-day SLO period. An alert fires
    // when both the long and the short window burn the error budget
    // faster than `factor` times the sustainable rate. Only change these
    // windows when you really understand multi burn rate alerts.
    windows: [
      { severity: 'critical', 'for': '2m', long: '1h', short: '5m', factor: 14.4 },
      { severity: 'critical', 'for': '15m', long: '6h', short: '30m', factor: 6 },
      { severity: 'warning', 'for': '1h', long: '1d', short: '2h', factor: 3 },
      { severity: 'warning', 'for': '3h', long: '3d', short: '6h', factor: 1 },
    ],

    // The SLO period of the error-budget-remaining rules.
    sloPeriod: '30d',

    // The windows of the base SLI rates that the period rules sum up.
    sliBaseWindow: '5m',

    // Prober health.
    proberSaturationThreshold: 0.7,  // ρ of one worker
    proberSaturationFor: '2m',
    proberScheduleLagQuantile: 0.99,
    proberScheduleLagThreshold: '0.01',  // seconds; a schedule lag bucket edge
    proberScheduleLagWindow: '5m',
    proberScheduleLagFor: '5m',
    proberWorkerRestartsWindow: '15m',
    proberWorkerRestartsThreshold: 0,  // alert when more restarts than this
    proberTargetSilentWindow: '10m',
    proberTargetSilentFor: '5m',
    proberConfigReloadFor: '10m',
    proberDownFor: '5m',

    // The SLO alerts of these SLOs are suppressed while the prober of the
    // same instance is saturated (some worker's ρ above the threshold at
    // any time in the last proberSaturationLookback) or lagging (the
    // schedule lag quantile over proberScheduleLagWindow above the
    // threshold): the conditions of LLMProberSaturated and
    // LLMProberScheduleLagHigh, without their `for:`. A saturated prober
    // inflates latencies, and it also fails probes of its own doing
    // (`reset` on keep-alive connections that the server closed while the
    // prober could not run, `timeout`, `stall`), so the success SLO is
    // suppressed too. Set to [] to alert regardless and use
    // alertmanager/inhibit.yml instead.
    suppressWhenProberUnhealthy: ['ttft', 'tpot', 'ntpot', 'errors'],
    proberSaturationLookback: '5m',

    // Severities.
    criticalSeverity: 'critical',
    warningSeverity: 'warning',

    // Runbook links, one anchor per alert (lowercased alert name).
    runbookURLPattern: 'https://github.com/llmslo/llm_slo_exporter/blob/main/mixin/runbook.md#%s',

    // Dashboards.
    dashboardNamePrefix: 'LLM SLO / ',
    dashboardTags: ['llm-slo-exporter-mixin'],
    dashboardRefresh: '30s',
    dashboardTimezone: 'utc',
    dashboardPeriod: 'now-6h',
    // The job template variable selects jobs that expose this metric.
    dashboardJobMetric: 'llm_probe_requests_total',
  },
}
