// Package uring is a minimal io_uring engine written directly on
// golang.org/x/sys/unix, enough to run fio-style random O_DIRECT reads and
// writes at a queue depth (fio --ioengine=io_uring).
//
// A Ring is one submission queue (SQ) and one completion queue (CQ) shared
// with the kernel through three mmaped regions (two when the kernel
// reports IORING_FEAT_SINGLE_MMAP). The life of a request is:
//
//	r.PrepRead(fd, buf, off, userData) // fill the next SQE; false when the SQ is full
//	r.Submit(waitNr)                    // io_uring_enter: hand the prepared SQEs to the kernel
//	r.Reap(cqes)                        // copy finished requests out of the CQ, never blocks
//	r.WaitCQE()                         // block until at least one completion is ready
//
// Per-request failures (a bad descriptor, an unaligned O_DIRECT buffer, a
// short read) are not Go errors: they arrive as a negative errno or a short
// count in CQE.Res, exactly as the kernel reports them. Go errors are
// reserved for the ring itself (setup refused, io_uring_enter failing).
//
// Ownership of buffers: the kernel reads or writes a buffer asynchronously,
// after Prep* and Submit have returned, until its completion is reaped.
// The caller owns every buffer and must keep it alive and untouched until
// then. Buffers from AlignedBuffers live outside the Go heap (anonymous
// mmap, page-aligned as O_DIRECT needs), so the garbage collector never
// sees them; this is what etcdbench uses.
//
// Memory ordering follows the kernel ABI: SQE contents are written with
// plain stores and published by an atomic store of the SQ tail; the CQ
// tail is read with an atomic load before the CQEs are copied, and the CQ
// head is released with an atomic store after. Go's sync/atomic operations
// are sequentially consistent, which is at least as strong as the
// acquire/release pairs liburing uses.
//
// Availability: io_uring is refused by old kernels (ENOSYS), by
// kernel.io_uring_disabled, and by container seccomp profiles (EPERM).
// New and Probe report these as ErrUnsupported so callers can fall back to
// pread/pwrite; anything else is a real error.
//
// A Ring is not safe for concurrent use: one goroutine drives one ring, as
// one fio job drives one ring. The hot path (Prep*, Submit, Reap) takes no
// locks and does not allocate.
package uring
