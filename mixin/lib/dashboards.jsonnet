// Renders dashboards_out/: jsonnet -m dashboards_out lib/dashboards.jsonnet
local dashboards = (import '../mixin.libsonnet').grafanaDashboards;
{ [name]: dashboards[name] for name in std.objectFields(dashboards) }
