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
func Layout(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	return fill(f, size)
}

// fill writes size bytes to f as Layout describes and closes it.
func fill(f *os.File, size int64) (err error) {
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("closing %s: %w", f.Name(), cerr)
		}
	}()
	chunk := make([]byte, mib)
	if _, err := rand.Read(chunk); err != nil {
		return err
	}
	for off := int64(0); off < size; off += mib {
		n := min(mib, size-off)
		if _, err := f.WriteAt(chunk[:n], off); err != nil {
			return fmt.Errorf("writing %s: %w", f.Name(), err)
		}
	}
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return fmt.Errorf("fdatasync %s: %w", f.Name(), err)
	}
	return nil
}

// WarmPageCache writes a file of size bytes in dir, as Layout does, and
// removes it, so that the pages the next buffered writer gets for its page
// cache are ones this process has just used and freed. On a VM whose
// balloon driver reports free pages to the host (virtio_balloon free page
// reporting, after about 2 s), memory freed a few seconds ago is given
// back and costs a host fault per page when it is written again: on the
// Firecracker test VM a cold 256 MiB buffered write took 1.0 s of system
// time (89 % in copy_folio_from_iter_atomic), a warm one 0.1 s. Warming
// just before each tool's buffered-write run gives both the same memory.
func WarmPageCache(dir string, size int64) (err error) {
	f, err := os.CreateTemp(dir, "warm-")
	if err != nil {
		return fmt.Errorf("creating a warm-up file in %s: %w", dir, err)
	}
	defer func() {
		if rerr := os.Remove(f.Name()); rerr != nil {
			err = errors.Join(err, fmt.Errorf("removing the warm-up file: %w", rerr))
		}
	}()
	return fill(f, size)
}

// TempSub makes a fresh subdirectory of dir for one fio run and returns it
// with a func that removes it, adding a failure to *err:
// `defer done(&err)`.
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
