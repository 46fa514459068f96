// Package observe watches etcd members while a load runs: their /metrics
// scraped before and after (the disk histograms, CPU, leader changes,
// slow applies, database size, peer round trips), their proposal backlog
// sampled during the load, and the CPU of this process and of the
// machine. What it observes comes back typed (Member, Host); Figures and
// HostFigures turn it into a result's figures, the one place their names
// are made. Engines read the typed values, never the figure names.
package observe
