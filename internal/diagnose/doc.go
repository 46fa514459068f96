// Package diagnose explains a slow etcd from what it already exposes: its
// Prometheus metrics (two scrapes' difference over a window, or a saved
// scrape since the process started) and its logs (zap JSON of etcd
// 3.4-3.7, the older capnslog text, journalctl's prefix before either).
//
// Both become Evidence; registered Rules (data: id, title, cause, source,
// check) turn evidence into ranked Findings with the numbers that support
// each and what to do, and Workload renders them through the one result
// model (figures per member, a verdict per finding, notes), so the text
// and JSON reporters print a diagnosis like any other run. Parsing is
// pure: ParseLogs and EvidenceFromMetrics read bytes and parsed
// families, never files or the network.
package diagnose
