package sysinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Facts are the environment facts recorded with every etcdbench result.
// Fields that could not be read are left at their zero value and explained
// in Notes.
type Facts struct {
	// Dir is the directory under test: absolute with symlinks resolved when
	// collected from the real root, cleaned otherwise (see Collect).
	Dir string `json:"dir"`
	// Filesystem is the mount that holds Dir.
	Filesystem Filesystem `json:"filesystem"`
	// Device is the block device behind Filesystem; nil when there is none
	// (tmpfs, overlay, nfs...) or it could not be found.
	Device *Device `json:"device,omitempty"`
	// Stack is what lies under Device when it is a loop, device-mapper or
	// md device: the chain down to the devices that hold the data (see
	// JudgedDevice); nil for a device that is not stacked.
	Stack *Stack `json:"stack,omitempty"`
	// Kernel is the kernel release from /proc/sys/kernel/osrelease.
	Kernel string `json:"kernel"`
	// CPUs is runtime.NumCPU(): the CPUs this process may run on.
	CPUs int `json:"cpus"`
	// CPUModel is the first "model name" in /proc/cpuinfo.
	CPUModel string `json:"cpu_model,omitempty"`
	// MemTotalBytes is MemTotal from /proc/meminfo, in bytes.
	MemTotalBytes uint64 `json:"mem_total_bytes,omitempty"`
	// Hostname names the machine the result came from.
	Hostname string `json:"hostname,omitempty"`
	// Notes explain each fact that is missing or needs a caveat, e.g.
	// "write cache mode unknown: open /sys/...: no such file or directory".
	Notes []string `json:"notes,omitempty"`
}

// Filesystem is the mount that holds the directory under test, from
// /proc/self/mountinfo.
type Filesystem struct {
	// Type is the filesystem type, e.g. ext4, xfs, tmpfs, overlay.
	Type string `json:"type"`
	// Source is what is mounted, e.g. /dev/vda1.
	Source string `json:"source"`
	// MountPoint is where it is mounted.
	MountPoint string `json:"mount_point"`
	// MountOptions are the per-mount options, e.g. rw,relatime.
	MountOptions string `json:"mount_options"`
	// SuperOptions are the per-superblock options, e.g. rw,data=ordered.
	SuperOptions string `json:"super_options"`
	// MajorMinor is the filesystem's device number, e.g. "253:1".
	MajorMinor string `json:"major_minor"`
}

// notes collects explanations for missing facts.
type notes []string

func (n *notes) addf(format string, args ...any) {
	*n = append(*n, fmt.Sprintf(format, args...))
}

// Collect gathers the facts for dir, reading /proc and /sys below root ("/"
// in production; "" means "/"). It never fails: what it cannot read is
// explained in Facts.Notes.
//
// With root "/", dir is made absolute and its symlinks are resolved before
// it is looked up in mountinfo. With any other root, dir is a path inside
// that root's mount namespace: it is only cleaned with filepath.Clean and
// looked up in root/proc/self/mountinfo as is, so it should be absolute and
// free of symlinks. The hostname comes from os.Hostname for root "/" and
// from root/proc/sys/kernel/hostname otherwise.
func Collect(root, dir string) Facts {
	if root == "" {
		root = "/"
	}
	host := filepath.Clean(root) == "/"
	var n notes
	f := Facts{CPUs: runtime.NumCPU()}
	f.Dir = resolveDir(host, dir, &n)
	f.Filesystem, f.Device, f.Stack = collectStorage(root, f.Dir, &n)

	if k, err := readTrimmed(filepath.Join(root, "proc/sys/kernel/osrelease")); err != nil {
		n.addf("kernel release unknown: %v", err)
	} else {
		f.Kernel = k
	}
	cpuinfo := filepath.Join(root, "proc/cpuinfo")
	if b, err := os.ReadFile(cpuinfo); err != nil {
		n.addf("CPU model unknown: %v", err)
	} else if model, ok := parseCPUModel(b); ok {
		f.CPUModel = model
	} else {
		n.addf("CPU model unknown: no %q line in %s", cpuModelKeys[0], cpuinfo)
	}
	meminfo := filepath.Join(root, "proc/meminfo")
	if b, err := os.ReadFile(meminfo); err != nil {
		n.addf("total memory unknown: %v", err)
	} else if total, err := parseMemTotal(b); err != nil {
		n.addf("total memory unknown: %s: %v", meminfo, err)
	} else {
		f.MemTotalBytes = total
	}
	var err error
	if host {
		f.Hostname, err = os.Hostname()
	} else {
		f.Hostname, err = readTrimmed(filepath.Join(root, "proc/sys/kernel/hostname"))
	}
	if err != nil {
		n.addf("hostname unknown: %v", err)
	}
	f.Notes = n
	return f
}

// resolveDir turns dir into the path to look up in mountinfo.
func resolveDir(host bool, dir string, n *notes) string {
	if !host {
		return filepath.Clean(dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		n.addf("directory not made absolute: %v", err)
		return filepath.Clean(dir)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		n.addf("directory symlinks not resolved, using %s: %v", abs, err)
		return abs
	}
	return resolved
}

// collectStorage finds the mount holding dir, the block device behind it
// and, for a stacked device, what lies below.
func collectStorage(root, dir string, n *notes) (Filesystem, *Device, *Stack) {
	path := filepath.Join(root, "proc/self/mountinfo")
	b, err := os.ReadFile(path)
	if err != nil {
		n.addf("filesystem unknown: %v", err)
		return Filesystem{}, nil, nil
	}
	mounts, err := ParseMountInfo(b)
	if err != nil {
		n.addf("filesystem unknown: %s: %v", path, err)
		return Filesystem{}, nil, nil
	}
	m, ok := MountFor(mounts, dir)
	if !ok {
		n.addf("filesystem unknown: no mount in %s contains %s", path, dir)
		return Filesystem{}, nil, nil
	}
	fs := Filesystem{
		Type:         m.FSType,
		Source:       m.Source,
		MountPoint:   m.MountPoint,
		MountOptions: m.MountOptions,
		SuperOptions: m.SuperOptions,
		MajorMinor:   m.MajorMinor,
	}
	d := deviceFor(root, m, n)
	if d == nil || !IsStacked(d.Name) {
		return fs, d, nil
	}
	return fs, d, resolveStack(root, mounts, d, n)
}

// deviceFor finds the block device behind a mount. Major 0 is an anonymous
// device number: memory and network filesystems and overlays have no block
// device, while btrfs reports 0:N for every subvolume even though its
// source names a real disk, so the source is tried before giving up.
func deviceFor(root string, m Mount, n *notes) *Device {
	if major, minor, ok := splitMajorMinor(m.MajorMinor); ok && major != 0 {
		return deviceByNumber(root, major, minor, n)
	}
	switch {
	case IsMemoryFS(m.FSType):
		return nil
	case m.FSType == "overlay":
		n.addf("no block device: overlay filesystem (container); device facts unavailable")
		return nil
	case strings.HasPrefix(m.Source, "/dev/"):
		// /dev/mapper/name is a symlink to /dev/dm-N; sysfs knows only dm-N.
		name := filepath.Base(m.Source)
		if r, err := filepath.EvalSymlinks(filepath.Join(root, m.Source)); err == nil {
			name = filepath.Base(r)
		}
		node := filepath.Join(root, "sys/class/block", name)
		if _, err := os.Lstat(node); err == nil {
			return readDevice(root, node, n)
		}
	}
	n.addf("no block device: %s filesystem (source %s, device %s); device facts unavailable", m.FSType, m.Source, m.MajorMinor)
	return nil
}
