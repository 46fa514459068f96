package testutil

import (
	"os"
	"testing"
)

// MemDir is a directory in memory (under /dev/shm) when there is one,
// else t.TempDir(), removed at cleanup: a backing directory whose only
// latency is that of the storage model mounted over it, so a real disk's
// stalls do not blur the truth a test compares with.
func MemDir(t testing.TB, prefix string) string {
	t.Helper()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", prefix)
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}
