package disk

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"etcdbench/internal/result"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// UnderLoadParams are the settings of wal-under-load.
type UnderLoadParams struct {
	// Background lists the writers that run while the WAL is measured:
	// backend (bbolt commits every BackendInterval, as etcd batches them),
	// snapshot (sequential 1 MiB writes with a final fdatasync, repeated) and
	// compaction (sequential rewrite with periodic fdatasync).
	Background      string
	BackendInterval time.Duration
	// Clients concurrent clients propose EntryBytes-byte entries that the
	// measured WAL batches into one write per fdatasync, as raft does; 1
	// measures the plain loop of the idle WAL.
	Clients    int
	EntryBytes int
	// Rate > 0 replaces the clients by an open loop: EntryBytes-byte
	// entries arrive at Rate per second on a schedule (see openloop.go).
	Rate float64
}

var backgroundWriters = []string{"backend", "snapshot", "compaction"}

const underLoadDescription = "the WAL as etcd drives it under load: 16 concurrent clients whose entries raft batches into each write, while bbolt-like commits of what the WAL took in run every 100 ms on the same filesystem; side by side with the idle WAL"

var underLoadSpec = Spec{
	Name:        "wal-under-load",
	Description: underLoadDescription,
	Short:       "Time the WAL under load: grouped clients' entries, bbolt commits beside them",
	InAll:       true,
	Params: []Param{
		{Name: "background", Usage: "writers running meanwhile, comma-separated: backend, snapshot, compaction"},
		{Name: "backend-interval", Usage: "time between the background bbolt commits"},
		{Name: "clients", Usage: "concurrent clients whose entries the WAL batches into each write (1: one block per write, as the idle WAL)"},
		{Name: "entry-bytes", Usage: "bytes per WAL entry (about 370 for an 8-byte key and a 256-byte value)"},
		{Name: "rate", Usage: "open loop: entries per second arriving on a schedule whatever the disk does, each write() carrying every entry waiting (instead of --clients)"},
		{Name: "bs", Usage: "bytes per write() of the idle WAL baseline"},
		{Name: "runtime", Usage: "cap on each WAL phase"},
		{Name: "min-runtime", Usage: "each WAL phase never stops earlier"},
	},
	Build: func(p Preset, s *Settings) (Workload, error) {
		u := p.UnderLoad
		w := p.WAL
		s.Text("background", &u.Background)
		s.Duration("backend-interval", &u.BackendInterval, true)
		s.Integer("clients", &u.Clients, 1, 4096)
		s.Integer("entry-bytes", &u.EntryBytes, 1, 64<<20)
		s.Rate("rate", &u.Rate)
		if s.err == nil && s.Has("rate") && s.Has("clients") {
			return nil, BadSetting(ErrBadParam, "--rate and --clients are alternatives: the rate decides when entries arrive")
		}
		bs := int64(w.BlockSize)
		s.Size("bs", &bs)
		w.BlockSize = int(bs)
		s.Duration("runtime", &w.Runtime, false)
		s.Duration("min-runtime", &w.MinRuntime, true)
		if s.err != nil {
			return nil, s.err
		}
		for _, b := range strings.Split(u.Background, ",") {
			if !slices.Contains(backgroundWriters, b) {
				return nil, BadSetting(ErrBadParam, "--background %q: want a comma-separated list of %v", u.Background, backgroundWriters)
			}
		}
		return underLoadWorkload{u: u, wal: w, backend: p.Backend, seq: p.Snapshot}, nil
	},
}

type underLoadWorkload struct {
	u       UnderLoadParams
	wal     WALParams
	backend BackendParams
	seq     SeqParams
}

// background file sizes: bounded so wal-under-load fits beside the WAL.
const bgFileBytes = 64 * mib

func (w underLoadWorkload) SpaceNeeded() int64 {
	return w.wal.config(verdict.Defaults()).SpaceNeeded() + w.backend.DBSize + growCap + 2*bgFileBytes + 4*mib
}

func (w underLoadWorkload) Run(ctx context.Context, env Env) (result.Workload, error) {
	cfg := w.wal.config(env.Thresholds) // the idle baseline: one block per write
	dir, done, err := Workdir(env.Dir, "wal-under-load")
	if err != nil {
		return result.Workload{}, err
	}
	defer done()

	idle, err := w.baseline(ctx, env, cfg, dir)
	if err != nil {
		return result.Workload{}, err
	}
	bg, err := startBackground(filepath.Join(dir, "bg"), w.u, w.backend)
	if err != nil {
		return result.Workload{}, err
	}
	m := StartMeter(env.Root, DeviceName(env))
	cfg.OnSecond = env.OnSecond
	cfg.Durable = &bg.durable // the WAL's bytes become pages of the next background commit
	switch {
	case w.u.Rate > 0:
		cfg.BlockSize, cfg.Rate = w.u.EntryBytes, w.u.Rate
	case w.u.Clients > 1:
		cfg.BlockSize, cfg.Clients = w.u.EntryBytes, w.u.Clients
	}
	walDir := filepath.Join(dir, "wal")
	if err := unix.Mkdir(walDir, 0o700); err != nil {
		bg.stop()
		return result.Workload{}, fmt.Errorf("creating %s: %w", walDir, err)
	}
	run, runErr := RunWAL(ctx, walDir, cfg)
	bgErr := bg.stop()
	proc, dev := m.Stop()
	if run == nil || (runErr != nil && !run.Cancelled) {
		return result.Workload{}, runErr
	}
	if bgErr != nil {
		return result.Workload{}, fmt.Errorf("background writer: %w", bgErr)
	}
	wl, err := run.Workload(env.Thresholds, env.Facts)
	if err != nil {
		return wl, err
	}
	wl.Name = "wal-under-load"
	if w.u.Rate == 0 {
		wl.Description = underLoadDescription
	} else {
		wl.Description = "the WAL at an offered rate while bbolt-like commits run on the same filesystem: " + OpenLoopDescription
	}
	wl.Parameters["background"] = w.u.Background
	wl.Parameters["backend_interval_ns"] = w.u.BackendInterval.Nanoseconds()
	wl.Process, wl.Device = proc, dev
	idleLat := *idle
	idleLat.Name = "fdatasync-idle"
	wl.Latencies = append(wl.Latencies, idleLat)
	if bg.db != nil {
		commits, err := bg.sm.judge("background-commit")
		if err != nil {
			return wl, err
		}
		wl.Latencies = append(wl.Latencies, commits.latency)
		wl.Figures = append(wl.Figures, result.Figure{Name: "background_commits", Value: float64(bg.sm.Ops), Unit: "ops", Description: "bbolt-like commits the background writer made meanwhile"})
	}
	if n := bg.seqBytes.Load(); n > 0 {
		wl.Figures = append(wl.Figures, result.Figure{Name: "background_sequential_bytes", Value: float64(n), Unit: "B", Description: "bytes the sequential background writers wrote meanwhile"})
	}
	load := wl.Latency(syncLatency)
	for _, p := range []float64{50, 99} {
		lv, _ := load.At(p)
		iv, _ := idleLat.At(p)
		if iv > 0 {
			wl.Figures = append(wl.Figures, result.Figure{Name: fmt.Sprintf("p%.0f_ratio", p), Value: float64(lv) / float64(iv), Unit: "x",
				Description: fmt.Sprintf("fdatasync p%.0f under load / idle", p)})
		}
	}
	if run.Cancelled {
		return wl, runErr
	}
	// Only the p99 verdict applies: the other WAL verdicts belong to the idle disk.
	p99 := wl.Verdicts[0]
	p99.Check, p99.Title = verdict.CheckWALFsyncUnderLoad, "WAL fdatasync p99 under load"
	iv, _ := idleLat.At(99)
	lv, _ := load.At(99)
	p99.Detail += " (" + idleCompared(time.Duration(iv), time.Duration(lv)) + ")"
	keep := []verdict.Verdict{p99}
	for _, v := range wl.Verdicts {
		if v.Check == env.Thresholds.ScheduleLag.ID {
			keep = append(keep, v)
		}
	}
	wl.Verdicts = keep
	return wl, nil
}

// baseline returns the idle WAL's fdatasync latency: the one measured
// earlier in the same run, or a new measurement.
func (w underLoadWorkload) baseline(ctx context.Context, env Env, cfg WALConfig, dir string) (*result.Latency, error) {
	if b := env.Baseline; b != nil && b.Name == "wal" {
		if l := b.Latency(syncLatency); l != nil {
			return l, nil
		}
	}
	idleDir := filepath.Join(dir, "idle")
	if err := unix.Mkdir(idleDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", idleDir, err)
	}
	cfg.OnSecond = env.OnSecond
	run, err := RunWAL(ctx, idleDir, cfg)
	if err != nil {
		return nil, err
	}
	j, err := run.judge(syncLatency)
	if err != nil {
		return nil, err
	}
	if err := RemoveAll(idleDir); err != nil {
		return nil, err
	}
	return &j.latency, nil
}

// background runs the writers of wal-under-load until stop is called.
type background struct {
	flag     atomic.Bool
	wg       sync.WaitGroup
	mu       sync.Mutex
	err      error
	db       *backendDB
	sm       *Sampled
	seqBytes atomic.Int64
	// durable are the WAL bytes made durable since the last background
	// commit, which it writes as pages besides its own.
	durable atomic.Int64
}

func startBackground(dir string, u UnderLoadParams, bp BackendParams) (*background, error) {
	if err := unix.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	bg := &background{}
	for _, name := range strings.Split(u.Background, ",") {
		switch name {
		case "backend":
			db, err := openBackendDB(filepath.Join(dir, "db"), bp.DBSize)
			if err != nil {
				bg.stop()
				return nil, err
			}
			db.raw = false // other goroutines need this P while it waits
			bg.db = db
			bp.Interval = u.BackendInterval
			bg.sm = newSampled(bp.rule(verdict.Defaults()), ModeTime, nil)
			bg.run(func() error { return db.commits(bp, bg.sm, &bg.flag, time.Time{}, &bg.durable) })
		case "snapshot":
			bg.run(func() error { return bg.sequential(filepath.Join(dir, "snap"), mib, 0) })
		case "compaction":
			bg.run(func() error { return bg.sequential(filepath.Join(dir, "compact"), 64*kib, 4*mib) })
		}
	}
	return bg, nil
}

func (bg *background) run(f func() error) {
	bg.wg.Add(1)
	go func() {
		defer bg.wg.Done()
		if err := f(); err != nil {
			bg.mu.Lock()
			if bg.err == nil {
				bg.err = err
			}
			bg.mu.Unlock()
		}
	}()
}

// stop ends every writer, waits for them and returns the first error.
func (bg *background) stop() error {
	bg.flag.Store(true)
	bg.wg.Wait()
	if bg.db != nil {
		bg.db.close()
		bg.sm.closeOpenSecond()
	}
	return bg.err
}

// sequential writes a file of bgFileBytes in bs blocks, with an fdatasync
// every syncEvery bytes (0: only at the end), and starts over.
func (bg *background) sequential(path string, bs, syncEvery int64) error {
	buf := make([]byte, bs)
	if _, err := rand.Read(buf); err != nil {
		return err
	}
	for !bg.flag.Load() {
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return fmt.Errorf("creating %s: %w", path, err)
		}
		var since int64
		for off := int64(0); off < bgFileBytes && !bg.flag.Load(); off += bs {
			if err := pwriteFull(fd, buf, off); err != nil {
				unix.Close(fd)
				return fmt.Errorf("write to %s: %w", path, err)
			}
			bg.seqBytes.Add(bs)
			if since += bs; syncEvery > 0 && since >= syncEvery {
				since = 0
				if err := unix.Fdatasync(fd); err != nil {
					unix.Close(fd)
					return fmt.Errorf("fdatasync %s: %w", path, err)
				}
			}
		}
		err = unix.Fdatasync(fd)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("fdatasync %s: %w", path, err)
		}
	}
	return nil
}

// RemoveAll removes dir and what it holds, saying which on failure.
func RemoveAll(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return nil
}

// idleCompared says how the p99 under load compares with the idle one,
// the ratio always 1 or more: "0.4x slower" read as a slowdown.
func idleCompared(idle, loaded time.Duration) string {
	const same = 1.05
	r := float64(loaded) / float64(max(idle, 1))
	switch {
	case r >= same:
		return fmt.Sprintf("idle p99 %s, %.1fx slower under load", units.FormatDuration(idle), r)
	case loaded > 0 && 1/r >= same:
		return fmt.Sprintf("idle p99 %s, %.1fx faster under load", units.FormatDuration(idle), 1/r)
	}
	return fmt.Sprintf("idle p99 %s, about the same under load", units.FormatDuration(idle))
}
