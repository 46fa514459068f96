package disk

import (
	"errors"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawWrite and rawFdatasync issue write(2) and fdatasync(2) as raw system
// calls, without telling the Go scheduler. A normal Go syscall that blocks
// for more than about 20 us has its P taken by the runtime's monitor thread
// and must get one back with a futex wake-up when it returns: extra context
// switches and a few microseconds inside the timed interval of every
// fdatasync, which fio does not pay (bench/wal-vs-fio measured about 1.5
// futex calls and 1.4 context switches more per sync than fio). The WAL
// loop runs on its own locked OS thread and no other goroutine needs its P
// while it waits; the only cost is that a garbage collection waits for the
// current fdatasync to return, and the loop does not allocate.
func rawWrite(fd int, b []byte) (int, error) {
	for {
		n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
		switch {
		case e == 0:
			return int(n), nil
		case errors.Is(e, unix.EINTR):
			continue
		}
		return int(n), e
	}
}

func rawFdatasync(fd int) error {
	for {
		_, _, e := unix.RawSyscall(unix.SYS_FDATASYNC, uintptr(fd), 0, 0)
		switch {
		case e == 0:
			return nil
		case errors.Is(e, unix.EINTR):
			continue
		}
		return e
	}
}

// rawWriteFull writes all of b with rawWrite, continuing after a short
// write: the next call then reports why the first stopped (ENOSPC, EDQUOT,
// EFBIG), which is what the user needs to see.
func rawWriteFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := rawWrite(fd, b)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrShortWrite
		}
		b = b[n:]
	}
	return nil
}

// pwriteFull writes all of b at off, continuing after a short write so that
// the error that cut it short is reported.
func pwriteFull(fd int, b []byte, off int64) error {
	return writeFullAt(unix.Pwrite, fd, b, off)
}

// rawPwriteFull is pwriteFull with raw system calls.
func rawPwriteFull(fd int, b []byte, off int64) error {
	return writeFullAt(rawPwrite, fd, b, off)
}

func writeFullAt(pwrite func(int, []byte, int64) (int, error), fd int, b []byte, off int64) error {
	for len(b) > 0 {
		n, err := pwrite(fd, b, off)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrShortWrite
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

// rawPread and rawPwrite are pread(2) and pwrite(2) as raw system calls,
// for workers locked to their own thread (see rawWrite for why).
func rawPread(fd int, b []byte, off int64) (int, error) {
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(off), 0, 0)
		switch {
		case e == 0:
			return int(n), nil
		case errors.Is(e, unix.EINTR):
			continue
		}
		return int(n), e
	}
}

func rawPwrite(fd int, b []byte, off int64) (int, error) {
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_PWRITE64, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(off), 0, 0)
		switch {
		case e == 0:
			return int(n), nil
		case errors.Is(e, unix.EINTR):
			continue
		}
		return int(n), e
	}
}

// withThreads runs f with GOMAXPROCS raised to at least n, so that n
// goroutines blocked in raw system calls each keep a P and the rest of the
// program still has one, and restores the old value afterwards.
func withThreads(n int, f func()) {
	if prev := runtime.GOMAXPROCS(0); prev < n {
		runtime.GOMAXPROCS(n)
		defer runtime.GOMAXPROCS(prev)
	}
	f()
}
