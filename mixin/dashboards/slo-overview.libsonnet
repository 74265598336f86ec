// The SLO overview: per target, SLO attainment, error budget remaining,
// burn rates, latency quantiles and heatmaps, errors by reason, and the
// achieved probe rate against the configured one.
local d = import '../lib/dashboard.libsonnet';
local sloLib = import '../lib/slo.libsonnet';
local utils = import '../lib/utils.libsonnet';

{
  grafanaDashboards+:: {
    local cfg = $._config,
    local slo = sloLib.new(cfg),
    local sel = 'job=~"$job", instance=~"$instance", target=~"$target", model=~"$model"',
    local by = 'target, model',
    local legend = '{{target}} ({{model}})',

    local quantiles(title, histogram, unit='s') = d.timeseries(
      title + ' quantiles',
      'The 50th, 90th, 95th and 99th percentiles of %s per target, interpolated from the classic buckets. SLOs are computed from exact bucket ratios, not from these quantiles.' % std.asciiLower(title),
      [
        d.target('histogram_quantile(%s, sum by (%s, le) (rate(%s_bucket{%s}[$__rate_interval])))' % [q, by, histogram, sel], 'p%s %s' % [std.toString(q * 100), legend])
        for q in [0.5, 0.9, 0.95, 0.99]
      ],
      unit=unit,
      min=0,
    ),

    local heatmap(title, histogram) = d.heatmap(
      title + ' distribution',
      'The distribution of %s over all selected targets, from the classic buckets.' % std.asciiLower(title),
      'sum by (le) (rate(%s_bucket{%s}[$__rate_interval]))' % [histogram, sel],
    ),

    local latencyRow(title, histogram) = d.row(title, [quantiles(title, histogram), heatmap(title, histogram)]),

    local sloSel = 'job=~"$job", instance=~"$instance", target=~"$target", model=~"$model"',

    'llm-slo-overview.json': d.dashboard(
      'llm-slo-overview.json',
      'SLO overview',
      'Service level objectives of the LLM endpoints probed by llm_slo_exporter: attainment, error budget, burn rates, latencies and errors per target.',
      [
        d.datasourceVariable,
        d.queryVariable('job', '%s{%s}' % [cfg.dashboardJobMetric, cfg.exporterSelector]),
        d.queryVariable('instance', '%s{job=~"$job"}' % cfg.dashboardJobMetric),
        d.queryVariable('target', '%s{job=~"$job", instance=~"$instance"}' % cfg.dashboardJobMetric),
        d.queryVariable('model', '%s{job=~"$job", instance=~"$instance", target=~"$target"}' % cfg.dashboardJobMetric),
      ],
      [
        d.row('Service level objectives', [
          d.bargauge(
            'SLO attainment over %s' % cfg.sloPeriod,
            'The share of good probes over the SLO period, per target and SLO. A latency SLO counts a probe as good when it succeeded and its latency was at most the threshold; the error SLO when it succeeded.',
            [d.target('1 - llm_slo:period_error:ratio{%s}' % sloSel, '{{target}} {{slo}}', instant=true)],
            min=0.9,
            max=1,
            thresholds=[],
            width=8,
          ),
          d.bargauge(
            'Error budget remaining over %s' % cfg.sloPeriod,
            'The share of the error budget (1 - objective) not yet spent over the SLO period. Below 0 the SLO is missed.',
            [d.target('llm_slo:period_error_budget_remaining:ratio{%s}' % sloSel, '{{target}} {{slo}}', instant=true)],
            min=-1,
            max=1,
            thresholds=[{ color: 'red', value: -1000 }, { color: 'orange', value: 0 }, { color: 'green', value: 0.25 }],
            width=8,
          ),
          d.timeseries(
            'Burn rate over %s' % cfg.windows[0].long,
            'How fast each SLO spends its error budget: the error ratio over the last %s divided by the budget (1 - objective). 1 spends it exactly over the SLO period; the fastest page fires above %s (and the same over %s).' % [cfg.windows[0].long, cfg.windows[0].factor, cfg.windows[0].short],
            [d.target('llm_slo:sli_error:ratio_rate%(w)s{%(s)s} / on (%(by)s, slo) (1 - llm_slo:objective:ratio{%(s)s})' % { w: cfg.windows[0].long, s: sloSel, by: utils.by(cfg.sliLabels) }, '{{target}} {{slo}}')],
            unit='none',
            min=0,
            thresholds=[{ color: 'red', value: cfg.windows[0].factor }],
            width=8,
          ),
          d.timeseries(
            'SLI error ratio over %s' % cfg.sliBaseWindow,
            'The share of bad probes of each SLO over the last %s.' % cfg.sliBaseWindow,
            [d.target('llm_slo:sli_error:ratio_rate%s{%s}' % [cfg.sliBaseWindow, sloSel], '{{target}} {{slo}}')],
            unit='percentunit',
            min=0,
          ),
          d.timeseries(
            'Prober utilization (worst worker)',
            'The highest ρ among the workers of each exporter. Above %s the prober is saturated: its latencies include its own queueing delay, and the SLO alerts of that exporter are suppressed. See the prober health dashboard.' % cfg.proberSaturationThreshold,
            [d.target('max by (job, instance) (llm_prober_utilization{job=~"$job", instance=~"$instance"})', '{{instance}}')],
            unit='percentunit',
            min=0,
            thresholds=[{ color: 'red', value: cfg.proberSaturationThreshold }],
          ),
        ]),
        latencyRow('Time to first token (TTFT)', 'llm_probe_time_to_first_token_seconds'),
        latencyRow('Time per output token (TPOT)', 'llm_probe_time_per_output_token_seconds'),
        latencyRow('Normalized time per output token (NTPOT)', 'llm_probe_normalized_time_per_output_token_seconds'),
        latencyRow('End-to-end duration (E2E)', 'llm_probe_request_duration_seconds'),
        d.row('Errors and rate', [
          d.timeseries(
            'Failures by reason',
            'Failed probes per second, by target and reason (docs/metrics.md lists the reasons).',
            [d.target('sum by (%s, reason) (rate(llm_probe_failures_total{%s}[$__rate_interval])) > 0' % [by, sel], '{{target}} {{reason}}')],
            unit='reqps',
            min=0,
            stack=true,
          ),
          d.timeseries(
            'Error ratio',
            'Failed probes over finished probes.',
            [d.target('sum by (%(by)s) (rate(llm_probe_failures_total{%(sel)s}[$__rate_interval])) / sum by (%(by)s) (rate(llm_probe_requests_total{%(sel)s}[$__rate_interval]))' % { by: by, sel: sel }, legend)],
            unit='percentunit',
            min=0,
          ),
          d.timeseries(
            'Achieved vs configured probe rate',
            'Poisson arrivals and finished probes per second against the configured rate. Arrivals below the configured rate over a long window, or finished probes below arrivals, point at the prober (drops, in-flight cap).',
            [
              d.target('sum by (%s) (rate(llm_probe_arrivals_total{%s}[$__rate_interval]))' % [by, sel], 'arrivals ' + legend),
              d.target('sum by (%s) (rate(llm_probe_requests_total{%s}[$__rate_interval]))' % [by, sel], 'finished ' + legend),
              d.target('sum by (%s) (llm_probe_configured_rate{%s})' % [by, sel], 'configured ' + legend),
            ],
            unit='reqps',
            min=0,
          ),
          d.timeseries(
            'Dropped arrivals by reason',
            'Arrivals that produced no probe, per second: the in-flight cap was full, the worker was lost, or the target was removed.',
            [d.target('sum by (%s, reason) (rate(llm_probe_dropped_total{%s}[$__rate_interval])) > 0' % [by, sel], '{{target}} {{reason}}')],
            unit='reqps',
            min=0,
          ),
        ]),
      ],
      cfg,
    ),
  },
}
