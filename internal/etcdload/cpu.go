package etcdload

import (
	"time"

	"golang.org/x/sys/unix"

	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
)

// cpuMeter reads this process's CPU time (getrusage) and the machine's
// (/proc/stat) when the timed load starts and when it ends: the load
// generator's own CPU, and how busy the machine it shares with an
// embedded etcd was.
type cpuMeter struct {
	root   string
	t0     time.Time
	ru0    unix.Rusage
	ruOK   bool
	host0  sysinfo.CPUTimes
	hostOK bool
}

// startCPU reads the counters; root is where /proc is ("/").
func startCPU(root string) *cpuMeter {
	m := &cpuMeter{root: root, t0: time.Now()}
	m.ruOK = unix.Getrusage(unix.RUSAGE_SELF, &m.ru0) == nil
	var err error
	m.host0, err = sysinfo.ReadCPUStat(root)
	m.hostOK = err == nil
	return m
}

// stop returns this process's CPU since start (nil if getrusage failed)
// and the machine's figures: host_cpu_busy and host_cpus (none when
// /proc/stat cannot be read).
func (m *cpuMeter) stop() (*result.ProcessStats, []result.Figure) {
	var ps *result.ProcessStats
	var ru unix.Rusage
	if m.ruOK && unix.Getrusage(unix.RUSAGE_SELF, &ru) == nil {
		ps = &result.ProcessStats{
			UserNs:            unix.TimevalToNsec(ru.Utime) - unix.TimevalToNsec(m.ru0.Utime),
			SystemNs:          unix.TimevalToNsec(ru.Stime) - unix.TimevalToNsec(m.ru0.Stime),
			VoluntarySwitches: ru.Nvcsw - m.ru0.Nvcsw,
			InvoluntarySwitch: ru.Nivcsw - m.ru0.Nivcsw,
		}
	}
	if !m.hostOK {
		return ps, nil
	}
	host, err := sysinfo.ReadCPUStat(m.root)
	if err != nil {
		return ps, nil
	}
	share, ok := sysinfo.BusyShare(m.host0, host)
	if !ok {
		return ps, nil
	}
	return ps, []result.Figure{
		{Name: HostCPUBusy, Value: share, Unit: "ratio", Description: "share of the CPU time of the machine etcdbench runs on (an embedded etcd's too) that was busy during the load, other processes' included (/proc/stat: user, nice, system, irq, softirq, steal)"},
		{Name: HostCPUs, Value: float64(host.CPUs), Unit: "count", Description: "online CPUs of the machine etcdbench runs on"},
	}
}

// The machine's figures of every etcd load.
const (
	HostCPUBusy = "host_cpu_busy"
	HostCPUs    = "host_cpus"
)
