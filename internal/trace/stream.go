package trace

import "time"

// Observer receives a trace as it happens instead of the statistics of a
// finished one (Options.Observer): a tracer left attached for days, such
// as the exporter's, keeps no per-second series, size counters or file
// list of its own, so its memory does not grow with the trace.
//
// Its methods are called from the goroutine that reads the ring buffer,
// one at a time; they should return quickly (a slow observer makes the
// ring buffer fill and events be lost, which Lost then counts).
type Observer interface {
	// Attached is called once, when the programs are attached and the
	// files open at the start are marked: from then on every write and
	// sync is seen.
	Attached()
	// Observe is called for every write and sync on a traced file.
	Observe(Observed)
	// Lost is called at every check for the process's exit (Options.
	// ExitCheck) and at the end with the number of events the ring
	// buffer has dropped since the trace began.
	Lost(total int64)
}

// Observed is one write or sync of the traced process on a traced file.
type Observed struct {
	Class Class
	// Sync is true for an fdatasync or fsync, false for a write or
	// pwrite64; Fsync tells the two syncs apart.
	Sync, Fsync bool
	// Failed is true when the call returned an error; nothing else is
	// set then.
	Failed bool
	// Latency is a sync's time from the syscall's entry to its exit;
	// CPUWait the part of it the thread was runnable without a CPU.
	Latency, CPUWait time.Duration
	// Bytes is a write's size; for a sync, the bytes written to the same
	// descriptor since its previous sync, in Writes writes (0 and 0 when
	// nothing was written in between).
	Bytes, Writes int64
}

// observe turns an event into what an Observer sees, keeping the bytes
// and writes pending on each descriptor (bounded by the descriptors the
// process has open: a sync or a close clears its entry).
func (p pendingByFD) observe(e event) Observed {
	o := Observed{Class: e.Class, Sync: e.Call == callFdatasync || e.Call == callFsync, Fsync: e.Call == callFsync}
	if e.Ret < 0 {
		o.Failed = true
		return o
	}
	if !o.Sync {
		o.Bytes, o.Writes = e.Ret, 1
		w := p[e.FD]
		w.bytes += e.Ret
		w.writes++
		p[e.FD] = w
		return o
	}
	o.Latency = time.Duration(e.Latency)
	o.CPUWait = time.Duration(min(e.Runq, e.Latency))
	w := p[e.FD]
	o.Bytes, o.Writes = w.bytes, w.writes
	delete(p, e.FD)
	return o
}

// pendingByFD are the bytes and writes on each descriptor since its last
// sync.
type pendingByFD map[uint32]pendingWrites
