// The llm_slo_exporter monitoring mixin: SLO recording rules,
// multi-window multi-burn-rate alerts, prober health alerts and
// dashboards. See README.md.
(import 'config.libsonnet') +
(import 'rules/rules.libsonnet') +
(import 'alerts/alerts.libsonnet') +
(import 'lib/add-runbook-links.libsonnet') +
(import 'dashboards/dashboards.libsonnet')
