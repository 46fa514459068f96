package sysinfo

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// ProcStat holds the fields of a /proc/PID/stat line that etcdbench reads.
type ProcStat struct {
	// State is the process state: R running, S sleeping, D disk sleep,
	// Z zombie (exited, not yet reaped), X dead...
	State byte
	// UTimeTicks and STimeTicks are the user and system CPU time of all
	// the process's threads, in clock ticks (USER_HZ, 100 per second).
	UTimeTicks, STimeTicks uint64
	// StartTicks is when the process started, in clock ticks since boot:
	// with the pid, it tells a process from a later one with its pid.
	StartTicks uint64
}

// ErrProcStat is returned for a /proc/PID/stat line that does not parse.
var ErrProcStat = errors.New("malformed /proc stat line")

// ParseProcStat reads a /proc/PID/stat line. The command name (field 2)
// may contain spaces and parentheses, so fields are counted after its last
// ')': the state is field 3, utime 14, stime 15, starttime 22 (proc(5)).
func ParseProcStat(b []byte) (ProcStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ProcStat{}, fmt.Errorf("%w: no ')' after the command name", ErrProcStat)
	}
	fields := bytes.Fields(b[i+1:])
	field := func(n int) []byte { return fields[n-3] } // fields after ')' start at field 3
	if len(fields) < 22-2 || len(field(3)) != 1 {
		return ProcStat{}, fmt.Errorf("%w: %d fields after the command name", ErrProcStat, len(fields))
	}
	// The state is one letter (R, S, D, Z, T, t, X, I...); bytes.Fields
	// splits on spaces only, so a NUL or other byte can stand there.
	if c := field(3)[0]; !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
		return ProcStat{}, fmt.Errorf("%w: state %q is not a letter", ErrProcStat, field(3))
	}
	s := ProcStat{State: field(3)[0]}
	for _, f := range []struct {
		n   int
		dst *uint64
	}{{14, &s.UTimeTicks}, {15, &s.STimeTicks}, {22, &s.StartTicks}} {
		v, err := strconv.ParseUint(string(field(f.n)), 10, 64)
		if err != nil {
			return ProcStat{}, fmt.Errorf("%w: field %d is %q", ErrProcStat, f.n, field(f.n))
		}
		*f.dst = v
	}
	return s, nil
}
