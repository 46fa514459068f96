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
	// OnSecond, if set, is called once a second between operations.
	OnSecond func(Progress)
}

// Progress is the state of a running loop, for a live progress line.
type Progress struct {
	Elapsed  time.Duration
	Ops      int64
	Exceed   int64
	P99      time.Duration
	Decision stats.Decision
}

// WALRun is what the loop measured.
type WALRun struct {
	Config    WALConfig
	Ops       int64
	Bytes     int64
	Exceed    int64 // fdatasyncs slower than the rule's threshold
	Elapsed   time.Duration
	Sync      *hdr.Histogram // fdatasync latency, ns
	Write     *hdr.Histogram // write() latency, ns
	Series    *stats.Series  // per second, fdatasync
	Decision  stats.Decision // the stop rule's last decision
	Looks     int
	Reason    string // why the loop stopped, in words
	Cancelled bool   // stopped by the context (signal)
	Notes     []string
}

// ErrShortWrite is returned when write() wrote less than asked.
var ErrShortWrite = errors.New("disk: short write")

// Validate checks a configuration before anything is written.
func (c WALConfig) Validate() error {
	if c.BlockSize <= 0 {
		return fmt.Errorf("block size must be positive, got %d", c.BlockSize)
	}
	if err := c.Rule.Validate(); err != nil {
		return err
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

// segmentSizes returns the size of segment i for the pipeline.
func (c WALConfig) segmentSizes() func(int) int64 {
	seg := c.segmentBytes()
	// Round segments down to whole blocks, so no write straddles two files.
	perSeg := seg / int64(c.BlockSize) * int64(c.BlockSize)
	if perSeg == 0 {
		perSeg = int64(c.BlockSize)
	}
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
	cfg.Rule.MaxDuration = cfg.Runtime // the cap bounds the looks
	run := &WALRun{
		Config: cfg,
		Sync:   stats.NewLatencyHistogram(),
		Write:  stats.NewLatencyHistogram(),
		Series: stats.NewSeries(),
	}
	buf := make([]byte, cfg.BlockSize)
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

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	var err error
	seg, err = run.loop(cfg, pipe, seg, buf, &stop)
	if run.Series.Pending() > 0 {
		run.Series.Close(len(run.Series.Samples) + 1)
	}
	if err == nil && stop.Load() {
		run.Cancelled = true
		run.Reason = "interrupted"
		err = ctx.Err()
	}
	if !run.Cancelled && err == nil {
		run.finalDecision()
	}
	return run, err
}

// loop is the timed part: write, fdatasync, record; everything else happens
// once a second or when a segment is full.
func (run *WALRun) loop(cfg WALConfig, pipe *pipeline, seg segment, buf []byte, stop *atomic.Bool) (segment, error) {
	bs := int64(len(buf))
	threshold := cfg.Rule.Threshold
	planned := cfg.plannedBytes()
	var off int64
	start := time.Now()
	var deadline time.Time
	if cfg.Runtime > 0 {
		deadline = start.Add(cfg.Runtime)
	}
	nextTick := start.Add(time.Second)
	second := 0
	for !stop.Load() {
		if off+bs > seg.size {
			seg = pipe.next(seg)
			if seg.err != nil {
				return seg, fmt.Errorf("preparing the next WAL segment: %w", seg.err)
			}
			off = 0
		}
		t0 := time.Now()
		n, err := rawWrite(seg.fd, buf)
		t1 := time.Now()
		if err != nil {
			return seg, fmt.Errorf("write to %s: %w", seg.path, err)
		}
		if n != len(buf) {
			return seg, fmt.Errorf("%w: %d of %d bytes to %s", ErrShortWrite, n, len(buf), seg.path)
		}
		if err := rawFdatasync(seg.fd); err != nil {
			return seg, fmt.Errorf("fdatasync %s: %w", seg.path, err)
		}
		t2 := time.Now()
		syncD := t2.Sub(t1)
		stats.Record(run.Write, t1.Sub(t0))
		stats.Record(run.Sync, syncD)
		exceeded := syncD > threshold
		if exceeded {
			run.Exceed++
		}
		run.Series.Record(syncD, exceeded)
		run.Ops++
		off += bs
		run.Bytes += bs
		run.Elapsed = t2.Sub(start)

		if planned >= 0 && run.Bytes+bs > planned {
			run.Reason = fmt.Sprintf("wrote the requested %d bytes", run.Bytes)
			if cfg.Mode == ModeCount {
				run.Reason = fmt.Sprintf("completed the requested %d cycles", run.Ops)
			}
			return seg, nil
		}
		if !deadline.IsZero() && !t2.Before(deadline) {
			run.Reason = fmt.Sprintf("reached the runtime of %v", cfg.Runtime)
			if cfg.Mode == ModeAdaptive {
				run.Reason = fmt.Sprintf("reached the %v cap before the verdict was certain", cfg.Runtime)
			}
			return seg, nil
		}
		if !t2.Before(nextTick) {
			for !t2.Before(nextTick) { // a stall may span several seconds
				second++
				run.Series.Close(second)
				nextTick = nextTick.Add(time.Second)
			}
			if run.tick(cfg) {
				return seg, nil
			}
		}
	}
	return seg, nil
}

// tick runs once a second: consult the stop rule and report progress. It
// returns true when the adaptive rule has decided.
func (run *WALRun) tick(cfg WALConfig) bool {
	decided := false
	if cfg.Mode == ModeAdaptive {
		if run.Elapsed >= cfg.Rule.MinDuration && run.Ops >= cfg.Rule.MinSamples {
			run.Looks++ // a look that could have decided
		}
		run.Decision = cfg.Rule.Decide(run.Ops, run.Exceed, stats.DesignEffect(run.Series.Batches()), run.Elapsed)
		if run.Decision.Outcome != stats.Undecided {
			run.Reason = "verdict decided: " + run.Decision.Reason
			decided = true
		}
	}
	if cfg.OnSecond != nil {
		cfg.OnSecond(Progress{
			Elapsed: run.Elapsed, Ops: run.Ops, Exceed: run.Exceed,
			P99: time.Duration(run.Sync.ValueAtPercentile(99)), Decision: run.Decision,
		})
	}
	return decided
}

// finalDecision judges the whole run once more after it stopped, on all its
// samples. An adaptive run keeps the decision it stopped on; one that hit
// its cap is judged as one more look at the same per-look level (its looks
// were already spent). Fixed-amount modes are judged in a single look at
// the overall confidence. The minimums guard only early stops, so they do
// not apply here; a run shorter than them gets a note.
func (run *WALRun) finalDecision() {
	cfg := run.Config
	if cfg.Mode == ModeAdaptive && run.Decision.Outcome != stats.Undecided {
		return
	}
	r := cfg.Rule
	if cfg.Mode != ModeAdaptive {
		r.MaxDuration = 0 // one look
	}
	if run.Elapsed < r.MinDuration || run.Ops < r.MinSamples {
		run.Notes = append(run.Notes, fmt.Sprintf("the run (%d fdatasyncs in %v) was shorter than the %d samples and %v that guard against ending between periodic stalls; its verdict may miss them", run.Ops, run.Elapsed.Round(time.Millisecond), r.MinSamples, r.MinDuration))
	}
	r.MinSamples, r.MinDuration = 0, 0
	run.Decision = r.Decide(run.Ops, run.Exceed, stats.DesignEffect(run.Series.Batches()), run.Elapsed)
}
