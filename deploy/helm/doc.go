// Package helm holds two helpers, also used by the container tests that
// run the rendered chart: KubeVersion (the Kubernetes version the chart is
// linted and rendered for) and Template (`helm template`, client only,
// from Helm's own packages). Its tests lint and render the Helm chart in
// etcdbench/ with Helm's own library (helm lint, helm template), decode
// every rendered object strictly into the Kubernetes API types, and hold
// the chart equal to deploy/kubernetes (the exporter's DaemonSet and the
// check Job), deploy/prometheus (the rules) and deploy/grafana (the
// dashboard). The rules, the dashboard and the seccomp profile are copied
// into the chart's files/ by go generate (a chart cannot read files
// outside its directory). How to install the chart:
// etcdbench/README.md.
package helm

// The chart's copies of the files it ships; TestChartFilesAreCopies fails
// when one differs from its source.
//go:generate cp ../prometheus/etcdbench-rules.yaml etcdbench/files/etcdbench-rules.yaml
//go:generate cp ../grafana/etcdbench-exporter.json etcdbench/files/etcdbench-exporter.json
//go:generate sh -c "if [ -f ../kubernetes/exporter/etcdbench-exporter-seccomp.json ]; then cp ../kubernetes/exporter/etcdbench-exporter-seccomp.json etcdbench/files/; fi"
