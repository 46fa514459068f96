// Package grafana holds no code: its test checks the Grafana dashboard of
// the exporter's metrics (etcdbench-exporter.json): valid JSON, every
// query parsed by promtool, and every metric a query names one the
// exporter serves. How to import it: docs/exporter.md.
package grafana
