// A small local dashboard library (no grafonnet): plain Grafana dashboard
// JSON objects, with panels laid out in rows of 24 grid units.
{
  local ds = { type: 'prometheus', uid: '${datasource}' },

  // target is one Prometheus query of a panel.
  target(expr, legend='', refId='A', format='time_series', instant=false):: {
    datasource: ds,
    expr: expr,
    legendFormat: legend,
    refId: refId,
    format: format,
    [if instant then 'instant']: true,
    [if !instant then 'range']: true,
  },

  local withRefIds(targets) = [
    targets[i] { refId: std.char(std.codepoint('A') + i) }
    for i in std.range(0, std.length(targets) - 1)
  ],

  local base(type, title, description, targets, width, height) = {
    type: type,
    title: title,
    description: description,
    datasource: ds,
    targets: withRefIds(targets),
    // Layout fields, replaced by layout() below.
    gridPos: { w: width, h: height, x: 0, y: 0 },
  },

  local thresholdSteps(steps) = {
    mode: 'absolute',
    steps: [{ color: 'green', value: null }] + steps,
  },

  // timeseries is a time series panel. thresholds draws lines at the
  // given values ([{ color: 'red', value: 0.7 }]).
  timeseries(title, description, targets, unit='short', min=null, max=null, thresholds=[], width=12, height=8, stack=false)::
    base('timeseries', title, description, targets, width, height) {
      fieldConfig: {
        defaults: {
          unit: unit,
          [if min != null then 'min']: min,
          [if max != null then 'max']: max,
          thresholds: thresholdSteps(thresholds),
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: if stack then 30 else 10,
            showPoints: 'never',
            spanNulls: false,
            stacking: { mode: if stack then 'normal' else 'none', group: 'A' },
            thresholdsStyle: { mode: if thresholds == [] then 'off' else 'dashed' },
          },
        },
        overrides: [],
      },
      options: {
        legend: { displayMode: 'table', placement: 'bottom', showLegend: true, calcs: ['mean', 'lastNotNull', 'max'] },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
    },

  // heatmap is a heatmap of a classic histogram's buckets
  // (sum by (le) (rate(..._bucket[...]))), drawn as Prometheus buckets.
  heatmap(title, description, expr, unit='s', width=12, height=8)::
    base('heatmap', title, description, [self.target(expr, '{{le}}', format='heatmap')], width, height) {
      maxDataPoints: 60,
      fieldConfig: { defaults: {}, overrides: [] },
      options: {
        calculate: false,
        cellGap: 1,
        showValue: 'auto',
        color: { mode: 'scheme', scheme: 'Oranges', fill: 'dark-orange', scale: 'exponential', exponent: 0.5, steps: 64, reverse: false },
        yAxis: { axisPlacement: 'left', unit: unit },
        rowsFrame: { layout: 'auto' },
        cellValues: {},
        legend: { show: true },
        tooltip: { mode: 'single', yHistogram: true, showColorScale: false },
        exemplars: { color: 'rgba(255,0,255,0.7)' },
        filterValues: { le: 1e-9 },
      },
    },

  // stat is a stat panel showing the last value of each series.
  stat(title, description, targets, unit='short', thresholds=[], decimals=null, width=6, height=6)::
    base('stat', title, description, targets, width, height) {
      fieldConfig: {
        defaults: {
          unit: unit,
          [if decimals != null then 'decimals']: decimals,
          thresholds: thresholdSteps(thresholds),
          color: { mode: 'thresholds' },
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        colorMode: 'value',
        graphMode: 'area',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'auto',
        wideLayout: true,
        showPercentChange: false,
        percentChangeColorMode: 'standard',
      },
    },

  // bargauge is a horizontal bar gauge of the last value of each series.
  bargauge(title, description, targets, unit='percentunit', min=0, max=1, thresholds=[], width=12, height=8)::
    base('bargauge', title, description, targets, width, height) {
      fieldConfig: {
        defaults: {
          unit: unit,
          min: min,
          max: max,
          thresholds: thresholdSteps(thresholds),
          color: { mode: 'thresholds' },
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        displayMode: 'gradient',
        orientation: 'horizontal',
        showUnfilled: true,
        valueMode: 'color',
        namePlacement: 'auto',
        sizing: 'auto',
        minVizWidth: 8,
        minVizHeight: 16,
        maxVizHeight: 300,
        legend: { displayMode: 'list', placement: 'bottom', showLegend: false, calcs: [] },
      },
    },

  // row starts a new row of panels.
  row(title, panels):: { title: title, panels: panels },

  // layout turns rows of panels into the flat panel list of a dashboard:
  // a row panel, then its panels left to right, wrapping at 24 units.
  // Panel ids are assigned in order.
  layout(rows)::
    local place(acc, p) =
      local wrap = acc.x + p.gridPos.w > 24;
      local x = if wrap then 0 else acc.x;
      local y = if wrap then acc.y + acc.h else acc.y;
      local h = if wrap then p.gridPos.h else std.max(acc.h, p.gridPos.h);
      {
        x: x + p.gridPos.w,
        y: y,
        h: h,
        panels: acc.panels + [p { gridPos: { x: x, y: y, w: p.gridPos.w, h: p.gridPos.h } }],
      };
    local addRow(acc, r) =
      local top = acc.y;
      local rowPanel = { type: 'row', title: r.title, collapsed: false, panels: [], gridPos: { x: 0, y: top, w: 24, h: 1 } };
      local placed = std.foldl(place, r.panels, { x: 0, y: top + 1, h: 0, panels: [] });
      { y: placed.y + placed.h, panels: acc.panels + [rowPanel] + placed.panels };
    local flat = std.foldl(addRow, rows, { y: 0, panels: [] }).panels;
    [flat[i] { id: i + 1 } for i in std.range(0, std.length(flat) - 1)],

  // Template variables.
  datasourceVariable:: {
    name: 'datasource',
    label: 'Data source',
    type: 'datasource',
    query: 'prometheus',
    current: { selected: false, text: 'default', value: 'default' },
    hide: 0,
    refresh: 1,
    regex: '',
    skipUrlSync: false,
  },

  // queryVariable is a multi-value label variable with "All".
  queryVariable(name, metricSelector, label=name):: {
    name: name,
    label: label,
    type: 'query',
    datasource: ds,
    query: { query: 'label_values(%s, %s)' % [metricSelector, name], refId: 'PrometheusVariableQueryEditor-VariableQuery', qryType: 1 },
    definition: 'label_values(%s, %s)' % [metricSelector, name],
    current: { selected: true, text: ['All'], value: ['$__all'] },
    hide: 0,
    includeAll: true,
    multi: true,
    allValue: '.+',
    refresh: 2,
    regex: '',
    sort: 1,
    skipUrlSync: false,
  },

  // dashboard is a dashboard with the mixin's defaults.
  dashboard(filename, title, description, variables, rows, config):: {
    uid: std.substr(std.md5(filename), 0, 32),
    title: config.dashboardNamePrefix + title,
    description: description,
    tags: config.dashboardTags,
    timezone: config.dashboardTimezone,
    editable: true,
    graphTooltip: 1,
    refresh: config.dashboardRefresh,
    schemaVersion: 39,
    version: 1,
    time: { from: config.dashboardPeriod, to: 'now' },
    timepicker: { refresh_intervals: ['10s', '30s', '1m', '5m', '15m', '30m', '1h'] },
    fiscalYearStartMonth: 0,
    liveNow: false,
    weekStart: '',
    templating: { list: variables },
    annotations: { list: [] },
    links: [{
      title: 'LLM SLO dashboards',
      type: 'dashboards',
      tags: config.dashboardTags,
      asDropdown: true,
      includeVars: true,
      keepTime: true,
      icon: 'external link',
      targetBlank: false,
      tooltip: '',
      url: '',
    }],
    panels: $.layout(rows),
  },
}
