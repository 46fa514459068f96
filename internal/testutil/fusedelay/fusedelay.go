// Package fusedelay mounts internal/fusedelay's slow-syncing passthrough
// for a test, and skips the test where FUSE cannot be used.
package fusedelay

import (
	"errors"
	"testing"
	"time"

	"etcdbench/internal/fusedelay"
)

// FS is a mounted delaying passthrough (internal/fusedelay's).
type FS = fusedelay.FS

// ErrUnavailable is returned by New when FUSE cannot be used here.
var ErrUnavailable = fusedelay.ErrUnavailable

// Usable reports whether /dev/fuse can be opened, and why not.
func Usable() error { return fusedelay.Usable() }

// New mounts a passthrough of backing at mountpoint whose syncs wait
// delay (internal/fusedelay's New).
func New(backing, mountpoint string, delay time.Duration) (*FS, error) {
	return fusedelay.New(backing, mountpoint, delay)
}

// Mount mounts a passthrough of backing whose syncs wait delay on a new
// directory and returns it; the test's cleanup unmounts it (also when
// the test fails). It skips the test when FUSE cannot be used here.
func Mount(t testing.TB, backing string, delay time.Duration) *FS {
	t.Helper()
	mp := t.TempDir()
	f, err := fusedelay.New(backing, mp, delay)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("skipping: %v (needs /dev/fuse and root or fusermount3)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Registered after TempDir's cleanup, so it runs before it.
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("%v", err)
		}
	})
	return f
}
