package exporter

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"etcdbench/internal/diagnose/data/memory"
)

// memoryCollector reads, at each scrape, each traced member's resident
// memory and its memory limit (its cgroup's, else the machine's): a
// member near its limit has little room for a full LIST (diagnose data
// predicts what each costs).
type memoryCollector struct {
	root            string
	members         func() []memberProcess
	resident, limit *prometheus.Desc
}

// memberProcess is a traced member's process.
type memberProcess struct {
	member, dataDir string
	pid             int
}

func newMemoryCollector(root string, members func() []memberProcess, reg prometheus.Registerer) *memoryCollector {
	c := &memoryCollector{root: root, members: members,
		resident: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "memory", "resident_bytes"),
			"The member's resident memory (VmRSS of /proc/PID/status).", targetLabels, nil),
		limit: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "memory", "limit_bytes"),
			"The member's memory limit: its cgroup's (source cgroup-v1: memory.limit_in_bytes, cgroup-v2: memory.max), else the machine's MemTotal (source machine).",
			append(append([]string{}, targetLabels...), "source"), nil),
	}
	reg.MustRegister(c)
	return c
}

// Describe implements prometheus.Collector.
func (c *memoryCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.resident; ch <- c.limit }

// Collect implements prometheus.Collector.
func (c *memoryCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.members() {
		if rss, err := memory.RSS(c.root, m.pid); err == nil {
			ch <- prometheus.MustNewConstMetric(c.resident, prometheus.GaugeValue, float64(rss), m.member, m.dataDir)
		}
		if l := memory.LimitOf(c.root, m.pid); l.Known() {
			ch <- prometheus.MustNewConstMetric(c.limit, prometheus.GaugeValue, float64(l.Bytes), m.member, m.dataDir, limitSource(l))
		}
	}
}

// limitSource names where a limit comes from, as a label value.
func limitSource(l memory.Limit) string {
	switch {
	case strings.HasPrefix(l.From, "cgroup v1"):
		return "cgroup-v1"
	case strings.HasPrefix(l.From, "cgroup v2"):
		return "cgroup-v2"
	}
	return "machine"
}
