(import 'slo.libsonnet') + (import 'prober.libsonnet')
