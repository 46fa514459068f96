package disk

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// SeqParams are the settings of the sequential writers (snapshot,
// compaction).
type SeqParams struct {
	BlockSize int64
	Size      int64
	SyncEvery int64         // compaction: bytes between fdatasyncs (0: only at the end)
	Runtime   time.Duration // cap
}

var seqParams = []Param{
	{Name: "bs", Usage: "bytes per write()"},
	{Name: "size", Usage: "bytes to write"},
	{Name: "runtime", Usage: "cap on the run's time"},
}

const (
	snapshotDescription   = "a snapshot or a received .snap.db: large sequential writes into a new file, then fdatasync; bandwidth and time until durable"
	compactionDescription = "bbolt defragmentation: a sequential rewrite of the db with an fdatasync every few MiB; bandwidth and sync latency"
)

var snapshotSpec = Spec{
	Name:        "snapshot",
	Description: snapshotDescription,
	Short:       "Time a snapshot's large sequential writes and the fdatasync that makes them durable",
	InAll:       true,
	Params:      seqParams,
	Build: func(p Preset, s *Settings) (Workload, error) {
		return buildSeq("snapshot", snapshotDescription, p.Snapshot, s, false)
	},
}

var compactionSpec = Spec{
	Name:        "compaction",
	Description: compactionDescription,
	Short:       "Time a defragmentation's sequential rewrite of the db, synced every few MiB",
	InAll:       true,
	Params:      append(append([]Param(nil), seqParams...), Param{Name: "sync-every", Usage: "bytes written between two fdatasyncs"}),
	Build: func(p Preset, s *Settings) (Workload, error) {
		return buildSeq("compaction", compactionDescription, p.Compaction, s, true)
	},
}

func buildSeq(name, desc string, p SeqParams, s *Settings, periodic bool) (Workload, error) {
	s.Size("bs", &p.BlockSize)
	s.Size("size", &p.Size)
	s.Duration("runtime", &p.Runtime, false)
	if periodic {
		s.Size("sync-every", &p.SyncEvery)
	}
	if s.err != nil {
		return nil, s.err
	}
	if p.BlockSize > p.Size {
		return nil, BadSetting(ErrBadParam, "--bs %d is larger than --size %d", p.BlockSize, p.Size)
	}
	if !periodic {
		p.SyncEvery = 0
	}
	return seqWorkload{name: name, desc: desc, p: p}, nil
}

type seqWorkload struct {
	name, desc string
	p          SeqParams
}

func (w seqWorkload) SpaceNeeded() int64 { return w.p.Size + 4*mib }

// stopOnCancel returns a flag set when ctx is cancelled, cheap to poll from
// a timed loop, and a func that releases the watcher.
func stopOnCancel(ctx context.Context) (*atomic.Bool, func()) {
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			stop.Store(true)
		case <-done:
		}
	}()
	return &stop, func() { close(done) }
}

func (w seqWorkload) Run(ctx context.Context, env Env) (result.Workload, error) {
	p := w.p
	dir, done, err := Workdir(env.Dir, w.name)
	if err != nil {
		return result.Workload{}, err
	}
	defer done()
	path := filepath.Join(dir, w.name+".db")
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return result.Workload{}, fmt.Errorf("creating %s: %w", path, err)
	}
	defer unix.Close(fd)
	buf := make([]byte, p.BlockSize)
	if _, err := rand.Read(buf); err != nil {
		return result.Workload{}, err
	}
	stop, release := stopOnCancel(ctx)
	defer release()

	// The writes and syncs are raw system calls on this locked thread, as in
	// the WAL loop (see rawio.go): each blocks for hundreds of microseconds.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	writes, syncs := stats.NewLatencyHistogram(), stats.NewLatencyHistogram()
	m := StartMeter(env.Root, DeviceName(env))
	var off, sinceSync int64
	reason := fmt.Sprintf("wrote the requested %d bytes", p.Size)
	start := time.Now()
	deadline := start.Add(p.Runtime)
	for off+p.BlockSize <= p.Size {
		if stop.Load() {
			reason = "interrupted"
			break
		}
		t0 := time.Now()
		err := rawPwriteFull(fd, buf, off)
		t1 := time.Now()
		if err != nil {
			return result.Workload{}, fmt.Errorf("write to %s: %w", path, err)
		}
		stats.Record(writes, t1.Sub(t0))
		off += p.BlockSize
		sinceSync += p.BlockSize
		if p.SyncEvery > 0 && sinceSync >= p.SyncEvery {
			if err := rawFdatasync(fd); err != nil {
				return result.Workload{}, fmt.Errorf("fdatasync %s: %w", path, err)
			}
			stats.Record(syncs, time.Since(t1))
			sinceSync = 0
		}
		if p.Runtime > 0 && t1.After(deadline) {
			reason = fmt.Sprintf("reached the %v cap after %d of %d bytes", p.Runtime, off, p.Size)
			break
		}
	}
	writeEnd := time.Now()
	if err := rawFdatasync(fd); err != nil {
		return result.Workload{}, fmt.Errorf("fdatasync %s: %w", path, err)
	}
	end := time.Now()
	finalSync := end.Sub(writeEnd)
	stats.Record(syncs, finalSync)
	elapsed := end.Sub(start)
	wl := result.Workload{
		Name:        w.name,
		Description: w.desc,
		Parameters:  map[string]any{"block_size": p.BlockSize, "size": p.Size, "sync_every": p.SyncEvery, "runtime_ns": p.Runtime.Nanoseconds()},
		Stop:        result.Stop{Mode: ModeSize, Reason: reason},
		Ops:         off / p.BlockSize, Bytes: off, DurationNs: elapsed.Nanoseconds(),
		Series: []stats.SecondSample{},
	}
	wl.Process, wl.Device = m.Stop()
	if secs := elapsed.Seconds(); secs > 0 {
		wl.OpsPerSec, wl.BytesPerSec = float64(wl.Ops)/secs, float64(off)/secs
	}
	syncLat, err := latency("fdatasync", syncs)
	if err != nil {
		return wl, err
	}
	writeLat, err := latency("write", writes)
	if err != nil {
		return wl, err
	}
	wl.Latencies = []result.Latency{syncLat, writeLat}
	buffered := writeEnd.Sub(start).Seconds()
	wl.Figures = []result.Figure{
		{Name: "time_to_durable", Value: elapsed.Seconds(), Unit: "s", Description: "from the first write until the final fdatasync returned"},
		{Name: "durable_bandwidth", Value: wl.BytesPerSec, Unit: "B/s", Description: "bytes / time to durable"},
		{Name: "final_fdatasync", Value: finalSync.Seconds(), Unit: "s", Description: "the last fdatasync alone: the dirty data the page cache still held"},
	}
	if buffered > 0 {
		wl.Figures = append(wl.Figures, result.Figure{Name: "write_bandwidth", Value: float64(off) / buffered, Unit: "B/s", Description: "bytes / time of the write() calls, before the final fdatasync"})
	}
	if reason == "interrupted" {
		wl.Verdicts = []verdict.Verdict{}
		return wl, ctx.Err()
	}
	wl.Verdicts = []verdict.Verdict{}
	if w.name == "snapshot" {
		wl.Verdicts = append(wl.Verdicts, verdict.JudgeBandwidth(env.Thresholds.RecoveryBW, env.Thresholds.RecoveryBWLarge,
			"snapshot_bandwidth", "bandwidth to write a snapshot durably", wl.BytesPerSec))
	}
	if off < p.Size {
		wl.Notes = append(wl.Notes, fmt.Sprintf("stopped at the %v cap after %s; the bandwidth is that of the part written", p.Runtime, units.FormatBytes(off)))
	}
	return wl, nil
}
