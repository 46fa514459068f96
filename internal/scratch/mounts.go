package scratch

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"etcdbench/internal/sysinfo"
)

// mountsBelow are the mount points at or below path in mounts, the
// deepest first (the order they can be unmounted in).
func mountsBelow(mounts []sysinfo.Mount, path string) []string {
	var out []string
	for _, m := range mounts {
		if m.MountPoint == path || strings.HasPrefix(m.MountPoint, path+"/") {
			out = append(out, m.MountPoint)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// detachMounts lazily unmounts every filesystem mounted at or below
// path: one a killed run left there (a drill's slow disks on FUSE,
// whose server died with it) would stop the directory's removal.
func detachMounts(path string) error {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil // no /proc: no mount known to be there
	}
	ms, err := sysinfo.ParseMountInfo(b)
	if err != nil {
		return err
	}
	var errs []error
	for _, mp := range mountsBelow(ms, path) {
		if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", mp, err))
		}
	}
	return errors.Join(errs...)
}
