package uring

import (
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PrepNop queues a request that does nothing and completes with Res 0;
// it is how Probe checks that submissions round-trip. It returns false
// when the submission queue is full (call Submit first) or the ring is
// closed.
func (r *Ring) PrepNop(userData uint64) bool {
	return r.prep(opNop, -1, nil, 0, 0, userData)
}

// PrepRead queues a read of len(buf) bytes at offset off of fd
// (IORING_OP_READ, like pread). Its completion carries userData and, in
// Res, the byte count or a negated errno. buf belongs to the caller and
// must stay alive and untouched until that completion is reaped; for
// O_DIRECT it must also be aligned (see AlignedBuffers). At most
// math.MaxInt32 bytes are requested; longer buffers complete short, as
// the kernel caps any single read anyway. PrepRead returns false when the
// submission queue is full (call Submit first) or the ring is closed.
func (r *Ring) PrepRead(fd int, buf []byte, off int64, userData uint64) bool {
	return r.prep(opRead, fd, unsafe.Pointer(unsafe.SliceData(buf)), len(buf), off, userData)
}

// PrepWrite queues a write of buf at offset off of fd (IORING_OP_WRITE,
// like pwrite), with the same ownership rules, limits and result as
// PrepRead.
func (r *Ring) PrepWrite(fd int, buf []byte, off int64, userData uint64) bool {
	return r.prep(opWrite, fd, unsafe.Pointer(unsafe.SliceData(buf)), len(buf), off, userData)
}

// prep fills the next free SQE and its SQ array slot. The SQE becomes
// visible to the kernel only when Submit publishes the tail.
func (r *Ring) prep(op uint8, fd int, buf unsafe.Pointer, n int, off int64, userData uint64) bool {
	if r.closed || r.sqeTail-atomic.LoadUint32(r.sqHead) >= r.sqEntries {
		return false
	}
	idx := r.sqeTail & r.sqMask
	r.sqes[idx] = sqe{
		opcode:   op,
		fd:       int32(fd),
		off:      uint64(off),
		addr:     uint64(uintptr(buf)),
		len:      uint32(min(n, math.MaxInt32)),
		userData: userData,
	}
	r.sqArray[idx] = idx
	r.pins[idx] = buf
	r.sqeTail++
	return true
}

// Submit publishes every prepared SQE and calls io_uring_enter once to
// submit them; with waitNr > 0 it also waits until at least waitNr
// completions are ready to Reap. It returns how many SQEs the kernel
// consumed, which can be fewer than were prepared: the rest stay queued
// and go with the next Submit. EINTR is retried. Errors are about the ring,
// not the requests: EBUSY or EAGAIN (errors.Is with unix.EBUSY/EAGAIN)
// mean the kernel is short of room for completions; Reap and try again.
func (r *Ring) Submit(waitNr uint32) (int, error) {
	if r.closed {
		return 0, ErrClosed
	}
	// The atomic store orders the plain SQE and array stores made by
	// prep before the tail that tells the kernel they are there.
	atomic.StoreUint32(r.sqTail, r.sqeTail)
	var flags uintptr
	if waitNr > 0 {
		flags = enterGetEvents
	}
	toSubmit := r.sqeTail - atomic.LoadUint32(r.sqHead)
	if toSubmit == 0 && waitNr == 0 {
		return 0, nil
	}
	submitted := 0
	for {
		n, errno := r.enter(toSubmit, waitNr, flags)
		switch errno {
		case 0:
			submitted += int(n)
			// io_uring_enter returns the number submitted even when a
			// signal cut its wait short (Go's preemption signals do), so
			// the wait is checked here and resumed, without submitting
			// again, if it is not met.
			if waitNr == 0 || r.ready() >= waitNr {
				return submitted, nil
			}
			toSubmit = 0
		case unix.EINTR:
			toSubmit = r.sqeTail - atomic.LoadUint32(r.sqHead)
		default:
			return submitted, fmt.Errorf("io_uring_enter(submit %d, wait %d): %w", toSubmit, waitNr, errno)
		}
	}
}

// ready is the number of completions waiting in the CQ ring.
func (r *Ring) ready() uint32 {
	return atomic.LoadUint32(r.cqTail) - atomic.LoadUint32(r.cqHead)
}

// Reap copies up to len(cqes) ready completions into cqes, frees their
// CQ slots and returns how many it copied. It never blocks; 0 means
// nothing is ready yet. When completions overflowed the CQ ring (more in
// flight than it holds), Reap asks the kernel to flush them back with a
// non-waiting io_uring_enter; should that fail, the completions stay
// queued in the kernel and WaitCQE reports the error.
func (r *Ring) Reap(cqes []CQE) int {
	if r.closed || len(cqes) == 0 {
		return 0
	}
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail)
	if head == tail {
		if atomic.LoadUint32(r.sqFlags)&sqCQOverflow == 0 {
			return 0
		}
		_, _ = r.enter(0, 0, enterGetEvents)
		tail = atomic.LoadUint32(r.cqTail)
	}
	n := 0
	for ; head != tail && n < len(cqes); n++ {
		cqes[n] = r.cqes[head&r.cqMask]
		head++
	}
	// Release the slots only after the copies: the kernel may reuse
	// them as soon as it sees the new head.
	atomic.StoreUint32(r.cqHead, head)
	return n
}

// WaitCQE blocks until at least one completion is ready to Reap, for
// callers that have already submitted. It returns at once if one is
// ready; it blocks forever if nothing is in flight. EINTR is retried.
func (r *Ring) WaitCQE() error {
	if r.closed {
		return ErrClosed
	}
	for {
		if atomic.LoadUint32(r.cqTail) != atomic.LoadUint32(r.cqHead) {
			return nil
		}
		_, errno := r.enter(0, 1, enterGetEvents)
		switch errno {
		case 0, unix.EINTR:
			continue
		}
		return fmt.Errorf("io_uring_enter(wait 1): %w", errno)
	}
}
