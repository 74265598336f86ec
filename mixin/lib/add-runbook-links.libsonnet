// Adds a runbook_url annotation to every alert that has none, from
// _config.runbookURLPattern and the lowercased alert name (the anchor of
// the alert's section in runbook.md).
local utils = import 'utils.libsonnet';

{
  local addRunbookURL(rule) = rule {
    [if std.objectHas(rule, 'alert') && !std.objectHas(rule.annotations, 'runbook_url') then 'annotations']+: {
      runbook_url: $._config.runbookURLPattern % std.asciiLower(rule.alert),
    },
  },

  prometheusAlerts+:: utils.mapRuleGroups(addRunbookURL),
}
