// Package prometheus holds no code: its test checks the recording and
// alerting rules over the exporter's metrics (etcdbench-rules.yaml) with
// promtool, and that they name only metrics the exporter serves. What
// each alert means and what to do: docs/exporter.md.
package prometheus
