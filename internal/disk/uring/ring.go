package uring

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrUnsupported means io_uring cannot be used in this process: the kernel
// lacks it or the features this package needs, or a policy
// (kernel.io_uring_disabled, a seccomp profile) refuses it. Callers check
// it with errors.Is and fall back to pread/pwrite.
var ErrUnsupported = errors.New("io_uring is not available")

// ErrClosed is returned by Submit and WaitCQE on a Ring after Close.
var ErrClosed = errors.New("io_uring ring is closed")

// Ring is one io_uring instance: a submission queue and a completion queue
// shared with the kernel. It is not safe for concurrent use; drive each
// Ring from a single goroutine.
type Ring struct {
	fd     int
	closed bool
	raw    bool // io_uring_enter as a raw system call (see UseRawSyscalls)

	// Mappings, kept for munmap. cqMap is nil when the CQ ring shares
	// sqMap (IORING_FEAT_SINGLE_MMAP).
	sqMap, cqMap, sqeMap []byte

	// SQ ring, inside sqMap. sqHead is advanced by the kernel as it
	// consumes SQEs; sqTail is published by Submit.
	sqHead, sqTail, sqFlags *uint32
	sqMask, sqEntries       uint32
	sqArray                 []uint32
	sqes                    []sqe
	// sqeTail counts SQEs prepared so far; it runs ahead of *sqTail
	// until Submit publishes it.
	sqeTail uint32
	// pins holds the buffer of each SQE slot as a Go pointer so that a
	// buffer handed to the kernel escapes to the heap (never on a
	// movable goroutine stack) and stays reachable at least until its
	// slot is reused. Callers must still keep buffers alive until their
	// completion is reaped.
	pins []unsafe.Pointer

	// CQ ring, inside cqMap (or sqMap). cqTail is advanced by the
	// kernel; cqHead is released by Reap.
	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []CQE
}

// New creates a ring with room for at least entries submissions in flight
// (the kernel rounds up to a power of two; see Entries). The completion
// queue is twice that size. When the kernel or a policy refuses io_uring,
// the error wraps ErrUnsupported and the errno from io_uring_setup.
func New(entries uint32) (*Ring, error) {
	var p params
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, setupError(entries, errno)
	}
	r := &Ring{fd: int(fd)}
	if missing := requiredFeatures &^ p.features; missing != 0 {
		_ = r.Close() // the refusal below is the error that matters
		return nil, fmt.Errorf("%w: kernel io_uring features %#x lack %#x (IORING_OP_READ/WRITE need Linux 5.6 or later)",
			ErrUnsupported, p.features, missing)
	}
	if err := r.mapRings(&p); err != nil {
		return nil, errors.Join(err, r.Close())
	}
	return r, nil
}

// setupError turns an io_uring_setup errno into an error that says what
// to do about it, wrapping ErrUnsupported for the errnos that mean
// "io_uring is not allowed here" and, always, the errno itself.
func setupError(entries uint32, errno unix.Errno) error {
	var hint string
	switch errno {
	case unix.ENOSYS:
		hint = "kernel without io_uring, or the syscall is filtered; use pread/pwrite"
	case unix.EPERM:
		hint = "refused by kernel.io_uring_disabled or a seccomp/container profile; use pread/pwrite"
	case unix.EACCES:
		hint = "refused by a security module; use pread/pwrite"
	case unix.EINVAL:
		return fmt.Errorf("io_uring_setup(%d entries): %w (entries must be 1..32768)", entries, errno)
	case unix.ENOMEM:
		return fmt.Errorf("io_uring_setup(%d entries): %w (raise RLIMIT_MEMLOCK on kernels before 5.12, or use fewer entries)", entries, errno)
	default:
		return fmt.Errorf("io_uring_setup(%d entries): %w", entries, errno)
	}
	return fmt.Errorf("%w: io_uring_setup(%d entries): %w (%s)", ErrUnsupported, entries, errno, hint)
}

// mapRings maps the SQ ring, CQ ring and SQE array described by p and
// derives the pointers into them.
func (r *Ring) mapRings(p *params) error {
	const prot = unix.PROT_READ | unix.PROT_WRITE
	const flags = unix.MAP_SHARED | unix.MAP_POPULATE
	sqSize := int(p.sqOff.array) + int(p.sqEntries)*int(unsafe.Sizeof(uint32(0)))
	cqSize := int(p.cqOff.cqes) + int(p.cqEntries)*int(unsafe.Sizeof(CQE{}))
	single := p.features&featSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	if r.sqMap, err = unix.Mmap(r.fd, offSQRing, sqSize, prot, flags); err != nil {
		return fmt.Errorf("io_uring: mmap SQ ring (%d bytes): %w", sqSize, err)
	}
	cq := r.sqMap
	if !single {
		if r.cqMap, err = unix.Mmap(r.fd, offCQRing, cqSize, prot, flags); err != nil {
			return fmt.Errorf("io_uring: mmap CQ ring (%d bytes): %w", cqSize, err)
		}
		cq = r.cqMap
	}
	sqeSize := int(p.sqEntries) * int(unsafe.Sizeof(sqe{}))
	if r.sqeMap, err = unix.Mmap(r.fd, offSQEs, sqeSize, prot, flags); err != nil {
		return fmt.Errorf("io_uring: mmap SQE array (%d bytes): %w", sqeSize, err)
	}

	sq := r.sqMap
	r.sqHead = u32At(sq, p.sqOff.head)
	r.sqTail = u32At(sq, p.sqOff.tail)
	r.sqFlags = u32At(sq, p.sqOff.flags)
	r.sqMask = *u32At(sq, p.sqOff.ringMask)
	r.sqEntries = *u32At(sq, p.sqOff.ringEntries)
	r.sqArray = unsafe.Slice(u32At(sq, p.sqOff.array), r.sqEntries)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&r.sqeMap[0])), r.sqEntries)
	r.sqeTail = *r.sqTail
	r.pins = make([]unsafe.Pointer, r.sqEntries)

	r.cqHead = u32At(cq, p.cqOff.head)
	r.cqTail = u32At(cq, p.cqOff.tail)
	r.cqMask = *u32At(cq, p.cqOff.ringMask)
	cqEntries := *u32At(cq, p.cqOff.ringEntries)
	r.cqes = unsafe.Slice((*CQE)(unsafe.Pointer(&cq[p.cqOff.cqes])), cqEntries)
	return nil
}

// u32At points at the 32-bit ring field at byte offset off of m.
func u32At(m []byte, off uint32) *uint32 {
	return (*uint32)(unsafe.Pointer(&m[off]))
}

// Entries is the size of the submission queue: how many requests can be
// prepared before Submit, and the largest useful queue depth.
func (r *Ring) Entries() uint32 { return r.sqEntries }

// Close unmaps the rings and closes the ring descriptor; the kernel
// cancels or finishes requests still in flight. Reap every completion
// before Close, and keep their buffers until then. Close is idempotent.
func (r *Ring) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	for _, m := range [][]byte{r.sqeMap, r.cqMap, r.sqMap} {
		if m != nil {
			if err := unix.Munmap(m); err != nil {
				errs = append(errs, fmt.Errorf("io_uring: munmap ring: %w", err))
			}
		}
	}
	r.sqMap, r.cqMap, r.sqeMap = nil, nil, nil
	r.sqHead, r.sqTail, r.sqFlags, r.cqHead, r.cqTail = nil, nil, nil, nil, nil
	r.sqArray, r.sqes, r.cqes, r.pins = nil, nil, nil, nil
	if err := unix.Close(r.fd); err != nil {
		errs = append(errs, fmt.Errorf("io_uring: close ring fd %d: %w", r.fd, err))
	}
	r.fd = -1
	return errors.Join(errs...)
}

// UseRawSyscalls makes Submit, Reap and WaitCQE call io_uring_enter as a
// raw system call, which does not tell the Go scheduler that the thread
// blocks. An ordinary system call that blocks lets the runtime hand the
// thread's P to another thread, and taking one back costs a futex wake-up
// and context switches on every wait: with several rings on few CPUs that
// costs more CPU per I/O than fio spends (bench/mixed-vs-fio). Use it only
// on a goroutine locked to its OS thread, with GOMAXPROCS above the number
// of such goroutines; a garbage collection then waits for a blocked wait to
// return.
func (r *Ring) UseRawSyscalls() { r.raw = true }

// enter calls io_uring_enter.
func (r *Ring) enter(toSubmit, minComplete uint32, flags uintptr) (uintptr, unix.Errno) {
	if r.raw {
		n, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), uintptr(minComplete), flags, 0, 0)
		return n, errno
	}
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), uintptr(minComplete), flags, 0, 0)
	return n, errno
}
