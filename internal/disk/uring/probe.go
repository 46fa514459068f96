package uring

import (
	"errors"
	"fmt"
)

// probeToken is the userData of Probe's NOP, arbitrary but recognisable.
const probeToken = 0x65746364_62656e63 // "etcdbenc"

// Probe reports whether io_uring works in this process: it creates a
// two-entry ring and round-trips a NOP through it, which also catches
// seccomp profiles that allow io_uring_setup but not io_uring_enter.
// It returns nil when it works, else an error wrapping ErrUnsupported
// that says what failed.
func Probe() error {
	r, err := New(2)
	if err != nil {
		if errors.Is(err, ErrUnsupported) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	if err := nopRoundTrip(r); err != nil {
		return fmt.Errorf("%w: probe: %w", ErrUnsupported, errors.Join(err, r.Close()))
	}
	if err := r.Close(); err != nil {
		return fmt.Errorf("%w: probe: %w", ErrUnsupported, err)
	}
	return nil
}

// nopRoundTrip submits one NOP, waits for it and checks its completion.
func nopRoundTrip(r *Ring) error {
	if !r.PrepNop(probeToken) {
		return errors.New("io_uring: no free SQE in a new ring")
	}
	if _, err := r.Submit(1); err != nil {
		return err
	}
	var c [1]CQE
	if r.Reap(c[:]) != 1 {
		return errors.New("io_uring: NOP submitted and waited for, but no completion arrived")
	}
	if c[0].UserData != probeToken || c[0].Res != 0 {
		return fmt.Errorf("io_uring: NOP completed with userData %#x res %d, want %#x res 0", c[0].UserData, c[0].Res, uint64(probeToken))
	}
	return nil
}
