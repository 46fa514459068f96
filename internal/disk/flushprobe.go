package disk

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
)

// FlushProbeRule says how the flush probe runs and when it calls the two
// costs distinguishable. It is data with its reasoning, like a threshold,
// but the probe judges nothing: timing can show that a flush costs
// something, never that a device which answers at once kept the data.
var FlushProbeRule = struct {
	BlockSize int           // bytes per write, etcd's low-load batch
	Slots     int           // blocks in the probe's file, overwritten in turn
	MaxPairs  int           // pairs of measurements at most
	MinPairs  int           // pairs needed for the medians' intervals to mean anything
	MaxTime   time.Duration // the probe's time budget
	Level     float64       // confidence of each median's interval
	// MinRatio is the share of the write's own cost a flush must add to
	// count as visible: the cost is judged relative to the write, as
	// devices differ by orders of magnitude.
	MinRatio float64
	// Resolution is the gap under which two medians' intervals that
	// separate still say nothing: a system call's own jitter (tmpfs,
	// where neither call does any I/O, differs by that much).
	Resolution time.Duration
	Source     string
	FileName   string
}{
	BlockSize: 4096, Slots: 64, MaxPairs: 400, MinPairs: 30, MaxTime: time.Second, Level: 0.95,
	MinRatio: 0.2, Resolution: 2 * time.Microsecond,
	Source: "etcdbench: fdatasync of an overwrite without metadata changes = writing the data out + a cache flush (REQ_PREFLUSH); " +
		"sync_file_range(WAIT_BEFORE|WRITE|WAIT_AFTER) writes the same data out and waits without any flush (sync_file_range(2)); " +
		"a volatile cache takes tens of microseconds (NVMe) to milliseconds (SATA, RAID, a hypervisor's fsync) to flush",
	FileName: "flush-probe",
}

// FlushProbe is what the flush probe measured: the same block overwritten
// in place and either made durable with fdatasync (written out and the
// device's cache flushed) or written out with sync_file_range (written
// out, no flush), alternately, on one file in the scratch directory.
type FlushProbe struct {
	Pairs                   int
	Synced, Unsynced        time.Duration // medians
	SyncedCI, UnsyncedCI    stats.QuantileInterval
	Distinguishable         bool // the flush has a cost the medians' intervals separate
	Elapsed                 time.Duration
	BlockSize               int
	WithoutFlushIsWriteOnly bool // sync_file_range is unsupported: the comparison is with the write alone
}

// RunFlushProbe runs the probe in dir (a scratch directory): it creates
// one small file, writes it whole and syncs it before the clock starts,
// then alternates the two measurements for at most FlushProbeRule.MaxTime,
// and removes the file.
func RunFlushProbe(dir string) (*FlushProbe, error) {
	r := FlushProbeRule
	path := filepath.Join(dir, r.FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("flush probe: %w", err)
	}
	defer os.Remove(path)
	defer f.Close()
	fd := int(f.Fd())
	buf := make([]byte, r.BlockSize*r.Slots)
	if _, err := rand.Read(buf); err != nil {
		return nil, err
	}
	// Written and synced first: the timed overwrites then change no
	// metadata (no unwritten extents to convert, no size to extend), so
	// fdatasync adds to sync_file_range nothing but the flush.
	if _, err := f.Write(buf); err != nil {
		return nil, fmt.Errorf("flush probe: writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("flush probe: fsync %s: %w", path, err)
	}
	p := &FlushProbe{BlockSize: r.BlockSize}
	synced, unsynced := stats.NewLatencyHistogram(), stats.NewLatencyHistogram()
	const srf = unix.SYNC_FILE_RANGE_WAIT_BEFORE | unix.SYNC_FILE_RANGE_WRITE | unix.SYNC_FILE_RANGE_WAIT_AFTER
	bs := int64(r.BlockSize)

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	// MinPairs even past MaxTime (a slow disk), but never past five times it.
	for i := 0; i < r.MaxPairs && (i < r.MinPairs || time.Since(start) < r.MaxTime) && time.Since(start) < 5*r.MaxTime; i++ {
		off := int64(2*i%r.Slots) * bs
		block := buf[off : off+bs]
		t0 := time.Now()
		if _, err := rawPwrite(fd, block, off); err != nil {
			return nil, fmt.Errorf("flush probe: write %s: %w", path, err)
		}
		if !p.WithoutFlushIsWriteOnly {
			if err := unix.SyncFileRange(fd, off, bs, srf); errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ESPIPE) {
				p.WithoutFlushIsWriteOnly = true
			} else if err != nil {
				return nil, fmt.Errorf("flush probe: sync_file_range %s: %w", path, err)
			}
		}
		t1 := time.Now()
		off += bs
		if _, err := rawPwrite(fd, buf[off:off+bs], off); err != nil {
			return nil, fmt.Errorf("flush probe: write %s: %w", path, err)
		}
		if err := rawFdatasync(fd); err != nil {
			return nil, fmt.Errorf("flush probe: fdatasync %s: %w", path, err)
		}
		t2 := time.Now()
		stats.Record(unsynced, t1.Sub(t0))
		stats.Record(synced, t2.Sub(t1))
		p.Pairs++
	}
	p.Elapsed = time.Since(start)
	p.judge(synced, unsynced)
	return p, nil
}

// judge fills the medians, their intervals and whether they separate.
func (p *FlushProbe) judge(synced, unsynced *hdr.Histogram) {
	r := FlushProbeRule
	p.Synced = time.Duration(synced.ValueAtPercentile(50))
	p.Unsynced = time.Duration(unsynced.ValueAtPercentile(50))
	p.SyncedCI = stats.PercentileCI(synced, 0.5, float64(synced.TotalCount()), r.Level)
	p.UnsyncedCI = stats.PercentileCI(unsynced, 0.5, float64(unsynced.TotalCount()), r.Level)
	p.Distinguishable = FlushCostShows(p.SyncedCI, p.UnsyncedCI, p.Unsynced)
}

// FlushCostShows reports whether a flush visibly costs something: the
// interval of the median with fdatasync lies wholly above that without,
// and the gap between them is at least FlushProbeRule.MinRatio of the
// cost without a flush (and above a system call's jitter,
// FlushProbeRule.Resolution).
func FlushCostShows(synced, unsynced stats.QuantileInterval, unsyncedMedian time.Duration) bool {
	r := FlushProbeRule
	gap := time.Duration(synced.LowerNs - unsynced.UpperNs)
	return gap > 0 && gap >= r.Resolution && float64(gap) >= r.MinRatio*float64(unsyncedMedian)
}

// Figures returns the probe as result figures, and a note that says what
// the timing can and cannot show.
func (p *FlushProbe) Figures() ([]result.Figure, string) {
	without := "write + sync_file_range (written out, no flush)"
	if p.WithoutFlushIsWriteOnly {
		without = "write alone (sync_file_range unsupported here)"
	}
	figs := []result.Figure{
		{Name: "flush_probe_with_flush_p50", Value: p.Synced.Seconds(), Unit: "s",
			Description: fmt.Sprintf("median write + fdatasync of a %d-byte overwrite (%d pairs, %.0f %% CI %v..%v)", p.BlockSize, p.Pairs, 100*p.SyncedCI.Level, time.Duration(p.SyncedCI.LowerNs), time.Duration(p.SyncedCI.UpperNs))},
		{Name: "flush_probe_without_flush_p50", Value: p.Unsynced.Seconds(), Unit: "s",
			Description: fmt.Sprintf("median %s of the same overwrite (%.0f %% CI %v..%v)", without, 100*p.UnsyncedCI.Level, time.Duration(p.UnsyncedCI.LowerNs), time.Duration(p.UnsyncedCI.UpperNs))},
	}
	measured := fmt.Sprintf("write + fdatasync median %v (%.0f %% CI %v..%v), the same write without a flush %v (%v..%v), %d pairs",
		roundProbe(p.Synced), 100*p.SyncedCI.Level, roundProbe(time.Duration(p.SyncedCI.LowerNs)), roundProbe(time.Duration(p.SyncedCI.UpperNs)),
		roundProbe(p.Unsynced), roundProbe(time.Duration(p.UnsyncedCI.LowerNs)), roundProbe(time.Duration(p.UnsyncedCI.UpperNs)), p.Pairs)
	extra := ""
	if p.Unsynced > 0 {
		extra = fmt.Sprintf(" (%+.0f %%)", 100*(float64(p.Synced)/float64(p.Unsynced)-1))
	}
	var note string
	switch gap := time.Duration(p.SyncedCI.LowerNs - p.UnsyncedCI.UpperNs); {
	case p.Distinguishable:
		note = fmt.Sprintf("flush probe: %s: fdatasync costs about %v more%s, the intervals apart: something below waits for a cache flush (or, on a copy-on-write filesystem such as btrfs, for the metadata fdatasync also writes), as on storage with a volatile cache that honours flushes; information, not a verdict",
			measured, roundProbe(p.Synced-p.Unsynced), extra)
	case gap > 0:
		note = fmt.Sprintf("flush probe: %s: the intervals are apart but fdatasync adds only %v%s, under %.0f %% of the write's own cost (or a system call's jitter, %v): too little to tell a flush from noise; either the device has a non-volatile, power-loss-protected cache, or the flush is not sent or is ignored (a barrier=0/nobarrier mount, a hypervisor cache=unsafe, a controller that ignores flushes); the kernel cannot tell which - information, not a PASS",
			measured, roundProbe(p.Synced-p.Unsynced), extra, 100*FlushProbeRule.MinRatio, FlushProbeRule.Resolution)
	default:
		note = fmt.Sprintf("flush probe: %s: the intervals overlap, fdatasync costs no more than the write without a flush: either the device has a non-volatile, power-loss-protected cache, or the flush is not sent or is ignored (a barrier=0/nobarrier mount, a hypervisor cache=unsafe, a controller that ignores flushes); the kernel cannot tell which - information, not a PASS; check the mount options and the storage's documentation",
			measured)
	}
	figs = append(figs, result.Figure{Name: "flush_probe_flush_cost_visible", Value: boolValue(p.Distinguishable), Unit: "count",
		Description: fmt.Sprintf("1 when the medians' intervals separate by at least %.0f %% of the write's own cost and %v (fdatasync visibly costs more than the write without a flush), 0 otherwise", 100*FlushProbeRule.MinRatio, FlushProbeRule.Resolution)})
	return figs, note
}

// roundProbe keeps three figures of a sub-microsecond time (tmpfs) and
// whole microseconds of longer ones.
func roundProbe(d time.Duration) time.Duration {
	if d < 10*time.Microsecond {
		return d.Round(10 * time.Nanosecond)
	}
	return d.Round(time.Microsecond)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
