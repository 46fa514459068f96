package headroom

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Collector serves a Headroom's figures as metrics, from what its last
// Update read (a scrape reads nothing itself).
type Collector struct {
	h                                  *Headroom
	estimate, volIOPS, volBytes, ratio *prometheus.Desc
	putRate, iopsRatio, fileOK         *prometheus.Desc
}

// NewCollector describes h's metrics with namespace ns; every per-member
// series carries the labels member and data_dir.
func NewCollector(ns string, h *Headroom) *Collector {
	labels := []string{"member", "data_dir"}
	d := func(name, help string, l ...string) *prometheus.Desc {
		if l == nil {
			l = labels
		}
		return prometheus.NewDesc(prometheus.BuildFQName(ns, "capacity", name), help, l, nil)
	}
	return &Collector{h: h,
		estimate:  d("puts_per_second", "The put rate the --capacity file that measured this member's volume says an etcd there sustains (capacity's estimate, or the disk sweep's rate when etcd's side was not measured)."),
		volIOPS:   d("volume_write_iops", "The write IOPS the member's volume gives, as the capacity sweep found its cap (absent when it found none)."),
		volBytes:  d("volume_write_bytes_per_second", "The bytes per second the member's volume wrote at its cap (absent when the sweep found no cap)."),
		ratio:     d("used_ratio", "The member's put rate now (etcd_mvcc_put_total over the window) over etcdbench_capacity_puts_per_second: 1 is the measured capacity. Absent when the rate cannot be read (the status page says why)."),
		putRate:   d("member_puts_per_second", "The member's put rate now: etcd_mvcc_put_total from its own /metrics over the window (puts inside transactions too)."),
		iopsRatio: d("volume_write_iops_used_ratio", "The data dir's device's write IOPS now (/proc/diskstats over the window) over etcdbench_capacity_volume_write_iops."),
		fileOK:    d("file_ok", "1 when the --capacity file was read and is this machine's result, 0 when it is refused (the log and the status page say why).", "file"),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.estimate, c.volIOPS, c.volBytes, c.ratio, c.putRate, c.iopsRatio, c.fileOK} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	files, members := c.h.Status()
	g := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l...)
	}
	for _, f := range files {
		ok := 0.0
		if f.Err == nil {
			ok = 1
		}
		g(c.fileOK, ok, f.Path)
	}
	for _, m := range members {
		if m.File == "" {
			continue
		}
		g(c.estimate, m.Estimate.PutsPerSecond, m.Member, m.DataDir)
		if m.Estimate.VolumeWriteIOPS > 0 {
			g(c.volIOPS, m.Estimate.VolumeWriteIOPS, m.Member, m.DataDir)
			g(c.volBytes, m.Estimate.VolumeWriteBytesPerSec, m.Member, m.DataDir)
		}
		if m.HasRate {
			g(c.putRate, m.PutRate, m.Member, m.DataDir)
			g(c.ratio, m.Ratio, m.Member, m.DataDir)
		}
		if m.HasIOPS {
			g(c.iopsRatio, m.IOPSRatio, m.Member, m.DataDir)
		}
	}
}
