package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"etcdbench/internal/stats"
	"etcdbench/internal/walfile"
)

// call is the syscall an event reports (enum call of bpf/trace.c).
type call uint32

const (
	callWrite     call = 1
	callPwrite    call = 2
	callFdatasync call = 3
	callFsync     call = 4
	callOpen      call = 5 // an openat that returned a traced descriptor (FD, Class, Path)
)

// event is one traced call, as the BPF program writes it.
type event struct {
	End     uint64 // CLOCK_MONOTONIC ns at the syscall's exit
	Latency uint64 // ns from entry to exit (syncs; 0 for writes)
	Ret     int64  // a sync's 0 or -errno; a write's size
	Count   uint64 // bytes asked for
	Tid     uint32
	FD      uint32
	Call    call
	Class   Class
	// Runq is the part of Latency the thread was runnable without a CPU
	// (woken by the disk's answer, or preempted) - syncs only.
	Runq uint64
	// Path is the path an open event's openat was given.
	Path string
}

// eventSize is the size of struct event in bpf/trace.c; an open event
// (struct open_event) adds pathBytes of path, NUL-terminated.
const (
	eventSize = 56
	pathBytes = 256
)

// errShortEvent is returned by decodeEvent for a record too short to be
// an event.
var errShortEvent = errors.New("eBPF tracer: ring-buffer record shorter than an event")

// decodeEvent reads one event in the host's (little-endian) byte order.
func decodeEvent(b []byte) (event, error) {
	if len(b) < eventSize {
		return event{}, fmt.Errorf("%w (%d bytes)", errShortEvent, len(b))
	}
	le := binary.LittleEndian
	e := event{
		End: le.Uint64(b[0:]), Latency: le.Uint64(b[8:]), Ret: int64(le.Uint64(b[16:])), Count: le.Uint64(b[24:]),
		Tid: le.Uint32(b[32:]), FD: le.Uint32(b[36:]), Call: call(le.Uint32(b[40:])), Class: Class(le.Uint32(b[44:])),
		Runq: le.Uint64(b[48:]),
	}
	if e.Call == callOpen {
		p := b[eventSize:min(len(b), eventSize+pathBytes)]
		if i := bytes.IndexByte(p, 0); i >= 0 {
			p = p[:i]
		}
		e.Path = string(p)
	}
	return e, nil
}

// pendingWrites are the bytes and writes on one descriptor since its last
// sync.
type pendingWrites struct{ bytes, writes int64 }

// classStats is what one class of files saw.
type classStats struct {
	syncLat       *hdr.Histogram // fdatasync and fsync
	syncWait      *hdr.Histogram // the part of each sync spent waiting for a CPU
	syncOwn       *hdr.Histogram // each sync without that wait: the disk's and the kernel's own time
	waitNs, ownNs int64          // sums of both parts over the syncs
	// Sizes are counted exactly, as diagnose wal counts them (one counter
	// per distinct value): a page of 4096 bytes stays 4096.
	writeSize     walfile.Sizes
	bytesPerSync  walfile.Sizes
	writesPerSync walfile.Sizes
	fdatasyncs    int64
	fsyncs        int64
	writes        int64
	writeBytes    int64
	failed        int64
	secs          []*hdr.Histogram // sync latencies per second, index sec-1
	pending       pendingByFD
}

func newClassStats() *classStats {
	return &classStats{
		syncLat: stats.NewLatencyHistogram(), syncWait: stats.NewLatencyHistogram(), syncOwn: stats.NewLatencyHistogram(),
		pending: pendingByFD{},
	}
}

func (s *classStats) syncs() int64 { return s.fdatasyncs + s.fsyncs }

// collector turns events into per-class statistics. It is fed from one
// goroutine.
type collector struct {
	start   uint64 // CLOCK_MONOTONIC ns when tracing began
	classes map[Class]*classStats
	events  int64
	cwd     string // of the traced process, for the relative paths it opens
	// used are the files traced: every WAL, db and snapshot file, and the
	// other files that were written or synced.
	used map[string]Class
	// unused are the other files open but not yet written or synced, by
	// descriptor: many are only read, and are not worth listing.
	unused map[uint32]string
	// observer, when set, receives every event instead (Options.Observer).
	observer Observer
}

func newCollector(start uint64) *collector {
	c := &collector{start: start, classes: map[Class]*classStats{}, used: map[string]Class{}, unused: map[uint32]string{}}
	for _, cl := range Classes {
		c.classes[cl] = newClassStats()
	}
	return c
}

// opened records the file behind a traced descriptor, as /proc named it
// when the trace began or an open event later.
func (c *collector) opened(fd uint32, f openFile) {
	if f.Path != "" && !filepath.IsAbs(f.Path) && c.cwd != "" {
		f.Path = filepath.Join(c.cwd, f.Path)
	}
	delete(c.unused, fd) // the descriptor's earlier file was closed
	if f.Class == ClassOther {
		c.unused[fd] = f.Path
		return
	}
	c.used[f.Path] = f.Class
}

// add counts one event. Events of unknown classes are ignored. With an
// observer, the event goes to it and nothing is kept here but the bytes
// pending on each descriptor.
func (c *collector) add(e event) {
	s := c.classes[e.Class]
	if s == nil {
		return
	}
	if e.Call == callOpen {
		if c.observer == nil {
			c.opened(e.FD, openFile{Path: e.Path, Class: e.Class})
		}
		return
	}
	if e.Class == ClassOther && c.observer == nil {
		if p, ok := c.unused[e.FD]; ok {
			c.used[p] = ClassOther
			delete(c.unused, e.FD)
		}
	}
	c.events++
	o := s.pending.observe(e)
	switch {
	case c.observer != nil:
		c.observer.Observe(o)
	case o.Failed:
		s.failed++
	case !o.Sync:
		// Writes are counted at their entry, with the size asked for
		// and no latency (see bpf/trace.c).
		s.writes++
		s.writeBytes += o.Bytes
		if o.Bytes > 0 {
			s.writeSize.Add(o.Bytes)
		}
	default:
		s.addSync(e, o, c.start)
	}
}

// addSync counts one sync, o, whose event is e.
func (s *classStats) addSync(e event, o Observed, start uint64) {
	if o.Fsync {
		s.fsyncs++
	} else {
		s.fdatasyncs++
	}
	stats.Record(s.syncLat, o.Latency)
	stats.Record(s.syncWait, o.CPUWait)
	stats.Record(s.syncOwn, o.Latency-o.CPUWait)
	s.waitNs += int64(o.CPUWait)
	s.ownNs += int64(o.Latency - o.CPUWait)
	if o.Writes > 0 {
		s.bytesPerSync.Add(o.Bytes)
		s.writesPerSync.Add(o.Writes)
	}
	sec := 1
	if e.End > start {
		sec = int((e.End-start)/uint64(time.Second)) + 1
	}
	for len(s.secs) < sec {
		s.secs = append(s.secs, nil)
	}
	if s.secs[sec-1] == nil {
		s.secs[sec-1] = hdr.New(1000, int64(time.Hour), 2)
	}
	h := s.secs[sec-1]
	lat := int64(o.Latency)
	_ = h.RecordValue(max(min(lat, h.HighestTrackableValue()), h.LowestTrackableValue()))
}

// series is the per-second sync count, p99 and maximum of a class up to
// second last, empty seconds included.
func (s *classStats) series(last int) []stats.SecondSample {
	last = max(last, len(s.secs))
	out := make([]stats.SecondSample, 0, last)
	for t := 1; t <= last; t++ {
		smp := stats.SecondSample{T: t}
		if t <= len(s.secs) && s.secs[t-1] != nil {
			h := s.secs[t-1]
			smp.Ops, smp.P99Ns, smp.MaxNs = h.TotalCount(), h.ValueAtPercentile(99), h.Max()
		}
		out = append(out, smp)
	}
	return out
}
