(import 'slo-overview.libsonnet') + (import 'prober-health.libsonnet')
