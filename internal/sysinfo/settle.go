package sysinfo

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// settlePoll is how often Settle reads /proc/diskstats.
const settlePoll = 50 * time.Millisecond

// Settle flushes the filesystem under dir (syncfs) and waits until
// device (its name in /proc/diskstats, "" for none known) has no I/O in
// flight and has completed no write for quiet, at most bound: what one
// measurement left in the page cache and the device's queue must not
// land in the next. It says whether the device settled in time.
func Settle(ctx context.Context, root, dir, device string, quiet, bound time.Duration) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	err = unix.Syncfs(int(f.Fd()))
	f.Close()
	if err != nil || device == "" {
		return err == nil, err
	}
	deadline := time.Now().Add(bound)
	var last uint64
	still := time.Now()
	for {
		b, err := os.ReadFile(filepath.Join(root, "proc", "diskstats"))
		if err != nil {
			return false, err
		}
		all, err := ParseDiskstats(b)
		if err != nil {
			return false, err
		}
		s, ok := all[device]
		if !ok {
			return false, nil
		}
		if s.InFlight > 0 || s.WriteIOs != last {
			last, still = s.WriteIOs, time.Now()
		} else if time.Since(still) >= quiet {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(settlePoll):
		}
	}
}
