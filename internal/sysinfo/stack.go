package sysinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Stack is what lies under a software block device (loop, device-mapper,
// md RAID): the chain down to the devices that really hold the data, whose
// facts (rotational, write cache, scheduler, virtual) the rules read
// instead of the software device's defaults (a loop device claims to
// rotate whatever backs it).
type Stack struct {
	// Chain is the path from the filesystem's device to the bottom, e.g.
	// "loop0 -> file /var/tmp/disk.img on ext4 (/dev/vda) -> vda" or
	// "md0 (raid1) -> [sda1 on sda, sdb1 on sdb]".
	Chain string `json:"chain"`
	// Bottom are the devices at the bottom of the chain (a RAID's
	// members, each resolved in turn); empty when the chain ends in a
	// filesystem without a block device or cannot be followed.
	Bottom []Device `json:"bottom,omitempty"`
	// Files are the filesystems that hold loop devices' backing files,
	// outermost first: their mount options matter as much as the top one's.
	Files []BackingFile `json:"files,omitempty"`
	// Unresolved says where and why the chain could not be followed; the
	// rules then judge no device fact rather than a default.
	Unresolved string `json:"unresolved,omitempty"`
}

// BackingFile is the file a loop device reads and writes, and the
// filesystem that holds it.
type BackingFile struct {
	Loop       string     `json:"loop"` // loop0
	Path       string     `json:"path"` // as loop/backing_file gives it
	Filesystem Filesystem `json:"filesystem"`
}

// maxStackDepth bounds the resolution: real stacks are a few layers deep,
// a deeper one is a loop in the fixture or the kernel's view.
const maxStackDepth = 8

// IsStacked reports whether a device named name is built by software on
// other block devices or files (loop, dm-*, md*), so that its own sysfs
// facts are defaults rather than the storage's.
func IsStacked(name string) bool {
	for _, p := range []string{"loop", "dm-", "md"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// ParseBackingFile returns the path in a loop device's loop/backing_file,
// without the " (deleted)" the kernel appends once the file is unlinked;
// deleted is true then. ok is false for an empty file (no backing).
func ParseBackingFile(data []byte) (path string, deleted, ok bool) {
	s := strings.TrimRight(string(data), "\n")
	if p, found := strings.CutSuffix(s, " (deleted)"); found {
		s, deleted = p, true
	}
	if strings.TrimSpace(s) == "" {
		return "", false, false
	}
	return s, deleted, true
}

// stackResolver follows a device down, reading below root.
type stackResolver struct {
	root    string
	mounts  []Mount
	st      *Stack
	n       *notes
	visited map[string]bool // devices already on the chain: a cycle stops it
}

// resolveStack follows the software device d down to real devices.
func resolveStack(root string, mounts []Mount, d *Device, n *notes) *Stack {
	st := &Stack{}
	r := stackResolver{root: root, mounts: mounts, st: st, n: n, visited: map[string]bool{}}
	st.Chain = r.follow(d.Name, 0)
	if st.Unresolved != "" {
		n.addf("storage chain not followed to the bottom (%s): the device rules (rotational, write cache, virtual) are not applied", st.Unresolved)
	}
	return st
}

// unresolved records the first reason the chain stops short.
func (r *stackResolver) unresolved(format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	if r.st.Unresolved == "" {
		r.st.Unresolved = msg
	}
	return "?"
}

// follow returns the chain text from the device named name down.
func (r *stackResolver) follow(name string, depth int) string {
	if depth > maxStackDepth {
		return name + " -> " + r.unresolved("more than %d layers below %s", maxStackDepth, name)
	}
	if r.visited[name] {
		return name + " -> " + r.unresolved("%s lies below itself", name)
	}
	r.visited[name] = true
	node := r.node(name)
	switch {
	case strings.HasPrefix(name, "loop"):
		return r.followLoop(name, node, depth)
	case strings.HasPrefix(name, "dm-"), strings.HasPrefix(name, "md"):
		return r.followSlaves(name, node, depth)
	}
	return name
}

// node finds a software device's sysfs directory: the class link, or
// where the kernel puts loop, dm and md devices.
func (r *stackResolver) node(name string) string {
	for _, dir := range []string{"sys/class/block", "sys/block", "sys/devices/virtual/block"} {
		p := filepath.Join(r.root, dir, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return filepath.Join(r.root, "sys/class/block", name)
}

func (r *stackResolver) followLoop(name, node string, depth int) string {
	b, err := os.ReadFile(filepath.Join(node, "loop/backing_file"))
	if err != nil {
		return name + " -> " + r.unresolved("%s's backing file unknown: %v", name, err)
	}
	path, deleted, ok := ParseBackingFile(b)
	if !ok {
		return name + " -> " + r.unresolved("%s has no backing file", name)
	}
	m, found := MountFor(r.mounts, path)
	if !found || !filepath.IsAbs(path) {
		return fmt.Sprintf("%s -> file %s -> %s", name, path, r.unresolved("no mount in this namespace holds %s, %s's backing file (set up from another mount namespace?)", path, name))
	}
	fs := Filesystem{Type: m.FSType, Source: m.Source, MountPoint: m.MountPoint, MountOptions: m.MountOptions, SuperOptions: m.SuperOptions, MajorMinor: m.MajorMinor}
	r.st.Files = append(r.st.Files, BackingFile{Loop: name, Path: path, Filesystem: fs})
	file := fmt.Sprintf("%s -> file %s on %s (%s)", name, path, m.FSType, m.Source)
	if deleted {
		file = fmt.Sprintf("%s -> deleted file %s on %s (%s)", name, path, m.FSType, m.Source)
	}
	var sub notes
	dev := deviceFor(r.root, m, &sub)
	if dev == nil {
		if IsMemoryFS(m.FSType) {
			return file + " (memory, no device)"
		}
		return file + " -> " + r.unresolved("no block device behind %s (%s)", m.MountPoint, m.FSType)
	}
	return file + " -> " + r.below(*dev, &sub, depth)
}

// below continues the chain at a device read from sysfs: deeper when it
// is stacked too, else as a bottom device.
func (r *stackResolver) below(d Device, sub *notes, depth int) string {
	label := d.Name
	if d.Partition != "" {
		label = d.Partition + " on " + d.Name
	}
	if IsStacked(d.Name) {
		rest := r.follow(d.Name, depth+1)
		if d.Partition != "" {
			return d.Partition + " on " + rest
		}
		return rest
	}
	for _, b := range r.st.Bottom {
		if b.Name == d.Name {
			return label // two partitions of one disk: one bottom device
		}
	}
	for _, s := range *sub {
		r.n.addf("%s", s)
	}
	r.st.Bottom = append(r.st.Bottom, d)
	return label
}

func (r *stackResolver) followSlaves(name, node string, depth int) string {
	label := name
	if lvl, err := readTrimmed(filepath.Join(node, "md/level")); err == nil && lvl != "" {
		label = fmt.Sprintf("%s (%s)", name, lvl)
	} else if kind := dmKind(node); kind != "" {
		label = fmt.Sprintf("%s (%s)", name, kind)
	}
	entries, err := os.ReadDir(filepath.Join(node, "slaves"))
	if err != nil || len(entries) == 0 {
		if err == nil {
			err = fmt.Errorf("slaves/ is empty")
		}
		return label + " -> " + r.unresolved("devices under %s unknown: %v", name, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var parts []string
	for _, s := range names {
		var sub notes
		d := readDevice(r.root, filepath.Join(node, "slaves", s), &sub)
		if d == nil {
			parts = append(parts, s+" -> "+r.unresolved("%s (under %s) not in sysfs", s, name))
			continue
		}
		parts = append(parts, r.below(*d, &sub, depth))
	}
	if len(parts) == 1 {
		return label + " -> " + parts[0]
	}
	return label + " -> [" + strings.Join(parts, ", ") + "]"
}

// dmKind names a device-mapper target from dm/uuid's prefix (set by the
// tool that made it: LVM-, CRYPT-, mpath-...) or dm/name.
func dmKind(node string) string {
	uuid, _ := readTrimmed(filepath.Join(node, "dm/uuid"))
	name, _ := readTrimmed(filepath.Join(node, "dm/name"))
	kind := ""
	for _, k := range []struct{ prefix, kind string }{{"LVM-", "LVM"}, {"CRYPT-", "dm-crypt"}, {"mpath-", "multipath"}, {"VERITY-", "dm-verity"}} {
		if strings.HasPrefix(uuid, k.prefix) {
			kind = k.kind
		}
	}
	switch {
	case kind != "" && name != "":
		return kind + " " + name
	case name != "":
		return "device-mapper " + name
	}
	return kind
}

// JudgedDevice returns the device whose facts the device rules read: the
// filesystem's device itself, or for a stacked one the single device at
// the bottom of its chain, or for several (a RAID, an LVM volume over
// several disks) a merged view in which rotational holds only when every
// member rotates, virtual when any member is virtual and the write cache
// is "write back" when any member's is. ok is false when there is no
// device or the chain could not be followed: then no default is judged.
func (f Facts) JudgedDevice() (Device, bool) {
	if f.Device == nil {
		return Device{}, false
	}
	if f.Stack == nil {
		if IsStacked(f.Device.Name) {
			return Device{}, false // an old result, or resolution never ran
		}
		return *f.Device, true
	}
	if f.Stack.Unresolved != "" || len(f.Stack.Bottom) == 0 {
		return Device{}, false
	}
	if len(f.Stack.Bottom) == 1 {
		return f.Stack.Bottom[0], true
	}
	merged := Device{Name: f.Stack.Chain}
	allRot, rotKnown := true, true
	for _, d := range f.Stack.Bottom {
		if d.Rotational == nil {
			rotKnown = false
		} else if !*d.Rotational {
			allRot = false
		}
		merged.Virtual = merged.Virtual || d.Virtual
		if d.WriteCache == "write back" || merged.WriteCache == "" {
			merged.WriteCache = d.WriteCache
		}
	}
	if rotKnown {
		merged.Rotational = &allRot
	}
	return merged, true
}
