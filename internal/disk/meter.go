package disk

import (
	"time"

	"golang.org/x/sys/unix"

	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
)

// Meter reads this process's CPU use and the device's counters at the start
// and end of a workload.
type Meter struct {
	root, dev string
	t0        time.Time
	ru0       unix.Rusage
	ds0       sysinfo.DiskStats
	devOK     bool
}

// StartMeter starts measuring; dev is the kernel name of the block device
// (empty when there is none, e.g. tmpfs).
func StartMeter(root, dev string) *Meter {
	m := &Meter{root: root, dev: dev, t0: time.Now()}
	_ = unix.Getrusage(unix.RUSAGE_SELF, &m.ru0)
	if dev != "" {
		var err error
		m.ds0, err = sysinfo.ReadDiskstats(root, dev)
		m.devOK = err == nil
	}
	return m
}

// Stop returns what happened since start. The device figures are nil when
// the device's counters could not be read.
func (m *Meter) Stop() (*result.ProcessStats, *result.DeviceStats) {
	elapsed := time.Since(m.t0)
	var ru unix.Rusage
	var ps *result.ProcessStats
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) == nil {
		ps = &result.ProcessStats{
			UserNs:            unix.TimevalToNsec(ru.Utime) - unix.TimevalToNsec(m.ru0.Utime),
			SystemNs:          unix.TimevalToNsec(ru.Stime) - unix.TimevalToNsec(m.ru0.Stime),
			VoluntarySwitches: ru.Nvcsw - m.ru0.Nvcsw,
			InvoluntarySwitch: ru.Nivcsw - m.ru0.Nivcsw,
		}
	}
	if !m.devOK {
		return ps, nil
	}
	ds, err := sysinfo.ReadDiskstats(m.root, m.dev)
	if err != nil {
		return ps, nil
	}
	return ps, deviceDelta(m.ds0, ds, elapsed)
}

// deviceDelta turns two diskstats readings taken elapsed apart into rates.
func deviceDelta(a, b sysinfo.DiskStats, elapsed time.Duration) *result.DeviceStats {
	d := &result.DeviceStats{
		Name:       b.Name,
		ReadIOs:    int64(b.ReadIOs - a.ReadIOs),
		WriteIOs:   int64(b.WriteIOs - a.WriteIOs),
		FlushIOs:   int64(b.FlushIOs - a.FlushIOs),
		ReadBytes:  int64(b.ReadSectors-a.ReadSectors) * 512,
		WriteBytes: int64(b.WriteSectors-a.WriteSectors) * 512,
		BusyNs:     int64(b.IOMs-a.IOMs) * int64(time.Millisecond),
	}
	if elapsed > 0 {
		d.Utilization = min(float64(d.BusyNs)/float64(elapsed), 1)
		d.AvgQueue = float64(b.WeightedMs-a.WeightedMs) * float64(time.Millisecond) / float64(elapsed)
	}
	if ios := d.ReadIOs + d.WriteIOs; ios > 0 {
		waitMs := float64(b.ReadMs-a.ReadMs) + float64(b.WriteMs-a.WriteMs)
		d.AvgWaitNs = waitMs * float64(time.Millisecond) / float64(ios)
	}
	return d
}
