// The prober health board: is the client fit to measure? Utilization per
// worker, predicted against measured lag, schedule lag, in-flight probes,
// drops and restarts.
local d = import '../lib/dashboard.libsonnet';

{
  grafanaDashboards+:: {
    local cfg = $._config,
    local sel = 'job=~"$job", instance=~"$instance"',
    local tsel = 'job=~"$job", instance=~"$instance", target=~"$target", model=~"$model"',
    local w = '{{instance}} worker {{worker}}',

    'llm-prober-health.json': d.dashboard(
      'llm-prober-health.json',
      'Prober health',
      'Health of the llm_slo_exporter prober itself: when a worker saturates, its latencies include its own queueing delay and the SLO alerts are suppressed.',
      [
        d.datasourceVariable,
        d.queryVariable('job', '%s{%s}' % [cfg.dashboardJobMetric, cfg.exporterSelector]),
        d.queryVariable('instance', '%s{job=~"$job"}' % cfg.dashboardJobMetric),
        d.queryVariable('target', '%s{job=~"$job", instance=~"$instance"}' % cfg.dashboardJobMetric),
        d.queryVariable('model', '%s{job=~"$job", instance=~"$instance", target=~"$target"}' % cfg.dashboardJobMetric),
      ],
      [
        d.row('Utilization', [
          d.stat(
            'Workers running',
            'Worker processes running, per exporter.',
            [d.target('sum by (instance) (llm_prober_workers{%s})' % sel, '{{instance}}')],
            width=4,
            height=8,
          ),
          d.timeseries(
            'Utilization (ρ) per worker',
            'ρ = (CPU time + run-queue wait) / wall time of each worker over 5 s. Above %s for %s the prober is saturated (LLMProberSaturated) and the SLO alerts of its instance are suppressed.' % [cfg.proberSaturationThreshold, cfg.proberSaturationFor],
            [d.target('llm_prober_utilization{%s}' % sel, w)],
            unit='percentunit',
            min=0,
            thresholds=[{ color: 'red', value: cfg.proberSaturationThreshold }],
            width=10,
          ),
          d.timeseries(
            'CPU time and run-queue wait per worker',
            'The two parts of ρ as rates: CPU seconds per second, and seconds per second spent runnable but waiting for a CPU (stolen by other processes).',
            [
              d.target('rate(llm_prober_cpu_seconds_total{%s}[$__rate_interval])' % sel, 'cpu ' + w),
              d.target('rate(llm_prober_cpu_wait_seconds_total{%s}[$__rate_interval])' % sel, 'wait ' + w),
            ],
            unit='percentunit',
            min=0,
            width=10,
          ),
        ]),
        d.row('Lag', [
          d.timeseries(
            'Predicted vs measured lag per worker',
            'The Pollaczek–Khinchine mean queue wait predicted from the measured event rate and service times, against the measured mean and 99th percentile lateness of the 10 ms canary timer.',
            [
              d.target('llm_prober_predicted_queue_wait_seconds{%s}' % sel, 'predicted ' + w),
              d.target('rate(llm_prober_loop_lag_seconds_sum{%(s)s}[$__rate_interval]) / rate(llm_prober_loop_lag_seconds_count{%(s)s}[$__rate_interval])' % { s: sel }, 'measured mean ' + w),
              d.target('histogram_quantile(0.99, sum by (instance, worker, le) (rate(llm_prober_loop_lag_seconds_bucket{%s}[$__rate_interval])))' % sel, 'measured p99 ' + w),
            ],
            unit='s',
            min=0,
          ),
          d.timeseries(
            'Schedule lag quantiles',
            'Dispatch time minus the Poisson arrival time of each probe, per target. Above %s at the %s quantile the prober sends late (LLMProberScheduleLagHigh).' % [cfg.proberScheduleLagThreshold, cfg.proberScheduleLagQuantile],
            [
              d.target('histogram_quantile(%s, sum by (instance, target, le) (rate(llm_probe_schedule_lag_seconds_bucket{%s}[$__rate_interval])))' % [q, tsel], 'p%s {{instance}} {{target}}' % std.toString(q * 100))
              for q in [0.5, 0.99]
            ],
            unit='s',
            min=0,
            thresholds=[{ color: 'red', value: std.parseJson(cfg.proberScheduleLagThreshold) }],
          ),
          d.timeseries(
            'Event rate per worker',
            "λ: stream reads handled per second by each worker over 5 s. With E[S] beside it, ρ ≈ λ·E[S] is the worker's own load, without the CPU stolen by others.",
            [
              d.target('llm_prober_events_per_second{%s}' % sel, 'λ ' + w),
            ],
            unit='reqps',
            min=0,
          ),
          d.timeseries(
            'Event service time per worker',
            'E[S]: the mean time a probe spent handling one read before reading again.',
            [d.target('llm_prober_event_service_seconds{%s}' % sel, w)],
            unit='s',
            min=0,
          ),
        ]),
        d.row('Probes in flight, drops and restarts', [
          d.timeseries(
            'In flight per worker',
            'Probes in flight in each worker process.',
            [d.target('llm_prober_in_flight{%s}' % sel, w)],
            min=0,
            width=8,
          ),
          d.timeseries(
            'Dropped arrivals by reason',
            'Arrivals that were not sent (in-flight cap full, worker lost, target removed), per second.',
            [d.target('sum by (instance, target, reason) (rate(llm_probe_dropped_total{%s}[$__rate_interval])) > 0' % tsel, '{{instance}} {{target}} {{reason}}')],
            unit='reqps',
            min=0,
            width=8,
          ),
          d.timeseries(
            'Worker restarts',
            'Worker processes restarted after they exited, per worker, over the last hour.',
            // The counter of a worker appears at its first restart: 0 until then.
            [d.target('increase(llm_prober_worker_restarts_total{%(s)s}[1h]) or on (job, instance, worker) 0 * llm_prober_utilization{%(s)s}' % { s: sel }, w)],
            min=0,
            width=8,
          ),
          d.timeseries(
            'Resident memory per worker',
            'RSS of each worker process.',
            [d.target('llm_prober_resident_memory_bytes{%s}' % sel, w)],
            unit='bytes',
            min=0,
            width=8,
          ),
          d.timeseries(
            'Configuration reloads',
            'Whether the last reload succeeded (1) and reload attempts by result.',
            [
              d.target('llm_slo_exporter_config_last_reload_successful{%s}' % sel, 'last reload successful {{instance}}'),
              d.target('sum by (instance, result) (increase(llm_slo_exporter_config_reloads_total{%s}[$__rate_interval]))' % sel, '{{instance}} {{result}}'),
            ],
            min=0,
            width=8,
          ),
          d.timeseries(
            'Orphan records',
            'Records of probes whose target a reload removed while they were in flight, per second.',
            [d.target('rate(llm_prober_orphan_records_total{%s}[$__rate_interval])' % sel, '{{instance}}')],
            unit='reqps',
            min=0,
            width=8,
          ),
        ]),
      ],
      cfg,
    ),
  },
}
