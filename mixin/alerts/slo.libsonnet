// Multi-window, multi-burn-rate alerts for every SLO: one alert rule per
// window pair. They are suppressed while the prober of the same instance
// is saturated or lagging, because its latencies then include its own
// queueing delay and some of its failures are its own.
local sloLib = import '../lib/slo.libsonnet';
local utils = import '../lib/utils.libsonnet';

{
  prometheusAlerts+:: {
    local cfg = $._config,
    local slo = sloLib.new(cfg),
    local level = utils.level(cfg.proberLabels),
    assert slo.check,

    // suppression is the `unless` clause of the SLO alerts: the
    // prober of the same instance is saturated or lagging, by the same
    // definitions as LLMProberSaturated and LLMProberScheduleLagHigh but
    // without their `for:`, so that it acts at once.
    local suppression =
      |||
        unless on (%(by)s)
        (
          %(level)s:llm_prober_utilization:max_over_time%(lookback)s > %(rho)s
          or on (%(by)s)
          %(level)s:llm_probe_schedule_lag_seconds:quantile_rate%(lagWindow)s{quantile="%(q)s"} > %(lag)s
        )
      ||| % {
        by: utils.by(cfg.proberLabels),
        level: level,
        lookback: cfg.proberSaturationLookback,
        rho: utils.num(cfg.proberSaturationThreshold),
        lagWindow: cfg.proberScheduleLagWindow,
        q: utils.num(cfg.proberScheduleLagQuantile),
        lag: cfg.proberScheduleLagThreshold,
      },

    // what describes a bad probe of an SLO for the description.
    local what(s) =
      if slo.isLatency(s) then 'had a %s above %s or failed' % [std.asciiLower(s.title), utils.seconds(s.threshold)]
      else 'failed',

    groups+: [
      local variants = slo.variants(k, slo.alertKey);
      {
        name: 'llm-slo-%s.alerts' % k,
        rules: [
          local s = v.slo;
          local sel = utils.selector([
            'slo="%s"' % k,
            if slo.isLatency(s) then 'slo_threshold="%s"' % s.threshold else '',
            v.matcher,
          ]);
          local budget = '(%s * (1 - %s))' % [utils.num(w.factor), utils.num(s.objective)];
          {
            alert: 'LLMProbe%sBudgetBurn' % s.name,
            expr:
              |||
                (
                  llm_slo:sli_error:ratio_rate%(long)s{%(sel)s} > %(budget)s
                  and
                  llm_slo:sli_error:ratio_rate%(short)s{%(sel)s} > %(budget)s
                )
              ||| % { long: w.long, short: w.short, sel: sel, budget: budget }
              + (if std.member(cfg.suppressWhenProberUnhealthy, k) then suppression else ''),
            'for': w['for'],
            labels: {
              severity: w.severity,
              slo: k,
              slo_objective: utils.num(s.objective),
              long: w.long,
              short: w.short,
            },
            annotations: {
              summary: 'An LLM endpoint is burning the error budget of its %s SLO too fast.' % s.sloName,
              description:
                '{{ $labels.target }} ({{ $labels.model }}) probed by {{ $labels.instance }}: {{ $value | humanizePercentage }} of the probes %s over the last %s (and over the last %s), %s times the rate the SLO of %s allows.'
                % [what(s), w.long, w.short, utils.num(w.factor), utils.percent(s.objective)],
            },
          }
          for v in variants
          for w in cfg.windows
        ],
      }
      for k in slo.keys
    ],
  },
}
