// Renders prometheus_alerts.yaml: jsonnet -S lib/alerts.jsonnet
std.manifestYamlDoc((import '../mixin.libsonnet').prometheusAlerts, quote_keys=false)
