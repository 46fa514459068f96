package disk

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"etcdbench/internal/stats"
)

// Stop modes of the WAL loop.
const (
	ModeAdaptive = "adaptive" // stop when the verdict is decided, or at the cap
	ModeSize     = "size"     // a fixed number of bytes, like fio --size
	ModeCount    = "count"    // a fixed number of write+fdatasync cycles
	ModeTime     = "time"     // exactly Runtime, like fio --time_based
)

// WALConfig says what the WAL loop does and when it stops.
type WALConfig struct {
	BlockSize int           // bytes per write(), etcd's batch size
	Size      int64         // ModeSize: total bytes
	Count     int64         // ModeCount: cycles
	Runtime   time.Duration // cap on the loop's time (0: none); ModeTime: the duration
	Mode      string
	Rule      stats.StopRule // threshold and guards for the adaptive stop
	// SegmentBytes is the size of each preallocated file; 0 means etcd's 64 MB
	// (in ModeSize the last file is just large enough).
	SegmentBytes int64
	// Clients > 1 emulates that many concurrent clients whose entries (of
	// BlockSize bytes each) raft batches into one write per fdatasync
	// (group commit, see groupcommit.go); 0 or 1 writes one block per sync.
	Clients int
	// Rate > 0 makes the loop open: entries of BlockSize bytes arrive at
	// Rate per second on a schedule, whatever the disk does, and each
	// write() carries every entry waiting at that moment (see
	// openloop.go). Exclusive with Clients.
	Rate float64
	// MaxBatch > 0 bounds the entries one open-loop write() carries: etcd
	// saves every proposal waiting at each raft Ready, and no more are
	// waiting than its clients have in flight (see diskmodel.CheckPerfClients).
	MaxBatch int
	// OnSecond, if set, is called once a second between operations.
	OnSecond func(Progress)
	// Durable, if set, is added the bytes of each write once its
	// fdatasync returned: wal-under-load's background bbolt commits write
	// as many bytes of pages as the WAL made durable since the last one,
	// as etcd's backend applies each committed entry.
	Durable *atomic.Int64
	// Hold, if set, keeps an adaptive run going past a passing decision
	// while it returns true (never past Runtime): the capacity sweep's
	// backend holds a step until its commits can be judged.
	Hold func() bool
	// Stretch, if longer than Runtime, lets an adaptive run that reaches
	// Runtime undecided go on while it has fewer (effective) samples than
	// a pass needs (Rule.SamplesToPass) and they can still come by Stretch
	// at the rate they came so far: at a low rate the cap ends a run
	// before it could show anything. The rule's looks are counted up to
	// Stretch, so every look keeps the overall confidence.
	Stretch time.Duration
	// Plain makes the write and fdatasync ordinary Go system calls: a
	// test whose filesystem this same process serves (fusedelay) needs
	// them, since a raw call would keep a garbage collection waiting
	// for a FUSE reply that the stopped world cannot send.
	Plain bool
}

// Progress is the state of a running loop, for a live progress line.
type Progress struct {
	Label    string // what runs, when a workload has parts (a sweep's step)
	Elapsed  time.Duration
	Ops      int64
	Exceed   int64
	P99      time.Duration
	Decision stats.Decision
}

// WALRun is what the loop measured. The embedded Sampled holds the
// fdatasync latencies and the stop rule's state.
type WALRun struct {
	*Sampled
	Config    WALConfig
	Bytes     int64
	Sync      *hdr.Histogram // fdatasync latency, ns (the same as Sampled.Hist)
	Write     *hdr.Histogram // write() latency, ns
	Cancelled bool           // stopped by the context (signal)
	Notes     []string
	// Open is what an open-loop run (Config.Rate > 0) measured besides
	// the syncs; nil otherwise.
	Open *OpenLoopStats
}

// ErrShortWrite is returned when write() wrote less than asked.
var ErrShortWrite = errors.New("short write")

// Validate checks a configuration before anything is written.
func (c WALConfig) Validate() error {
	if c.BlockSize <= 0 {
		return fmt.Errorf("block size must be positive, got %d", c.BlockSize)
	}
	if err := c.Rule.Validate(); err != nil {
		return err
	}
	if c.Clients < 0 || c.Clients > 4096 {
		return fmt.Errorf("clients must be between 0 and 4096, got %d", c.Clients)
	}
	if c.Clients > 1 && (c.Mode == ModeSize || c.Mode == ModeCount) {
		return errors.New("concurrent clients need the adaptive or time-based mode: batches make the amount written unpredictable")
	}
	if c.Rate != 0 {
		if err := ValidateRate(c.Rate); err != nil {
			return err
		}
		if c.Clients > 1 {
			return errors.New("an open-loop rate and concurrent clients are alternatives: the rate decides when entries arrive")
		}
		if c.Mode == ModeSize || c.Mode == ModeCount {
			return errors.New("an open-loop rate needs the adaptive or time-based mode: batches make the amount written unpredictable")
		}
	}
	switch c.Mode {
	case ModeAdaptive:
		if c.Runtime <= 0 {
			return errors.New("adaptive mode needs a positive runtime cap")
		}
	case ModeSize:
		if c.Size < int64(c.BlockSize) {
			return fmt.Errorf("size %d is smaller than one block of %d bytes", c.Size, c.BlockSize)
		}
	case ModeCount:
		if c.Count <= 0 {
			return fmt.Errorf("count must be positive, got %d", c.Count)
		}
	case ModeTime:
		if c.Runtime <= 0 {
			return errors.New("time-based mode needs a positive runtime")
		}
	default:
		return fmt.Errorf("unknown stop mode %q", c.Mode)
	}
	return nil
}

func (c WALConfig) segmentBytes() int64 {
	if c.SegmentBytes > 0 {
		return c.SegmentBytes
	}
	return EtcdSegmentBytes
}

// plannedBytes is how much data the loop will write at most, or -1 when
// only time bounds it.
func (c WALConfig) plannedBytes() int64 {
	switch c.Mode {
	case ModeSize:
		return c.Size / int64(c.BlockSize) * int64(c.BlockSize)
	case ModeCount:
		return c.Count * int64(c.BlockSize)
	}
	return -1
}

// SpaceNeeded is the free space the loop needs: the data it will write, or
// two segments (the current one and the next, preallocated) when it is
// bounded only by time, plus a margin for metadata.
func (c WALConfig) SpaceNeeded() int64 {
	const margin = 4 << 20
	seg := c.segmentBytes()
	if p := c.plannedBytes(); p >= 0 {
		return min(p, 2*seg) + margin
	}
	return 2*seg + margin
}

// BatchBound is the most blocks one write() carries.
func (c WALConfig) BatchBound() int {
	switch {
	case c.Rate > 0 && c.MaxBatch > 0:
		return min(maxOpenBatch(c.Rate, c.BlockSize), c.MaxBatch)
	case c.Rate > 0:
		return maxOpenBatch(c.Rate, c.BlockSize)
	case c.Clients > 1:
		return c.Clients
	}
	return 1
}

// segmentSizes returns the size of segment i for the pipeline.
func (c WALConfig) segmentSizes() func(int) int64 {
	seg := c.segmentBytes()
	// Round segments down to whole blocks, so no write straddles two files.
	perSeg := seg / int64(c.BlockSize) * int64(c.BlockSize)
	perSeg = max(perSeg, int64(c.BlockSize)*int64(c.BatchBound())) // the largest batch fits

	planned := c.plannedBytes()
	return func(i int) int64 {
		if planned < 0 {
			return perSeg
		}
		left := planned - int64(i)*perSeg
		return max(min(left, perSeg), 0)
	}
}

// RunWAL runs the WAL loop in dir (a scratch directory) until its stop
// condition. A cancelled ctx ends it between two operations; the partial
// run is returned with Cancelled set and ctx's error.
func RunWAL(ctx context.Context, dir string, cfg WALConfig) (*WALRun, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Rule.MaxDuration = max(cfg.Runtime, cfg.Stretch) // the cap bounds the looks
	sm := newSampled(cfg.Rule, cfg.Mode, cfg.OnSecond)
	sm.hold = cfg.Hold
	run := &WALRun{Sampled: sm, Config: cfg, Sync: sm.Hist, Write: stats.NewLatencyHistogram()}
	buf := make([]byte, cfg.BlockSize*cfg.BatchBound())
	if _, err := rand.Read(buf); err != nil { // incompressible, like real records
		return nil, err
	}
	pipe := newPipeline(dir, cfg.segmentSizes())
	seg := pipe.first()
	if seg.err != nil {
		return nil, seg.err
	}
	if pipe.note != "" {
		run.Notes = append(run.Notes, pipe.note)
	}
	defer func() { pipe.close(seg) }()

	var stop atomic.Bool
	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() {
		select {
		case <-ctx.Done():
			stop.Store(true)
		case <-watchDone:
		}
	}()

	// Not locked to its thread: the loop gives way every yieldEvery
	// (below), and a locked goroutine that yields hands its thread over
	// and waits for another to wake it.
	var err error
	seg, err = run.loop(cfg, pipe, seg, buf, &stop)
	switch {
	case err == nil && stop.Load():
		run.closeOpenSecond()
		run.Cancelled = true
		run.Reason = "interrupted"
		err = ctx.Err()
	case err == nil:
		if note := run.finish(); note != "" {
			run.Notes = append(run.Notes, note)
		}
	}
	return run, err
}

// short says whether an undecided run has fewer samples than a pass
// needs (Sampled.needToPass: more where slow ones came), in effective
// samples: the rule counts n/deff where slow seconds cluster (the design
// effect), so 968 syncs at 50/s with a design effect above 1 were still
// short of the 968 a pass needed. A step at 100 syncs/s on a storage
// whose syncs wait a log-normal delay (median 1 ms, p99 5 ms) stopped
// undecided at its cap with 1,001 syncs, 2 of them over 10 ms: a pass
// needed some 1,100, and a real etcd 3.4 carried 519-566 puts/s there
// (bench/capacity-vs-etcd's network-block).
func short(run *WALRun) bool {
	need := run.needToPass()
	if run.Ops < need {
		return true
	}
	return run.Decision.Outcome == stats.Undecided && run.Decision.NEff > 0 && run.Decision.NEff < float64(need)
}

// reachable says whether, at the rate its samples came so far, a run
// gets the samples a pass needs within stretch: a step whose entries
// batch (18 syncs a second at 80 entries/s on a queueing storage)
// cannot, nor one whose slow share asks for more than the stretch holds,
// and running on would only spend the stretch.
func reachable(run *WALRun, stretch time.Duration) bool {
	secs := run.Elapsed.Seconds()
	return secs > 0 && float64(run.Ops)/secs*stretch.Seconds() >= float64(run.needToPass())
}

// loop is the timed part: write, fdatasync, record; everything else happens
// once a second or when a segment is full.
func (run *WALRun) loop(cfg WALConfig, pipe *pipeline, seg segment, buf []byte, stop *atomic.Bool) (segment, error) {
	bs := int64(cfg.BlockSize)
	planned := cfg.plannedBytes()
	var gc batcher
	if cfg.Clients > 1 {
		gc = startGroupCommit(cfg.Clients)
		defer gc.close()
	}
	write, fdatasync := rawWriteFull, rawFdatasync
	if cfg.Plain {
		write = func(fd int, b []byte) error {
			return writeFullAt(func(fd int, b []byte, _ int64) (int, error) { return unix.Write(fd, b) }, fd, b, 0)
		}
		fdatasync = unix.Fdatasync
	}
	var off int64
	start, mono0 := time.Now(), monotonic()
	run.begin(start)
	lastYield := mono0
	if cfg.Rate > 0 {
		ol := newOpenLoop(cfg.Rate, cfg.BatchBound(), start)
		gc = ol
		defer func() { run.Open = ol.stats(time.Now()) }()
	}
	var deadline time.Time
	if cfg.Runtime > 0 {
		deadline = start.Add(cfg.Runtime)
	}
	var stretched time.Time // the latest a run short of samples goes on to
	wentOn := false
	if cfg.Mode == ModeAdaptive && !deadline.IsZero() && cfg.Stretch > cfg.Runtime {
		stretched = start.Add(cfg.Stretch)
	}
	for !stop.Load() {
		batch := buf
		if gc != nil {
			n := gc.take(stop)
			if n == 0 {
				break
			}
			batch = buf[:int64(n)*bs]
		}
		if off+int64(len(batch)) > seg.size {
			seg = pipe.next(seg)
			if seg.err != nil {
				return seg, fmt.Errorf("preparing the next WAL segment: %w", seg.err)
			}
			off = 0
		}
		// The clock is read with monotonic, which is not a preemption
		// point, right after each call: nothing of the scheduler's
		// lands between the call's return and its timestamp.
		t0 := monotonic()
		err := write(seg.fd, batch)
		t1 := monotonic()
		if err != nil {
			return seg, fmt.Errorf("write to %s: %w", seg.path, err)
		}
		err = fdatasync(seg.fd)
		t2 := monotonic()
		if err != nil {
			return seg, fmt.Errorf("fdatasync %s: %w", seg.path, err)
		}
		end := start.Add(time.Duration(t2 - mono0))
		if gc != nil {
			gc.done(end)
		}
		if cfg.Durable != nil {
			cfg.Durable.Add(int64(len(batch)))
		}
		stats.Record(run.Write, time.Duration(t1-t0))
		off += int64(len(batch))
		run.Bytes += int64(len(batch))
		if run.add(time.Duration(t2-t1), end) {
			return seg, nil
		}
		if time.Duration(t2-lastYield) >= yieldEvery {
			runtime.Gosched()
			lastYield = t2
		}
		switch {
		case planned >= 0 && run.Bytes+bs > planned && cfg.Mode == ModeCount:
			run.stoppedAt(fmt.Sprintf("completed the requested %d cycles", run.Ops))
			return seg, nil
		case planned >= 0 && run.Bytes+bs > planned:
			run.stoppedAt(fmt.Sprintf("wrote the requested %d bytes", run.Bytes))
			return seg, nil
		case !deadline.IsZero() && !end.Before(deadline) && cfg.Mode == ModeAdaptive:
			if end.Before(stretched) && short(run) && reachable(run, cfg.Stretch) {
				wentOn = true
				continue // short of the samples a pass needs: on, up to Stretch
			}
			switch {
			case !stretched.IsZero() && short(run) && !end.Before(stretched):
				run.stoppedAt(fmt.Sprintf("reached the %v cap (%v, stretched for the %d samples a pass needs) before the verdict was certain", cfg.Stretch, cfg.Runtime, run.needToPass()))
				return seg, nil
			case !stretched.IsZero() && short(run):
				run.stoppedAt(fmt.Sprintf("reached the %v cap before the verdict was certain; at its %.0f samples a second the %d a pass needs would not come within %v", cfg.Runtime, float64(run.Ops)/run.Elapsed.Seconds(), run.needToPass(), cfg.Stretch))
				return seg, nil
			case wentOn:
				run.stoppedAt(fmt.Sprintf("went on past the %v cap for the %d samples a pass needs, and stopped with them", cfg.Runtime, run.needToPass()))
				return seg, nil
			}
			run.stoppedAt(fmt.Sprintf("reached the %v cap before the verdict was certain", cfg.Runtime))
			return seg, nil
		case !deadline.IsZero() && !end.Before(deadline):
			run.stoppedAt(fmt.Sprintf("reached the runtime of %v", cfg.Runtime))
			return seg, nil
		}
	}
	return seg, nil
}
