package sysinfo

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrMalformedMountInfo is wrapped by ParseMountInfo when a line does not
// have the layout described in proc(5); callers can test for it with
// errors.Is.
var ErrMalformedMountInfo = errors.New("malformed mountinfo")

// Mount is one line of /proc/self/mountinfo. Paths and the source are
// unescaped (\040 becomes a space); option strings are kept as the kernel
// wrote them.
type Mount struct {
	ID, ParentID int
	MajorMinor   string // st_dev of the filesystem, "253:1"; major 0 means no block device
	Root         string // directory of the filesystem that is mounted here
	MountPoint   string // where it is mounted, relative to the process root
	MountOptions string // per-mount options, "rw,relatime"
	FSType       string // "ext4", "overlay", "fuse.sshfs"
	Source       string // "/dev/vda1", "overlay", "server:/export"
	SuperOptions string // per-superblock options
}

// ParseMountInfo parses the content of /proc/self/mountinfo. It accepts any
// number of optional fields ("shared:1 master:2") before the " - "
// separator and decodes the octal escapes the kernel uses for spaces, tabs,
// newlines and backslashes in paths. Blank lines are skipped; any other line
// that does not fit the format makes it fail with an error that wraps
// ErrMalformedMountInfo and names the line number.
func ParseMountInfo(data []byte) ([]Mount, error) {
	var mounts []Mount
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, err := parseMountLine(line)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v: %q", ErrMalformedMountInfo, i+1, err, shorten(line, 120))
		}
		mounts = append(mounts, m)
	}
	return mounts, nil
}

// parseMountLine splits on single spaces rather than runs of blanks: the
// kernel writes exactly one space between fields, and an empty source
// (mount -t tmpfs "" /x) shows up as two spaces in a row.
func parseMountLine(line string) (Mount, error) {
	f := strings.Split(line, " ")
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if sep < 0 {
		return Mount{}, fmt.Errorf("no \" - \" separator after the 6 leading fields (%d fields)", len(f))
	}
	if n := len(f) - sep - 1; n != 3 {
		return Mount{}, fmt.Errorf("%d fields after \" - \", want 3 (type, source, super options)", n)
	}
	id, err := strconv.Atoi(f[0])
	if err != nil {
		return Mount{}, fmt.Errorf("mount ID: %w", err)
	}
	parent, err := strconv.Atoi(f[1])
	if err != nil {
		return Mount{}, fmt.Errorf("parent ID: %w", err)
	}
	if _, _, ok := splitMajorMinor(f[2]); !ok {
		return Mount{}, fmt.Errorf("device %q is not major:minor", f[2])
	}
	if f[4] == "" || f[sep+1] == "" {
		return Mount{}, errors.New("empty mount point or filesystem type")
	}
	return Mount{
		ID:           id,
		ParentID:     parent,
		MajorMinor:   f[2],
		Root:         unescapeOctal(f[3]),
		MountPoint:   unescapeOctal(f[4]),
		MountOptions: f[5],
		FSType:       unescapeOctal(f[sep+1]),
		Source:       unescapeOctal(f[sep+2]),
		SuperOptions: f[sep+3],
	}, nil
}

// splitMajorMinor splits "253:1" into its two decimal numbers.
func splitMajorMinor(s string) (major, minor uint32, ok bool) {
	a, b, found := strings.Cut(s, ":")
	if !found {
		return 0, 0, false
	}
	ma, err1 := strconv.ParseUint(a, 10, 32)
	mi, err2 := strconv.ParseUint(b, 10, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uint32(ma), uint32(mi), true
}

// unescapeOctal decodes \NNN octal escapes (the kernel's mangle() output).
// A backslash not followed by three octal digits that fit a byte is kept.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// shorten keeps error messages readable when a fuzzer or a broken file
// hands us a very long line.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// MountFor returns the mount that contains path: the one with the longest
// MountPoint that is path itself or a parent directory of it. Matching is by
// whole path components, so /var/lib is not inside a mount at /var/li. When
// several mounts share a mount point the last one in the list wins, because
// mountinfo lists mounts in the order they were made and the last one is on
// top. path is cleaned first and should be absolute.
func MountFor(mounts []Mount, path string) (Mount, bool) {
	path = filepath.Clean(path)
	best, bestLen := -1, -1
	for i, m := range mounts {
		mp := filepath.Clean(m.MountPoint)
		if !containsPath(mp, path) {
			continue
		}
		if len(mp) >= bestLen {
			best, bestLen = i, len(mp)
		}
	}
	if best < 0 {
		return Mount{}, false
	}
	return mounts[best], true
}

// containsPath reports whether path is dir or below it.
func containsPath(dir, path string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// memoryFSTypes are filesystems whose pages live only in RAM: fdatasync on
// them returns without touching stable storage, so latencies measured there
// say nothing about a disk.
var memoryFSTypes = map[string]bool{
	"tmpfs":     true,
	"ramfs":     true,
	"devtmpfs":  true,
	"rootfs":    true, // the initramfs root, a ramfs or tmpfs
	"hugetlbfs": true,
}

// IsMemoryFS reports whether fsType keeps data only in memory (tmpfs,
// ramfs, devtmpfs...), so that fdatasync reaches no stable storage and a
// benchmark on it measures the page cache, not a disk.
func IsMemoryFS(fsType string) bool {
	return memoryFSTypes[fsType]
}

// pseudoFSTypes are the kernel's interface filesystems: files there are
// views of the kernel's state (processes, devices, cgroups, tracing),
// not storage, and a benchmark has nothing to measure in them.
var pseudoFSTypes = map[string]bool{
	"proc": true, "sysfs": true, "devtmpfs": true, "devpts": true, "cgroup": true, "cgroup2": true,
	"debugfs": true, "tracefs": true, "securityfs": true, "bpf": true, "configfs": true, "pstore": true,
	"efivarfs": true, "mqueue": true, "fusectl": true, "binfmt_misc": true, "autofs": true, "rpc_pipefs": true,
	"nsfs": true, "selinuxfs": true, "hugetlbfs": true,
}

// IsPseudoFS reports whether fsType is one of the kernel's interface
// filesystems (proc, sysfs, devtmpfs, cgroup...) rather than storage.
func IsPseudoFS(fsType string) bool {
	return pseudoFSTypes[fsType]
}
