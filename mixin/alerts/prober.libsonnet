// Alerts on the prober itself: a prober that is saturated, lagging,
// restarting, silent, misconfigured or down cannot be trusted to page.
local utils = import '../lib/utils.libsonnet';

{
  prometheusAlerts+:: {
    local cfg = $._config,
    local level = utils.level(cfg.proberLabels),
    local sliBy = utils.by(cfg.sliLabels),

    groups+: [
      {
        name: 'llm-prober.alerts',
        rules: [
          {
            alert: 'LLMProberSaturated',
            expr: 'llm_prober_utilization{%s} > %s\n' % [cfg.exporterSelector, utils.num(cfg.proberSaturationThreshold)],
            'for': cfg.proberSaturationFor,
            labels: { severity: cfg.warningSeverity },
            annotations: {
              summary: 'The prober is saturated: its latencies include its own queueing delay.',
              description: 'Worker {{ $labels.worker }} of {{ $labels.instance }} has a utilization (ρ) of {{ $value | humanizePercentage }}, above %s. The SLO alerts of this instance are suppressed while it lasts.' % utils.percent(cfg.proberSaturationThreshold),
            },
          },
          {
            alert: 'LLMProberScheduleLagHigh',
            expr: '%s:llm_probe_schedule_lag_seconds:quantile_rate%s{quantile="%s"} > %s\n' % [level, cfg.proberScheduleLagWindow, utils.num(cfg.proberScheduleLagQuantile), cfg.proberScheduleLagThreshold],
            'for': cfg.proberScheduleLagFor,
            labels: { severity: cfg.warningSeverity },
            annotations: {
              summary: 'The prober sends its probes late.',
              description: 'The %s quantile of the schedule lag of {{ $labels.instance }} over the last %s is {{ $value | humanizeDuration }}, above %s. The SLO alerts of this instance are suppressed while it lasts.' % [utils.num(cfg.proberScheduleLagQuantile), cfg.proberScheduleLagWindow, utils.seconds(cfg.proberScheduleLagThreshold)],
            },
          },
          {
            alert: 'LLMProberWorkerRestarting',
            // The counter of a worker appears at its first restart, so a
            // series that is new in the window counts with its value; `or`
            // matches without the metric name, so that branch comes first.
            expr: |||
              (
                (llm_prober_worker_restarts_total{%(sel)s} unless llm_prober_worker_restarts_total{%(sel)s} offset %(w)s)
                or
                increase(llm_prober_worker_restarts_total{%(sel)s}[%(w)s])
              ) > %(n)s
            ||| % { sel: cfg.exporterSelector, w: cfg.proberWorkerRestartsWindow, n: utils.num(cfg.proberWorkerRestartsThreshold) },
            labels: { severity: cfg.warningSeverity },
            annotations: {
              summary: 'A prober worker process is restarting.',
              description: 'Worker {{ $labels.worker }} of {{ $labels.instance }} exited and was restarted; restarts in the last %s: {{ $value | humanize }}. Its in-flight probes were dropped.' % cfg.proberWorkerRestartsWindow,
            },
          },
          {
            alert: 'LLMProbeTargetSilent',
            expr: |||
              sum by (%(by)s) (increase(llm_probe_requests_total{%(sel)s}[%(w)s])) == 0
              and on (%(by)s)
              sum by (%(by)s) (llm_probe_configured_rate{%(sel)s}) > 0
            ||| % { by: sliBy, sel: cfg.exporterSelector, w: cfg.proberTargetSilentWindow },
            'for': cfg.proberTargetSilentFor,
            labels: { severity: cfg.warningSeverity },
            annotations: {
              summary: 'A probed target completes no probes.',
              description: 'No probe of {{ $labels.target }} ({{ $labels.model }}) finished on {{ $labels.instance }} in the last %s although probes are configured; its SLOs are not measured.' % cfg.proberTargetSilentWindow,
            },
          },
          {
            alert: 'LLMProberConfigReloadFailed',
            expr: 'max_over_time(llm_slo_exporter_config_last_reload_successful{%s}[5m]) == 0\n' % cfg.exporterSelector,
            'for': cfg.proberConfigReloadFor,
            labels: { severity: cfg.warningSeverity },
            annotations: {
              summary: 'The prober failed to reload its configuration.',
              description: 'The last configuration reload of {{ $labels.instance }} failed; it keeps probing with the previous configuration.',
            },
          },
          {
            alert: 'LLMProberDown',
            expr: 'up{%s} == 0\n' % cfg.exporterSelector,
            'for': cfg.proberDownFor,
            labels: { severity: cfg.criticalSeverity },
            annotations: {
              summary: 'The prober cannot be scraped: its SLOs are not monitored.',
              description: 'Prometheus has failed to scrape {{ $labels.instance }} of job {{ $labels.job }} for %s; no SLO alert can fire for its targets.' % cfg.proberDownFor,
            },
          },
        ],
      },
    ],
  },
}
