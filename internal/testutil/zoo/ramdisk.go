package zoo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// RAMDisk is an ext4 filesystem on a loop device whose image lives in
// /dev/shm: a block device of its own, in memory. The zoo's storages
// built on it are bent by their limits alone: the other processes on a
// shared machine's disk neither slow its syncs nor show in its
// /proc/diskstats line, which then counts only what runs on it.
type RAMDisk struct {
	// Dir is the mount point.
	Dir string
	// Loop is the loop device, e.g. /dev/loop0.
	Loop  string
	image string
}

// NewRAMDisk makes a RAM disk of size bytes. It fails with ErrUnavailable
// without root, losetup or mkfs.ext4.
func NewRAMDisk(ctx context.Context, size int64) (d *RAMDisk, err error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: a loop device needs root", ErrUnavailable)
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%w: %s not found", ErrUnavailable, tool)
		}
	}
	d = &RAMDisk{}
	defer func() {
		if err != nil {
			err = errors.Join(err, d.Close())
		}
	}()
	img, err := os.CreateTemp("/dev/shm", "zoo-ramdisk-*.img")
	if err != nil {
		return d, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	d.image = img.Name()
	if err := errors.Join(img.Truncate(size), img.Close()); err != nil {
		return d, err
	}
	run := func(name string, args ...string) (string, error) {
		b, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("zoo: %s %s: %v: %s", name, strings.Join(args, " "), err, b)
		}
		return strings.TrimSpace(string(b)), nil
	}
	if _, err := run("mkfs.ext4", "-q", "-F", d.image); err != nil {
		return d, err
	}
	if d.Loop, err = run("losetup", "--find", "--show", d.image); err != nil {
		return d, err
	}
	if d.Dir, err = os.MkdirTemp("", "zoo-ramdisk-"); err != nil {
		return d, err
	}
	if _, err := run("mount", d.Loop, d.Dir); err != nil {
		return d, err
	}
	return d, nil
}

// Close unmounts the RAM disk, detaches its loop device and frees it.
func (d *RAMDisk) Close() error {
	var errs []error
	if d.Dir != "" {
		if b, err := exec.Command("umount", d.Dir).CombinedOutput(); err != nil && isMounted(d.Dir) {
			errs = append(errs, fmt.Errorf("zoo: umount %s: %v: %s", d.Dir, err, b))
		} else {
			errs = append(errs, os.Remove(d.Dir))
		}
	}
	if d.Loop != "" {
		if b, err := exec.Command("losetup", "-d", d.Loop).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("zoo: losetup -d %s: %v: %s", d.Loop, err, b))
		}
	}
	if d.image != "" {
		errs = append(errs, os.Remove(d.image))
	}
	return errors.Join(errs...)
}

// isMounted reports whether dir is a mount point in /proc/self/mountinfo.
func isMounted(dir string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return true
	}
	dir = filepath.Clean(dir)
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && unescapeMount(f[4]) == dir {
			return true
		}
	}
	return false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
