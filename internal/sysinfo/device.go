package sysinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Device describes the block device behind a filesystem, as sysfs shows it.
// Every field but Name may be empty when sysfs does not expose it; the
// reason is then in Facts.Notes.
type Device struct {
	// Name is the kernel name of the whole disk, e.g. vda, nvme0n1, dm-0.
	Name string `json:"name"`
	// Partition is the partition's kernel name (vda1) when the filesystem
	// sits on a partition rather than the whole disk.
	Partition string `json:"partition,omitempty"`
	// Model is device/model, trimmed; virtio and dm devices have none.
	Model string `json:"model,omitempty"`
	// Rotational is queue/rotational; nil when unreadable. Virtual disks
	// often claim to rotate whatever backs them.
	Rotational *bool `json:"rotational,omitempty"`
	// Scheduler is the active I/O scheduler from queue/scheduler.
	Scheduler string `json:"scheduler,omitempty"`
	// WriteCache is queue/write_cache: "write back" means a completed write
	// may still sit in a volatile cache until a flush.
	WriteCache string `json:"write_cache,omitempty"`
	// Virtual is true for disks presented by a hypervisor (virtio, Xen,
	// Hyper-V, VMware, cloud block stores), whose flush latency depends on
	// the host. Software devices (loop, dm, md, zram, nbd) are not virtual
	// hardware: Virtual is false and Slaves names what lies below.
	Virtual bool `json:"virtual"`
	// Driver is the basename of the device's driver symlink, e.g. virtio_blk.
	Driver string `json:"driver,omitempty"`
	// Slaves lists the devices under a dm-* or md* device, from its
	// slaves/ directory.
	Slaves []string `json:"slaves,omitempty"`
}

// softwareDevicePrefixes name kernel block devices built by software on top
// of other storage (or RAM) rather than presented by hardware or a
// hypervisor.
var softwareDevicePrefixes = []string{"loop", "zram", "dm-", "md", "nbd", "ram"}

// virtualMarkers, found in a driver name or a sysfs device path, show that a
// hypervisor presents the disk.
var virtualMarkers = []string{"virtio", "xen", "vmbus", "hv_storvsc", "vmw"}

// virtualNamePrefixes are disk names only paravirtual drivers use.
var virtualNamePrefixes = []string{"vd", "xvd"}

// virtualModelMarkers, found in device/model (lower-cased), show an emulated
// or cloud disk behind a generic driver such as sd or nvme.
var virtualModelMarkers = []string{"qemu", "vmware", "virtual disk", "amazon elastic block store", "persistentdisk"}

// driverLinks are tried in order: SCSI and virtio disks have the driver on
// device/, NVMe namespaces one level further up on the controller's device.
var driverLinks = []string{"device/driver", "device/device/driver"}

// ParseScheduler returns the active I/O scheduler from the content of
// queue/scheduler: the bracketed entry ("none [mq-deadline] kyber bfq" gives
// "mq-deadline"), or the only entry when there is one ("none"). It returns
// "" when it cannot tell.
func ParseScheduler(data []byte) string {
	s := strings.TrimSpace(string(data))
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i+1:], ']'); j >= 0 {
			return strings.TrimSpace(s[i+1 : i+1+j])
		}
		return ""
	}
	if f := strings.Fields(s); len(f) == 1 {
		return f[0]
	}
	return ""
}

// readDevice reads the block device whose sysfs node (a symlink such as
// root/sys/dev/block/253:1) is given. It returns nil only when the node
// itself cannot be resolved.
func readDevice(root, node string, n *notes) *Device {
	resolved, err := filepath.EvalSymlinks(node)
	if err != nil {
		n.addf("block device unknown: %v", err)
		return nil
	}
	disk := resolved
	d := &Device{}
	if _, err := os.Stat(filepath.Join(resolved, "partition")); err == nil {
		disk = filepath.Dir(resolved)
		d.Partition = filepath.Base(resolved)
	}
	d.Name = filepath.Base(disk)

	if m, err := readTrimmed(filepath.Join(disk, "device/model")); err == nil {
		d.Model = m
	} else if !errors.Is(err, fs.ErrNotExist) {
		n.addf("device model unknown: %v", err)
	}
	if r, err := readTrimmed(filepath.Join(disk, "queue/rotational")); err != nil {
		n.addf("rotational flag unknown: %v", err)
	} else if r == "0" || r == "1" {
		rot := r == "1"
		d.Rotational = &rot
	} else {
		n.addf("rotational flag unknown: %s holds %q, want 0 or 1", filepath.Join(disk, "queue/rotational"), r)
	}
	if b, err := os.ReadFile(filepath.Join(disk, "queue/scheduler")); err != nil {
		n.addf("I/O scheduler unknown: %v", err)
	} else if d.Scheduler = ParseScheduler(b); d.Scheduler == "" {
		n.addf("I/O scheduler unknown: no active entry in %q", shorten(strings.TrimSpace(string(b)), 80))
	}
	if w, err := readTrimmed(filepath.Join(disk, "queue/write_cache")); err != nil {
		n.addf("write cache mode unknown: %v", err)
	} else {
		d.WriteCache = w
	}
	for _, rel := range driverLinks {
		if target, err := os.Readlink(filepath.Join(disk, rel)); err == nil {
			d.Driver = filepath.Base(target)
			break
		}
	}
	if entries, err := os.ReadDir(filepath.Join(disk, "slaves")); err == nil {
		for _, e := range entries {
			d.Slaves = append(d.Slaves, e.Name())
		}
	}
	if b, err := os.ReadFile(filepath.Join(disk, "loop/backing_file")); err == nil {
		if path, _, ok := ParseBackingFile(b); ok {
			n.addf("loop device %s is backed by file %s; its latency is that file's filesystem's", d.Name, path)
		}
	}
	d.Virtual = isVirtual(d, sysfsRelative(root, disk))
	return d
}

// sysfsRelative strips the root from a resolved sysfs path, so that a
// fixture directory whose name happens to contain "virtio" or "xen" does not
// count as evidence.
func sysfsRelative(root, path string) string {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = root
	}
	if rel, err := filepath.Rel(realRoot, path); err == nil {
		return "/" + rel
	}
	return path
}

// isVirtual applies the marker tables above to a device; sysPath is its
// sysfs directory relative to the root.
func isVirtual(d *Device, sysPath string) bool {
	for _, p := range softwareDevicePrefixes {
		if strings.HasPrefix(d.Name, p) {
			return false
		}
	}
	for _, p := range virtualNamePrefixes {
		if strings.HasPrefix(d.Name, p) {
			return true
		}
	}
	evidence := strings.ToLower(d.Driver + " " + sysPath)
	for _, m := range virtualMarkers {
		if strings.Contains(evidence, m) {
			return true
		}
	}
	model := strings.ToLower(d.Model)
	for _, m := range virtualModelMarkers {
		if strings.Contains(model, m) {
			return true
		}
	}
	return false
}

// BlockDevice returns the block device with the device number dev (as
// stat's st_dev gives it) under root/sys/dev/block, or by its number in
// root/proc/diskstats where sysfs lacks it (a container), and why it has
// none or facts are missing. The number is what a file's filesystem
// reports, the host's in any namespace, so this works across mount
// namespaces (a process's files seen through /proc/PID/fd or
// /proc/PID/root), where mountinfo paths would not. Major 0 is an
// anonymous device (tmpfs, overlay, btrfs subvolumes): no block device.
func BlockDevice(root string, dev uint64) (*Device, []string) {
	major, minor := unix.Major(dev), unix.Minor(dev)
	var n notes
	if major == 0 {
		n.addf("no block device: device number 0:%d is anonymous (tmpfs, overlay or a btrfs subvolume)", minor)
		return nil, n
	}
	return deviceByNumber(root, major, minor, &n), n
}

// deviceByNumber reads the block device major:minor from
// root/sys/dev/block, or from /proc/diskstats where that lacks it.
func deviceByNumber(root string, major, minor uint32, n *notes) *Device {
	node := filepath.Join(root, "sys/dev/block", fmt.Sprintf("%d:%d", major, minor))
	if _, err := os.Lstat(node); err != nil {
		return deviceFromDiskstats(root, major, minor, err, n)
	}
	return readDevice(root, node, n)
}

// deviceFromDiskstats finds the device numbered major:minor in
// root/proc/diskstats when root/sys/dev/block lacks it (lstatErr): inside
// a container /sys/dev/block is masked or not the host's, but diskstats
// is the kernel's, and /sys/class/block/NAME usually still leads to the
// device's facts. A partition is named by its whole disk, as readDevice
// does.
func deviceFromDiskstats(root string, major, minor uint32, lstatErr error, n *notes) *Device {
	b, err := os.ReadFile(filepath.Join(root, "proc", "diskstats"))
	if err != nil {
		n.addf("block device unknown: %v, and %v", lstatErr, err)
		return nil
	}
	all, err := ParseDiskstats(b)
	if err != nil {
		n.addf("block device unknown: %v, and %v", lstatErr, err)
		return nil
	}
	ds, ok := DiskByNumber(all, major, minor)
	if !ok {
		n.addf("block device unknown: %v, and /proc/diskstats has no device %d:%d", lstatErr, major, minor)
		return nil
	}
	var facts notes
	if d := readDevice(root, filepath.Join(root, "sys/class/block", ds.Name), &facts); d != nil {
		*n = append(*n, facts...)
		return d
	}
	n.addf("device %s found by its number %d:%d in /proc/diskstats; its facts are unknown: %s is not readable here (a container's masked sysfs)", ds.Name, major, minor, filepath.Join(root, "sys/dev/block"))
	return &Device{Name: ds.Name}
}
