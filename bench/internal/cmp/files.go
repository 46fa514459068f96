package cmp

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

const mib = 1 << 20

// Layout writes a new file of size bytes at path the way etcdbench's disk
// workloads prepare theirs (internal/disk writeFile): one MiB of random
// bytes written over and over with pwrite, then one fdatasync. A fio job
// given this file by --filename finds it at its full size and does not lay
// it out itself, so fio's CPU time no longer includes the preparation and
// both tools work on files written alike.
func Layout(path string, size int64) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("closing %s: %w", path, cerr)
		}
	}()
	chunk := make([]byte, mib)
	if _, err := rand.Read(chunk); err != nil {
		return err
	}
	for off := int64(0); off < size; off += mib {
		n := min(mib, size-off)
		if _, err := f.WriteAt(chunk[:n], off); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return fmt.Errorf("fdatasync %s: %w", path, err)
	}
	return nil
}

// TempSub makes a fresh subdirectory of dir for one fio run and returns it
// with a func that removes it, reporting a failure through *err unless it
// already holds one: `defer done(&err)`.
func TempSub(dir, prefix string) (string, func(*error), error) {
	sub, err := os.MkdirTemp(dir, prefix)
	if err != nil {
		return "", nil, fmt.Errorf("creating a directory for fio in %s: %w", dir, err)
	}
	return sub, func(err *error) {
		if rerr := os.RemoveAll(sub); rerr != nil {
			*err = errors.Join(*err, fmt.Errorf("removing fio's files: %w", rerr))
		}
	}, nil
}
