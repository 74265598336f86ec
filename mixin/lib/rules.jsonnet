// Renders prometheus_rules.yaml: jsonnet -S lib/rules.jsonnet
std.manifestYamlDoc((import '../mixin.libsonnet').prometheusRules, quote_keys=false)
