package headroom

import (
	"fmt"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"etcdbench/internal/sysinfo"
)

// VolumeOf finds the volume under a process's data dir, as the process
// sees it (through root/proc/PID/root, so across mount namespaces), and
// the whole disk whose /proc/diskstats counters it has. note says why a
// block device is missing, or a caveat about it.
func VolumeOf(root string, pid int, dataDir string) (vol Volume, disk, note string, err error) {
	var st unix.Stat_t
	p := filepath.Join(root, "proc", strconv.Itoa(pid), "root", dataDir)
	if err := unix.Stat(p, &st); err != nil {
		return Volume{}, "", "", fmt.Errorf("data dir not found: %w", err)
	}
	vol.Filesystem = fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	d, notes := sysinfo.BlockDevice(root, st.Dev)
	if len(notes) > 0 {
		note = notes[0]
	}
	if d != nil {
		vol.Device, disk = deviceName(*d), d.Name
	}
	return vol, disk, note, nil
}
