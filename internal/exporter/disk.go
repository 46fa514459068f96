package exporter

import (
	"os"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"etcdbench/internal/sysinfo"
)

// diskCollector reads /proc/diskstats at each scrape for the device under
// each traced member's data dir (node_exporter's counters, limited to
// the devices that hold an etcd): utilisation is the rate of
// disk_io_time_seconds_total, the mean queue the rate of
// disk_weighted_io_time_seconds_total.
type diskCollector struct {
	root    string // of /proc/diskstats
	devices func() []memberDevice
	descs   []diskDesc
	errors  prometheus.Counter
}

// memberDevice is a traced member and the block device under its data dir.
type memberDevice struct{ member, dataDir, device string }

// diskDesc is one diskstats field as a metric.
type diskDesc struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	value func(sysinfo.DiskStats) float64
}

func newDiskCollector(root string, devices func() []memberDevice, reg prometheus.Registerer) *diskCollector {
	labels := append(append([]string{}, targetLabels...), "device")
	d := func(name, help string, typ prometheus.ValueType, v func(sysinfo.DiskStats) float64) diskDesc {
		return diskDesc{prometheus.NewDesc(prometheus.BuildFQName(Namespace, "disk", name), help, labels, nil), typ, v}
	}
	ms := func(v uint64) float64 { return float64(v) / 1000 }
	c := &diskCollector{root: root, devices: devices, descs: []diskDesc{
		d("io_time_seconds_total", "Time the data dir's device had at least one I/O in flight (/proc/diskstats field 10): its rate is the utilisation.", prometheus.CounterValue, func(s sysinfo.DiskStats) float64 { return ms(s.IOMs) }),
		d("weighted_io_time_seconds_total", "Sum over I/Os of their time queued and in service (/proc/diskstats field 11): its rate is the mean queue length.", prometheus.CounterValue, func(s sysinfo.DiskStats) float64 { return ms(s.WeightedMs) }),
		d("in_flight_ios", "I/Os in flight on the data dir's device now.", prometheus.GaugeValue, func(s sysinfo.DiskStats) float64 { return float64(s.InFlight) }),
		d("writes_completed_total", "Writes the data dir's device completed.", prometheus.CounterValue, func(s sysinfo.DiskStats) float64 { return float64(s.WriteIOs) }),
		d("write_time_seconds_total", "Time the writes of the data dir's device took, summed.", prometheus.CounterValue, func(s sysinfo.DiskStats) float64 { return ms(s.WriteMs) }),
		d("written_bytes_total", "Bytes the data dir's device wrote.", prometheus.CounterValue, func(s sysinfo.DiskStats) float64 { return float64(s.WriteSectors) * 512 }),
		d("flushes_completed_total", "Flush requests the data dir's device completed (kernel >= 5.5): the cache flushes fdatasync causes.", prometheus.CounterValue, func(s sysinfo.DiskStats) float64 { return float64(s.FlushIOs) }),
		d("flush_time_seconds_total", "Time the flush requests took, summed (kernel >= 5.5).", prometheus.CounterValue, func(s sysinfo.DiskStats) float64 { return ms(s.FlushMs) }),
	}, errors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "diskstats_errors_total",
		Help: "Scrapes at which /proc/diskstats could not be read or parsed."})}
	reg.MustRegister(c, c.errors)
	return c
}

// Describe implements prometheus.Collector.
func (c *diskCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d.desc
	}
}

// Collect implements prometheus.Collector: one read of /proc/diskstats
// per scrape, whatever the number of members.
func (c *diskCollector) Collect(ch chan<- prometheus.Metric) {
	devs := c.devices()
	if len(devs) == 0 {
		return
	}
	b, err := os.ReadFile(filepath.Join(c.root, "proc", "diskstats"))
	if err != nil {
		c.errors.Inc()
		return
	}
	all, err := sysinfo.ParseDiskstats(b)
	if err != nil {
		c.errors.Inc()
		return
	}
	for _, md := range devs {
		s, ok := all[md.device]
		if !ok {
			continue
		}
		for _, d := range c.descs {
			ch <- prometheus.MustNewConstMetric(d.desc, d.typ, d.value(s), md.member, md.dataDir, md.device)
		}
	}
}
