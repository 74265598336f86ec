// SLI recording rules: for every SLO, the error ratio over every window of
// the burn-rate alerts, the base rates that the period rules sum up, the
// error ratio over the SLO period, the objective and the error budget
// remaining.
local sloLib = import '../lib/slo.libsonnet';
local utils = import '../lib/utils.libsonnet';

{
  prometheusRules+:: {
    local cfg = $._config,
    local slo = sloLib.new(cfg),
    assert slo.check,

    groups+: std.flattenArrays([
      local variants = slo.variants(k, slo.ruleKey);
      [
        {
          name: 'llm-slo-%s%s.rules' % [k, if i == 0 then '' else '-' + i],
          local v = variants[i],
          local labels = slo.ruleLabels(k, v.slo),
          local recorded = utils.selector([
            'slo="%s"' % k,
            if slo.isLatency(v.slo) then 'slo_threshold="%s"' % v.slo.threshold else '',
            v.matcher,
          ]),
          local base = slo.rates(v.slo, cfg.sliBaseWindow, v.matcher),
          rules: [
            {
              record: 'llm_slo:sli_bad:rate%s' % cfg.sliBaseWindow,
              expr: base.bad + '\n',
              labels: labels,
            },
            {
              record: 'llm_slo:sli_total:rate%s' % cfg.sliBaseWindow,
              expr: base.total + '\n',
              labels: labels,
            },
          ] + [
            {
              record: 'llm_slo:sli_error:ratio_rate%s' % w,
              expr:
                if w == cfg.sliBaseWindow then
                  'llm_slo:sli_bad:rate%(w)s{%(sel)s}\n/\nllm_slo:sli_total:rate%(w)s{%(sel)s}\n' % { w: w, sel: recorded }
                else slo.ratio(v.slo, w, v.matcher),
              labels: labels,
            }
            for w in slo.windows
          ] + [
            {
              record: 'llm_slo:period_error:ratio',
              expr: |||
                sum_over_time(llm_slo:sli_bad:rate%(w)s{%(sel)s}[%(period)s])
                /
                sum_over_time(llm_slo:sli_total:rate%(w)s{%(sel)s}[%(period)s])
              ||| % { w: cfg.sliBaseWindow, sel: recorded, period: cfg.sloPeriod },
              labels: labels,
            },
          ],
        }
        for i in std.range(0, std.length(variants) - 1)
      ] + [
        // The objective and the budget depend on the objective too, so they
        // are split by the alert variants.
        {
          name: 'llm-slo-%s-budget%s.rules' % [k, if i == 0 then '' else '-' + i],
          local v = objectiveVariants[i],
          local recorded = utils.selector([
            'slo="%s"' % k,
            if slo.isLatency(v.slo) then 'slo_threshold="%s"' % v.slo.threshold else '',
            v.matcher,
          ]),
          local labels = { slo: k, slo_objective: utils.num(v.slo.objective) },
          rules: [
            {
              record: 'llm_slo:objective:ratio',
              expr: 'clamp(llm_slo:sli_total:rate%s{%s}, %s, %s)\n' % [cfg.sliBaseWindow, recorded, utils.num(v.slo.objective), utils.num(v.slo.objective)],
              labels: labels,
            },
            {
              record: 'llm_slo:period_error_budget_remaining:ratio',
              expr: '1 - llm_slo:period_error:ratio{%s} / (1 - %s)\n' % [recorded, utils.num(v.slo.objective)],
              labels: labels,
            },
          ],
        }
        for i in std.range(0, std.length(objectiveVariants) - 1)
      ]
      for k in slo.keys
      for objectiveVariants in [slo.variants(k, slo.alertKey)]
    ]),
  },
}
