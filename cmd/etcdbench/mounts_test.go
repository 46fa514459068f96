package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mountTmpfs mounts a tmpfs with data (e.g. "size=2m") and flags on a new
// directory and unmounts it when the test ends. It skips the test when the
// mount is not possible (not root, or no mount permission).
func mountTmpfs(t *testing.T, flags uintptr, data string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", flags, data); err != nil {
		t.Skipf("skipped: cannot mount a tmpfs on %s (%v); this test needs root with mount permission", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
			_ = unix.Unmount(dir, unix.MNT_DETACH)
		}
	})
	return dir
}

// worldTempDir returns a new directory owned by root with mode 0755 whose
// path every user can traverse (t.TempDir's parents are 0700).
func worldTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "etcdbench-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRuntimeErrors runs the check where it cannot be done: each must exit 3
// with one line that names the problem, and leave the directory as it was.
func TestRuntimeErrors(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T) (string, runOpts)
		args    []string
		wantMsg string
	}{
		{
			name: "not enough free space, adaptive",
			setup: func(t *testing.T) (string, runOpts) {
				return mountTmpfs(t, 0, "size=2m"), runOpts{}
			},
			wantMsg: "not enough free space",
		},
		{
			name: "not enough free space, --size larger than the filesystem",
			setup: func(t *testing.T) (string, runOpts) {
				return mountTmpfs(t, 0, "size=2m"), runOpts{}
			},
			args:    []string{"--size", "3m"},
			wantMsg: "not enough free space",
		},
		{
			name: "read-only filesystem",
			setup: func(t *testing.T) (string, runOpts) {
				return mountTmpfs(t, unix.MS_RDONLY, "size=16m"), runOpts{}
			},
			args:    []string{"--count", "200"},
			wantMsg: "read-only",
		},
		{
			// Too small for the default run as well: read-only is the
			// reason to say, not the space.
			name: "small read-only filesystem",
			setup: func(t *testing.T) (string, runOpts) {
				return mountTmpfs(t, unix.MS_RDONLY, "size=10m"), runOpts{}
			},
			wantMsg: "read-only",
		},
		{
			name: "no write permission",
			setup: func(t *testing.T) (string, runOpts) {
				if os.Geteuid() != 0 {
					t.Skip("skipped: running as another user needs root")
				}
				d := worldTempDir(t)
				return d, runOpts{dir: d, cred: &syscall.Credential{Uid: 65534, Gid: 65534}}
			},
			args:    []string{"--count", "200"},
			wantMsg: "permission",
		},
		{
			name: "directory not searchable",
			setup: func(t *testing.T) (string, runOpts) {
				if os.Geteuid() != 0 {
					t.Skip("skipped: running as another user needs root")
				}
				d := filepath.Join(worldTempDir(t), "private")
				if err := os.Mkdir(d, 0o700); err != nil {
					t.Fatal(err)
				}
				return d, runOpts{cred: &syscall.Credential{Uid: 65534, Gid: 65534}}
			},
			args:    []string{"--count", "200"},
			wantMsg: "permission",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, o := tc.setup(t)
			before := snapshot(t, d)
			res := runBin(t, o, append([]string{"disk", "wal", "--dir", d, "--no-progress"}, tc.args...)...)
			if res.code != exitRuntime {
				t.Errorf("exit code %d, want %d; stdout:\n%s\nstderr:\n%s", res.code, exitRuntime, res.stdout, res.stderr)
			}
			checkOneErrorLine(t, res.stderr)
			if !strings.Contains(res.stderr, tc.wantMsg) {
				t.Errorf("stderr does not mention %q: %s", tc.wantMsg, res.stderr)
			}
			checkNoScratch(t, d)
			checkSnapshot(t, d, before)
		})
	}
}

// TestNoSpaceDuringRun fills the filesystem while a time-based run writes on
// it: the next segment cannot be allocated, and the run must stop with exit
// 3, one line naming ENOSPC, and no scratch directory left.
func TestNoSpaceDuringRun(t *testing.T) {
	m := mountTmpfs(t, 0, "size=200m")
	p := start(t, runOpts{}, "disk", "wal", "--dir", m, "--runtime", "30s", "--time-based", "--no-progress")
	waitScratch(t, p, m)

	fill := filepath.Join(m, "fill")
	f, err := os.OpenFile(fill, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.Close()
		os.Remove(fill)
	})
	// Keep taking every byte that becomes free (the run deletes a finished
	// segment before it allocates the next), until the run ends.
	buf := make([]byte, 64<<10)
	full := false
	deadline := time.Now().Add(45 * time.Second)
	for !p.exited() && time.Now().Before(deadline) {
		_, err := f.Write(buf)
		switch {
		case errors.Is(err, syscall.ENOSPC):
			full = true
			// Not a wait for a condition: this loop races the run for
			// every byte it frees, so it retries at once, only yielding
			// the CPU for a moment between two tries.
			time.Sleep(50 * time.Microsecond)
		case err != nil:
			t.Fatalf("filling %s: %v", m, err)
		}
	}
	if !full {
		t.Errorf("the filesystem never filled up")
	}
	if !p.exited() {
		p.signal(t, syscall.SIGKILL)
		t.Fatalf("etcdbench still running 45 s after the filesystem filled up")
	}
	res := p.wait(t)
	t.Logf("stderr: %s", res.stderr)
	if res.code != exitRuntime {
		t.Errorf("exit code %d, want %d; stdout:\n%s\nstderr:\n%s", res.code, exitRuntime, res.stdout, res.stderr)
	}
	checkOneErrorLine(t, res.stderr)
	if !strings.Contains(res.stderr, "no space left on device") {
		t.Errorf("stderr does not mention \"no space left on device\": %s", res.stderr)
	}
	checkNoScratch(t, m)
}
