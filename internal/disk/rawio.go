package disk

import (
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The raw* functions issue system calls without telling the Go scheduler.
// A normal Go syscall that blocks for more than about 20 us has its P taken
// by the runtime's monitor thread and must get one back with a futex
// wake-up when it returns: extra context switches and a few microseconds
// inside the timed interval of every fdatasync, which fio does not pay
// (bench/wal-vs-fio measured about 1.5 futex calls and 1.4 context switches
// more per sync than fio). A goroutine keeps its P while it waits in one, and
// no other goroutine needs that P meanwhile; the only cost is that a garbage
// collection waits for the current call to return, and the timed loops do
// not allocate. The sequential, recovery and mixed workloads lock their
// goroutines to their threads; the WAL loop yields instead (yieldEvery).

// monotonic reads the runtime's monotonic clock, in nanoseconds (the
// clock behind time.Now's monotonic reading and time.Since).
//
// The timed loops read it right after a raw system call returns, because
// unlike time.Now it is not a preemption point. A goroutine that runs
// without blocking (as a loop of raw calls does, for the scheduler) is
// asked to yield by the runtime's monitor every 10-20 ms with a signal;
// the signal lands while the thread is in the kernel, and the goroutine
// then stops at the first function entry after the call - which was
// time.Now, inside the timed interval. A build that read both clocks
// found 80-91 of the 10,029 fdatasyncs of a 22m run each 10-280 us longer
// by time.Now (the time of being rescheduled, a thread hand-off when the
// goroutine was locked to its thread): about 1 % of the samples, which is
// the p99. runtime.nanotime is one of the runtime's functions kept for
// linkname (go.dev/issue/67401).
//
//go:linkname monotonic runtime.nanotime
func monotonic() int64

// yieldEvery is how often a timed loop gives way to the scheduler between
// two operations (runtime.Gosched), so that the monitor never has to ask
// it to: it asks after 10 ms without one, with a signal that may arrive
// inside a timed call (see monotonic).
const yieldEvery = 2 * time.Millisecond

// rawCall makes a raw system call, retrying it when a signal interrupts it.
// It is nosplit, so it is no preemption point either: a loop that reads
// the clock with monotonic, then calls it, has nothing of the scheduler's
// between its timestamp and the system call.
//
//go:nosplit
func rawCall(trap, a1, a2, a3, a4 uintptr) (uintptr, error) {
	for {
		n, _, e := unix.RawSyscall6(trap, a1, a2, a3, a4, 0, 0)
		switch e {
		case 0:
			return n, nil
		case unix.EINTR:
			continue
		}
		return n, e
	}
}

func bufArgs(b []byte) (uintptr, uintptr) {
	return uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b))
}

func rawWrite(fd int, b []byte) (int, error) {
	p, n := bufArgs(b)
	w, err := rawCall(unix.SYS_WRITE, uintptr(fd), p, n, 0)
	return int(w), err
}

func rawFdatasync(fd int) error {
	_, err := rawCall(unix.SYS_FDATASYNC, uintptr(fd), 0, 0, 0)
	return err
}

func rawPread(fd int, b []byte, off int64) (int, error) {
	p, n := bufArgs(b)
	r, err := rawCall(unix.SYS_PREAD64, uintptr(fd), p, n, uintptr(off))
	return int(r), err
}

func rawPwrite(fd int, b []byte, off int64) (int, error) {
	p, n := bufArgs(b)
	w, err := rawCall(unix.SYS_PWRITE64, uintptr(fd), p, n, uintptr(off))
	return int(w), err
}

// rawWriteFull writes all of b with rawWrite, continuing after a short
// write: the next call then reports why the first stopped (ENOSPC, EDQUOT,
// EFBIG), which is what the user needs to see.
func rawWriteFull(fd int, b []byte) error {
	return writeFullAt(func(fd int, b []byte, _ int64) (int, error) { return rawWrite(fd, b) }, fd, b, 0)
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
