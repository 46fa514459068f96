package uring

import (
	"fmt"
	"math"

	"golang.org/x/sys/unix"
)

// directAlign is the alignment O_DIRECT asks of buffers, offsets and
// lengths on every common device (logical blocks are 512 B or 4 KiB).
const directAlign = 4096

// AlignedBuffers maps n*size bytes of anonymous memory, page-aligned and
// outside the Go heap, and returns it cut into n buffers of size bytes
// (size a positive multiple of 4096, so every buffer suits O_DIRECT).
// Each buffer's capacity ends where the next begins. The returned func
// unmaps the memory; call it once no request uses the buffers (it is
// idempotent). The memory is prefaulted so first use does not page-fault
// inside a timed request.
func AlignedBuffers(n, size int) ([][]byte, func() error, error) {
	if n <= 0 || size <= 0 || size%directAlign != 0 || n > math.MaxInt/size {
		return nil, nil, fmt.Errorf("io_uring buffers(%d, %d): want n > 0 and size a positive multiple of %d", n, size, directAlign)
	}
	mem, err := unix.Mmap(-1, 0, n*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return nil, nil, fmt.Errorf("io_uring buffers: mmap %d bytes: %w", n*size, err)
	}
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = mem[i*size : (i+1)*size : (i+1)*size]
	}
	unmapped := false
	unmap := func() error {
		if unmapped {
			return nil
		}
		unmapped = true
		if err := unix.Munmap(mem); err != nil {
			return fmt.Errorf("io_uring buffers: munmap: %w", err)
		}
		return nil
	}
	return bufs, unmap, nil
}
