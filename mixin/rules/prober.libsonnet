// Prober health recording rules: the worst worker utilization and the
// schedule lag quantile per exporter, which the SLO alerts use to
// suppress themselves while the prober cannot be trusted.
local utils = import '../lib/utils.libsonnet';

{
  prometheusRules+:: {
    local cfg = $._config,
    local level = utils.level(cfg.proberLabels),
    local by = utils.by(cfg.proberLabels),

    groups+: [
      {
        name: 'llm-prober.rules',
        rules: [
          {
            record: '%s:llm_prober_utilization:max_over_time%s' % [level, cfg.proberSaturationLookback],
            expr: 'max by (%s) (max_over_time(llm_prober_utilization{%s}[%s]))\n' % [by, cfg.exporterSelector, cfg.proberSaturationLookback],
          },
          {
            record: '%s:llm_probe_schedule_lag_seconds:quantile_rate%s' % [level, cfg.proberScheduleLagWindow],
            expr: 'histogram_quantile(%s, sum by (%s, le) (rate(llm_probe_schedule_lag_seconds_bucket{%s}[%s])))\n' % [utils.num(cfg.proberScheduleLagQuantile), by, cfg.exporterSelector, cfg.proberScheduleLagWindow],
            labels: { quantile: utils.num(cfg.proberScheduleLagQuantile) },
          },
        ],
      },
    ],
  },
}
