package uring

import "unsafe"

// Kernel ABI from include/uapi/linux/io_uring.h. Only what this package
// uses is declared; the layouts are fixed by the kernel and checked below.

// mmap offsets that select which region of the ring fd is mapped.
const (
	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000
)

// Opcodes (enum io_uring_op).
const (
	opNop   = 0
	opRead  = 22 // since 5.6
	opWrite = 23 // since 5.6
)

// io_uring_params.features bits.
const (
	featSingleMmap = 1 << 0 // 5.4: SQ and CQ rings share one mmap
	featNoDrop     = 1 << 1 // 5.5: CQ overflow is kept, not dropped
	featRWCurPos   = 1 << 3 // 5.6: arrived with IORING_OP_READ/WRITE
)

// requiredFeatures are those without which this engine cannot run:
// IORING_OP_READ/WRITE have no feature bit of their own, but shipped in the
// same release as IORING_FEAT_RW_CUR_POS.
const requiredFeatures = featNoDrop | featRWCurPos

// io_uring_enter flags.
const enterGetEvents = 1 << 0

// SQ ring flags (written by the kernel).
const sqCQOverflow = 1 << 1

// sqringOffsets is struct io_sqring_offsets.
type sqringOffsets struct {
	head        uint32
	tail        uint32
	ringMask    uint32
	ringEntries uint32
	flags       uint32
	dropped     uint32
	array       uint32
	resv1       uint32
	userAddr    uint64
}

// cqringOffsets is struct io_cqring_offsets.
type cqringOffsets struct {
	head        uint32
	tail        uint32
	ringMask    uint32
	ringEntries uint32
	overflow    uint32
	cqes        uint32
	flags       uint32
	resv1       uint32
	userAddr    uint64
}

// params is struct io_uring_params, passed to and filled by io_uring_setup.
type params struct {
	sqEntries    uint32
	cqEntries    uint32
	flags        uint32
	sqThreadCPU  uint32
	sqThreadIdle uint32
	features     uint32
	wqFD         uint32
	resv         [3]uint32
	sqOff        sqringOffsets
	cqOff        cqringOffsets
}

// sqe is struct io_uring_sqe with the unions reduced to the members used
// for NOP, READ and WRITE. It holds no Go pointers, so storing one into
// mmaped memory needs no write barrier.
type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	rwFlags     uint32
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFDIn  int32
	addr3       uint64
	pad2        uint64
}

// CQE is one completion, laid out as struct io_uring_cqe so it can be
// copied straight out of the CQ ring.
type CQE struct {
	// UserData is the value given to the Prep* call of the request.
	UserData uint64
	// Res is the request's result: bytes transferred for reads and writes,
	// or a negated errno (for example -int32(unix.EBADF)).
	Res int32
	// Flags are IORING_CQE_F_* bits; none are used by READ/WRITE/NOP.
	Flags uint32
}

// Compile-time layout checks: a size mismatch makes one of these constant
// subtractions underflow, which does not compile.
const (
	_ uintptr = unsafe.Sizeof(sqe{}) - 64
	_ uintptr = 64 - unsafe.Sizeof(sqe{})
	_ uintptr = unsafe.Sizeof(CQE{}) - 16
	_ uintptr = 16 - unsafe.Sizeof(CQE{})
	_ uintptr = unsafe.Sizeof(params{}) - 120
	_ uintptr = 120 - unsafe.Sizeof(params{})
)
