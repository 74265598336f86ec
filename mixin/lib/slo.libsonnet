// SLO helpers: the SLOs in force per target, their SLI expressions, and
// the checks that keep the configuration honest.
local utils = import 'utils.libsonnet';

{
  // new returns the SLO helpers for a mixin configuration.
  new(config):: {
    local cfg = config,
    local sloKeys = std.objectFields(cfg.slos),

    // isLatency tells whether an SLO is a latency SLO (it has a histogram).
    isLatency(slo):: std.objectHas(slo, 'histogram'),

    // keys are the SLO keys, sorted.
    keys:: sloKeys,

    // overrides lists, for SLO key k, every target with a per-target
    // override of it and the SLO in force for that target.
    overrides(k):: [
      { target: t, slo: cfg.slos[k] + cfg.sloTargetOverrides[t][k] }
      for t in std.objectFields(cfg.sloTargetOverrides)
      if std.objectHas(cfg.sloTargetOverrides[t], k)
    ],

    // variants splits the targets of SLO key k into disjoint sets that
    // share keyFn(slo): the defaults (every target that is not overridden
    // to a different key) and one set per distinct overridden key. Each
    // variant has the SLO in force and a `target` matcher ('' when the
    // defaults apply to every target).
    variants(k, keyFn)::
      local d = cfg.slos[k];
      local differing = [o for o in self.overrides(k) if keyFn(o.slo) != keyFn(d)];
      local names(os) = std.join('|', [utils.escapeRegex(o.target) for o in os]);
      [{
        slo: d,
        matcher: if differing == [] then '' else 'target!~"%s"' % names(differing),
      }] + [
        local members = [o for o in differing if keyFn(o.slo) == key];
        { slo: members[0].slo, matcher: 'target=~"%s"' % names(members) }
        for key in std.set([keyFn(o.slo) for o in differing])
      ],

    // ruleKey and alertKey decide which targets can share recording rules
    // (same threshold) and alerts (same threshold and objective).
    ruleKey(slo):: if self.isLatency(slo) then slo.threshold else '',
    alertKey(slo):: self.ruleKey(slo) + '/' + utils.num(slo.objective),

    // ruleLabels are the static labels of the SLI recording rules of an SLO.
    ruleLabels(k, slo)::
      { slo: k } + (if self.isLatency(slo) then { slo_threshold: slo.threshold } else {}),

    local by = utils.by(cfg.sliLabels),

    // rates returns the PromQL of the bad and total probe rates of SLO
    // slo over window w, restricted by the extra matcher.
    rates(slo, w, matcher)::
      local sel = utils.selector([cfg.exporterSelector, matcher]);
      local failures = 'sum by (%s) (rate(llm_probe_failures_total{%s}[%s]))' % [by, sel, w];
      if self.isLatency(slo) then
        local count = 'sum by (%s) (rate(%s_count{%s}[%s]))' % [by, slo.histogram, sel, w];
        local good = 'sum by (%s) (rate(%s_bucket{%s}[%s]))' % [by, slo.histogram, utils.selector([sel, 'le=~"%s"' % utils.leRegex(slo.threshold)]), w];
        {
          bad: '(\n  %s\n  -\n  %s\n)\n+\n%s' % [count, good, failures],
          total:
            if slo.total == 'requests' then 'sum by (%s) (rate(llm_probe_requests_total{%s}[%s]))' % [by, sel, w]
            else '%s\n+\n%s' % [count, failures],
        }
      else {
        bad: failures,
        total: 'sum by (%s) (rate(llm_probe_requests_total{%s}[%s]))' % [by, sel, w],
      },

    // ratio returns the PromQL of the SLI error ratio over window w.
    ratio(slo, w, matcher)::
      local r = self.rates(slo, w, matcher);
      '(\n%s\n)\n/\n(\n%s\n)\n' % [indent(r.bad), indent(r.total)],

    local indent(s) = std.join('\n', ['  ' + l for l in std.split(s, '\n')]),

    // The SLI windows: every short and long window of the burn-rate
    // alerts, and the base window of the period rules.
    windows:: utils.sortDurations([w.short for w in cfg.windows] + [w.long for w in cfg.windows] + [cfg.sliBaseWindow]),


    // Checks, evaluated when the mixin is rendered. A failed assert stops
    // the rendering with its message.
    check:: std.all([
      assert std.all([std.member(cfg.sliLabels, l) for l in cfg.proberLabels]) : 'sliLabels must include every label of proberLabels';
      true,
      assert std.all([std.member(['warning', 'critical', 'info'], w.severity) for w in cfg.windows]) : 'window severities must be warning, critical or info';
      true,
      assert std.all([std.member(sloKeys, k) for k in cfg.suppressWhenProberUnhealthy]) : 'suppressWhenProberUnhealthy: unknown SLO in %s' % std.join(', ', cfg.suppressWhenProberUnhealthy);
      true,
      assert utils.isEdge(cfg.proberScheduleLagThreshold, cfg.bucketEdges.lag) : 'proberScheduleLagThreshold %s is not a schedule lag bucket edge' % cfg.proberScheduleLagThreshold;
      true,
    ] + [
      local s = o.slo;
      assert std.objectHas(s, 'objective') && s.objective > 0 && s.objective < 1 : 'SLO %s: objective must be in (0, 1)' % o.name;
      assert !self.isLatency(s) || std.objectHas(cfg.bucketEdges, s.family) : 'SLO %s: unknown bucket family %s' % [o.name, s.family];
      assert !self.isLatency(s) || utils.isEdge(s.threshold, cfg.bucketEdges[s.family]) :
             'SLO %s: threshold %s is not a bucket edge of the %s histogram; choose one of %s' % [o.name, s.threshold, s.family, std.join(', ', cfg.bucketEdges[s.family])];
      assert !self.isLatency(s) || std.member(['requests', 'histogram'], s.total) : 'SLO %s: total must be requests or histogram' % o.name;
      true
      for o in
        [{ name: k, slo: cfg.slos[k] } for k in sloKeys] +
        std.flattenArrays([
          [{ name: k + ' of target ' + v.target, slo: v.slo } for v in self.overrides(k)]
          for k in sloKeys
        ])
    ] + [
      assert std.member(sloKeys, k) : 'sloTargetOverrides of %s: unknown SLO %s' % [t, k];
      assert std.all([std.member(['threshold', 'objective'], f) for f in std.objectFields(cfg.sloTargetOverrides[t][k])]) :
             'sloTargetOverrides of %s, SLO %s: only threshold and objective can be overridden' % [t, k];
      true
      for t in std.objectFields(cfg.sloTargetOverrides)
      for k in std.objectFields(cfg.sloTargetOverrides[t])
    ]),
  },
}
