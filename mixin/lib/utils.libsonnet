// Small helpers shared by the rules, alerts and dashboards.
{
  // mapRuleGroups applies f to every rule of every group of a
  // prometheusAlerts or prometheusRules object.
  mapRuleGroups(f): {
    groups: [
      group { rules: [f(rule) for rule in super.rules] }
      for group in super.groups
    ],
  },

  // selector joins label matchers into the inside of a PromQL selector,
  // skipping empty ones: selector(['job="a"', '', 'le="1"']) is
  // 'job="a", le="1"'.
  selector(matchers): std.join(', ', [m for m in matchers if m != '']),

  // by renders a list of labels for a `by (...)` or `on (...)` clause.
  by(labels): std.join(', ', labels),

  // level renders a list of labels as the level of a recording rule name
  // (prometheus/docs practices/rules.md): ['job', 'instance'] is
  // 'job_instance'.
  level(labels): std.join('_', labels),

  // escapeRegex escapes a literal for a PromQL regex matcher inside a
  // double-quoted PromQL string: a dot becomes \\. in the PromQL text.
  escapeRegex(s):
    std.join('', [
      if std.member('.+*?()|[]{}^$\\', c) then '\\\\' + c
      else if c == '"' then '\\"'
      else c
      for c in std.stringChars(s)
    ]),

  // leRegex is the regex of the `le` label of a classic bucket edge given
  // as a decimal string. The exporter writes whole numbers without a
  // fraction ("1"), and Prometheus 3 normalises them to "1.0" on
  // ingestion, so a whole number matches both; other edges ("0.5") are
  // written the same way by both.
  leRegex(edge):
    local isWhole = std.length(std.findSubstr('.', edge)) == 0 && std.length(std.findSubstr('e', edge)) == 0;
    $.escapeRegex(edge) + (if isWhole then '(\\\\.0)?' else ''),

  // isEdge tells whether the decimal string edge is one of the decimal
  // strings of edges, compared as numbers.
  isEdge(edge, edges): std.length([e for e in edges if std.parseJson(e) == std.parseJson(edge)]) > 0,

  // num renders a number with the fewest decimals that read back as the
  // same number (go-jsonnet prints 0.95 as 0.94999999999999996).
  num(x):
    local candidates = [('%.' + k + 'f') % x for k in std.range(0, 12)];
    local exact = [c for c in candidates if std.parseJson(c) == x];
    if std.length(exact) > 0 then exact[0] else std.toString(x),

  // durationSeconds parses a Prometheus duration of one unit ('5m', '1h',
  // '3d') into seconds.
  durationSeconds(d):
    local units = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 };
    local unit = if std.endsWith(d, 'ms') then 'ms' else d[std.length(d) - 1];
    std.parseJson(d[0:std.length(d) - std.length(unit)]) * units[unit],

  // sortDurations sorts and deduplicates Prometheus durations by length.
  sortDurations(ds): std.set(ds, $.durationSeconds),

  // percent renders a ratio as a percentage for humans: 0.95 is '95%'.
  percent(r): $.num(std.round(r * 100000) / 1000) + '%',

  // seconds renders a decimal string of seconds for humans: '0.5' is '500ms'.
  seconds(s):
    local v = std.parseJson(s);
    if v < 1 then $.num(std.round(v * 1000000) / 1000) + 'ms' else s + 's',
}
