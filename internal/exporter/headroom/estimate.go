package headroom

import (
	"errors"
	"fmt"
	"strings"

	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
)

// ErrNoCapacity is returned by Parse for a result without a capacity
// answer (a run of other workloads, or an interrupted sweep).
var ErrNoCapacity = errors.New("no capacity answer in the result")

// ErrOtherHost is returned by CheckHost for a result measured on
// another machine.
var ErrOtherHost = errors.New("measured on another machine")

// Estimate is what one saved result says a volume carries.
type Estimate struct {
	// PutsPerSecond is capacity's estimate of etcd's put rate
	// (capacity.etcd.rate), or the disk sweep's rate when the etcd side
	// was not measured.
	PutsPerSecond float64
	// FromDiskSweep says PutsPerSecond is the disk sweep's rate: etcd's
	// CPU side was not measured.
	FromDiskSweep bool
	// VolumeWriteIOPS and VolumeWriteBytesPerSec are the volume's cap,
	// when the sweep found one (0 otherwise).
	VolumeWriteIOPS, VolumeWriteBytesPerSec float64
	// Dir, Filesystem ("major:minor") and Device are where it was
	// measured; Device is "" when the directory had no block device.
	Dir, Filesystem string
	Device          string
	// Hostname is the machine it was measured on ("" when unknown).
	Hostname string
	// Command is the etcdbench command that measured it.
	Command string
}

// Parse reads a saved `etcdbench capacity -o json` or `etcdbench check
// -o json` result: result.ErrSchema when it is not one, ErrNoCapacity
// when it has no capacity answer.
func Parse(b []byte) (Estimate, error) {
	r, err := result.Read(strings.NewReader(string(b)))
	if err != nil {
		return Estimate{}, err
	}
	var c *result.Capacity
	for i := range r.Workloads {
		if w := &r.Workloads[i]; w.Name == "capacity" && w.Capacity != nil {
			c = w.Capacity
		}
	}
	if c == nil {
		return Estimate{}, fmt.Errorf("%w: no capacity workload (save `etcdbench capacity -o json` or `etcdbench check -o json`)", ErrNoCapacity)
	}
	e := Estimate{PutsPerSecond: c.Rate, FromDiskSweep: true, Dir: r.Environment.Dir,
		Filesystem: r.Environment.Filesystem.MajorMinor, Hostname: r.Environment.Hostname, Command: strings.Join(r.Tool.Args, " ")}
	if c.Etcd != nil && c.Etcd.Rate > 0 {
		e.PutsPerSecond, e.FromDiskSweep = c.Etcd.Rate, false
	}
	if e.PutsPerSecond <= 0 {
		return Estimate{}, fmt.Errorf("%w: the sweep found no rate that passed (%s)", ErrNoCapacity, orWords(c.Evidence, "no evidence recorded"))
	}
	if c.Volume != nil {
		e.VolumeWriteIOPS, e.VolumeWriteBytesPerSec = c.Volume.WriteIOPS, c.Volume.WriteBytesPerSec
	}
	if d := r.Environment.Device; d != nil {
		e.Device = deviceName(*d)
	}
	return e, nil
}

// deviceName is the partition's name when the filesystem is on one, else
// the whole disk's.
func deviceName(d sysinfo.Device) string {
	if d.Partition != "" {
		return d.Partition
	}
	return d.Name
}

func orWords(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// CheckHost returns ErrOtherHost when e was measured on a machine other
// than hostname; a result or a host without a hostname passes.
func (e Estimate) CheckHost(hostname string) error {
	if e.Hostname != "" && hostname != "" && e.Hostname != hostname {
		return fmt.Errorf("%w: %s, this is %s; measure this machine's volume with `etcdbench capacity`", ErrOtherHost, e.Hostname, hostname)
	}
	return nil
}

// Volume is where a member's data dir lies: its filesystem's device
// number ("major:minor") and block device ("" when none).
type Volume struct {
	Filesystem string
	Device     string
}

// Matches says whether e measured vol: the same filesystem, or the same
// block device (partition).
func (e Estimate) Matches(vol Volume) bool {
	if e.Filesystem != "" && e.Filesystem == vol.Filesystem {
		return true
	}
	return e.Device != "" && e.Device == vol.Device
}
