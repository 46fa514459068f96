package observe

import (
	"time"

	"golang.org/x/sys/unix"

	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
)

// Host is how busy the machine etcdbench runs on was during a load.
type Host struct {
	// Busy is the share of the machine's CPU time that was busy, other
	// processes' (an embedded etcd's) included.
	Busy float64
	// CPUs is the machine's online CPUs.
	CPUs int
}

// CPUMeter reads this process's CPU time (getrusage) and the machine's
// (/proc/stat) when the timed load starts and when it ends: the load
// generator's own CPU, and how busy the machine it shares with an
// embedded etcd was.
type CPUMeter struct {
	root   string
	t0     time.Time
	ru0    unix.Rusage
	ruOK   bool
	host0  sysinfo.CPUTimes
	hostOK bool
}

// StartCPU reads the counters; root is where /proc is ("/").
func StartCPU(root string) *CPUMeter {
	m := &CPUMeter{root: root, t0: time.Now()}
	m.ruOK = unix.Getrusage(unix.RUSAGE_SELF, &m.ru0) == nil
	var err error
	m.host0, err = sysinfo.ReadCPUStat(root)
	m.hostOK = err == nil
	return m
}

// Stop returns this process's CPU since StartCPU (nil if getrusage
// failed) and the machine's (nil when /proc/stat cannot be read).
func (m *CPUMeter) Stop() (*result.ProcessStats, *Host) {
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
	return ps, &Host{Busy: share, CPUs: host.CPUs}
}
