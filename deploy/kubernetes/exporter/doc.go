// Package exporter holds no code: its test checks the exporter's
// Kubernetes manifests (exporter.yaml: the DaemonSet, its Service and a
// Prometheus Operator ServiceMonitor), parsed strictly, against what the
// exporter needs and nothing more. How to use them: docs/exporter.md.
package exporter
