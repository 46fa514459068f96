// Package loopmount is a test helper: it makes a small filesystem image in
// the test's temporary directory, attaches it to a loop device and mounts
// it with the options a test asks for (ext4 with barrier=0, btrfs with
// nobarrier...), so that storage rules can be tried on real mounts. Every
// mount and loop device is undone in t.Cleanup; a test skips, with the
// reason, where root, loop devices or the mkfs tool are missing.
package loopmount

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Mounted is a loop-mounted image.
type Mounted struct {
	Dir   string // the mount point
	Image string // the image file
	Loop  string // the loop device, e.g. /dev/loop3
}

// Mount makes a size-byte image of fsType inside dir (t.TempDir() when
// dir is ""), attaches it to a free loop device and mounts it at a new
// directory with data as the mount's option string (e.g. "barrier=0").
func Mount(t *testing.T, dir, fsType, data string, size int64) Mounted {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: loop mounts need root")
	}
	mkfs, err := exec.LookPath("mkfs." + fsType)
	if err != nil {
		t.Skipf("skipped: mkfs.%s not installed", fsType)
	}
	if dir == "" {
		dir = t.TempDir()
	}
	img := filepath.Join(dir, fsType+".img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		t.Fatal(err)
	}
	f.Close()
	t.Cleanup(func() { os.Remove(img) })
	args := []string{"-q", img}
	switch fsType {
	case "ext4", "ext3":
		args = []string{"-q", "-F", img}
	case "xfs", "btrfs":
		args = []string{"-q", "-f", img}
	}
	if out, err := exec.Command(mkfs, args...).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.%s %s: %v: %s", fsType, img, err, out)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).CombinedOutput()
	if err != nil {
		t.Skipf("skipped: no loop device (losetup --find --show %s: %v: %s)", img, err, strings.TrimSpace(string(out)))
	}
	loop := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", loop).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", loop, err, out)
		}
	})
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(loop, mnt, fsType, 0, data); err != nil {
		t.Skipf("skipped: mount -t %s -o %q %s %s: %v", fsType, data, loop, mnt, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, 0); err != nil {
			t.Errorf("unmounting %s: %v", mnt, err)
			_ = unix.Unmount(mnt, unix.MNT_DETACH)
		}
	})
	return Mounted{Dir: mnt, Image: img, Loop: loop}
}

// Tmpfs mounts a tmpfs of size bytes on a new directory.
func Tmpfs(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("skipped: cannot mount a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
			_ = unix.Unmount(dir, unix.MNT_DETACH)
		}
	})
	return dir
}

// Overlay mounts an overlay whose lower, upper and work directories are
// new directories, and returns its mount point: a container's writable
// layer in miniature.
func Overlay(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting an overlay needs root")
	}
	base := t.TempDir()
	var dirs []string
	for _, d := range []string{"lower", "upper", "work", "merged"} {
		p := filepath.Join(base, d)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, p)
	}
	data := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", dirs[0], dirs[1], dirs[2])
	if err := unix.Mount("overlay", dirs[3], "overlay", 0, data); err != nil {
		t.Skipf("skipped: cannot mount an overlay: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dirs[3], 0); err != nil {
			t.Errorf("unmounting %s: %v", dirs[3], err)
			_ = unix.Unmount(dirs[3], unix.MNT_DETACH)
		}
	})
	return dirs[3]
}
