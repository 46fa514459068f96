// Package metrics reads etcd's Prometheus /metrics: it parses the text
// exposition format into client_model families, extracts cumulative
// histograms, subtracts two scrapes (so that a figure covers the load, not
// the time since the process started) and computes quantiles exactly as
// Prometheus' histogram_quantile does. Parsing and arithmetic are pure
// functions; Scrape is the only I/O.
package metrics
