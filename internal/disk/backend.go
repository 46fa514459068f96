package disk

import (
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// pageSize is bbolt's page size on Linux (the OS page size).
const pageSize = 4096

// BackendParams are the settings of the bbolt commit workload.
type BackendParams struct {
	Pages      int           // dirty 4 KiB pages written per commit
	DBSize     int64         // size of the db file they land in
	Interval   time.Duration // time between commit starts; 0: back to back
	MinRuntime time.Duration
	MinSamples int64
	Runtime    time.Duration // cap
}

const backendDescription = "bbolt commits: scattered 4 KiB page writes, fdatasync, the meta page, fdatasync; commit latency judged against the 25 ms p99"

var backendSpec = Spec{
	Name:        "backend",
	Description: backendDescription,
	Short:       "Time bbolt's commits (scattered page writes, two fdatasyncs) against the 25 ms p99",
	InAll:       true,
	Params: []Param{
		{Name: "pages", Usage: "dirty 4 KiB pages written per commit"},
		{Name: "db-size", Usage: "size of the db file the pages are scattered over"},
		{Name: "interval", Usage: "time between commit starts (etcd batches every 100ms); 0: back to back"},
		{Name: "runtime", Usage: "cap on the run's time"},
		{Name: "min-runtime", Usage: "never stop earlier"},
	},
	Build: func(p Preset, s *Settings) (Workload, error) {
		b := p.Backend
		s.Integer("pages", &b.Pages, 1, 100000)
		s.Size("db-size", &b.DBSize)
		s.Duration("interval", &b.Interval, true)
		s.Duration("runtime", &b.Runtime, false)
		s.Duration("min-runtime", &b.MinRuntime, true)
		if s.err != nil {
			return nil, s.err
		}
		if b.DBSize < int64(b.Pages+2)*pageSize {
			return nil, BadSetting(ErrBadParam, "--db-size must hold at least %d pages", b.Pages+2)
		}
		return backendWorkload{p: b}, nil
	},
}

type backendWorkload struct{ p BackendParams }

func (w backendWorkload) SpaceNeeded() int64 { return w.p.DBSize + 4*mib }

// rule returns the adaptive stop rule for commits, judged against th.
func (p BackendParams) rule(th verdict.Thresholds) stats.StopRule {
	return stats.StopRule{
		Threshold: units.FromSeconds(th.BackendCommitP99.Limit), Quantile: 0.99, Confidence: 0.95,
		MinSamples: p.MinSamples, MinDuration: p.MinRuntime, MaxDuration: p.Runtime, Interval: time.Second,
	}
}

func (w backendWorkload) Run(ctx context.Context, env Env) (result.Workload, error) {
	p := w.p
	dir, done, err := Workdir(env.Dir, "backend")
	if err != nil {
		return result.Workload{}, err
	}
	defer done()
	db, err := openBackendDB(filepath.Join(dir, "db"), p.DBSize)
	if err != nil {
		return result.Workload{}, err
	}
	defer db.close()
	stop, release := stopOnCancel(ctx)
	defer release()

	sm := newSampled(p.rule(env.Thresholds), ModeAdaptive, env.OnSecond)
	m := StartMeter(env.Root, DeviceName(env))
	err = db.commits(p, sm, stop, time.Now().Add(p.Runtime), nil)
	proc, dev := m.Stop()
	if err != nil {
		return result.Workload{}, err
	}
	interrupted := stop.Load()
	note := ""
	if interrupted {
		sm.closeOpenSecond()
	} else {
		note = sm.finish()
	}
	wl, commit, err := db.workload(p, sm)
	wl.Process, wl.Device = proc, dev
	if err != nil {
		return wl, err
	}
	if interrupted {
		return wl, ctx.Err()
	}
	if note != "" {
		wl.Notes = append(wl.Notes, note)
	}
	th := env.Thresholds
	wl.Verdicts = []verdict.Verdict{verdict.JudgeQuantile(th.BackendCommitP99, th.WarnMargin, verdict.QuantileFigures{
		Value: commit.pq, CI: *commit.latency.P99CI, Outcome: sm.Decision.Outcome, Level: sm.Rule.Confidence,
		Method: commit.method, Bounds: commit.bounds, RunLonger: th.RunLonger,
	}, "slow commits make applies and compactions slow and hold etcd's backend lock; put the data dir on faster storage or remove competing writers")}
	return wl, nil
}

// backendDB is a db-like file whose pages commits overwrite.
type backendDB struct {
	path  string
	fd    int
	pages int64
	buf   []byte
	syncs *hdr.Histogram
	rnd   *mrand.Rand
	txid  int64
	bytes int64
	// hwm is the page after the last one in use and filesz the file's
	// size, for the pages grow adds past the prefilled ones.
	hwm    int64
	filesz int64
	// raw makes fdatasync a raw system call that keeps this thread's P
	// (see rawio.go); background writers that share the CPU with the WAL
	// loop use ordinary ones.
	raw bool
}

// openBackendDB creates the file and writes it whole before any commit is
// timed: bbolt's pages exist before transactions overwrite them.
func openBackendDB(path string, size int64) (*backendDB, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	db := &backendDB{path: path, fd: fd, pages: size / pageSize, buf: make([]byte, pageSize),
		syncs: stats.NewLatencyHistogram(), rnd: mrand.New(mrand.NewPCG(1, 2)), raw: true}
	chunk := make([]byte, mib)
	if _, err := rand.Read(chunk); err != nil {
		db.close()
		return nil, err
	}
	for off := int64(0); off < db.pages*pageSize; off += int64(len(chunk)) {
		n := min(int64(len(chunk)), db.pages*pageSize-off)
		if err := pwriteFull(fd, chunk[:n], off); err != nil {
			db.close()
			return nil, fmt.Errorf("filling %s: %w", path, err)
		}
	}
	if err := unix.Fdatasync(fd); err != nil {
		db.close()
		return nil, fmt.Errorf("fdatasync %s: %w", path, err)
	}
	copy(db.buf, chunk)
	return db, nil
}

func (db *backendDB) close() { unix.Close(db.fd) }

func (db *backendDB) sync() error {
	if db.raw {
		return rawFdatasync(db.fd)
	}
	return unix.Fdatasync(db.fd)
}

// maxCommitPages bounds the pages entries add to one commit.
const maxCommitPages = 4096

// growChunk is how much bbolt extends its file by at a time once it is
// larger than that (its AllocSize), and growCap how far the background
// writer of wal-under-load lets its file grow before it starts over.
const (
	growChunk = 16 * mib
	growCap   = 64 * mib
)

// grow appends to dirty n new pages at the end of the data, as bbolt
// allocates the pages of a growing database: when they pass the end of
// the file, the file is first extended by growChunk with ftruncate
// (leaving a hole) and fsynced, as bbolt's grow does. Writing into the
// hole makes the filesystem allocate blocks, so the commit's fdatasync
// also commits metadata through the journal, where it queues with the
// WAL's own fdatasyncs - pages overwritten in place never do that. After
// growCap bytes the file is truncated back to the prefilled pages (which
// frees the grown blocks on every filesystem) and grows again.
func (db *backendDB) grow(dirty []int64, n int64) ([]int64, error) {
	if n == 0 {
		return dirty, nil
	}
	base := db.pages * pageSize
	if db.hwm < db.pages || (db.hwm+n)*pageSize > base+growCap {
		if db.filesz > base {
			if err := unix.Ftruncate(db.fd, base); err != nil {
				return dirty, fmt.Errorf("truncating %s back to %d bytes: %w", db.path, base, err)
			}
		}
		db.hwm, db.filesz = db.pages, base
	}
	for i := range n {
		dirty = append(dirty, db.hwm+i)
	}
	db.hwm += n
	if need := db.hwm * pageSize; need > db.filesz {
		db.filesz = min(need+growChunk, base+growCap)
		if err := unix.Ftruncate(db.fd, db.filesz); err != nil {
			return dirty, fmt.Errorf("extending %s: %w", db.path, err)
		}
		if err := unix.Fsync(db.fd); err != nil {
			return dirty, fmt.Errorf("fsync %s: %w", db.path, err)
		}
	}
	return dirty, nil
}

// commits runs commits until the rule decides, deadline passes or stop is
// set. Each commit writes the dirty pages in ascending order (as bbolt
// does), fdatasyncs, writes the meta page (bbolt alternates pages 0 and 1)
// and fdatasyncs again. A commit writes p.Pages pages, or with durable
// set, p.Pages plus the pages that hold the bytes added to durable since
// the last commit (up to maxCommitPages more): etcd's backend keys each
// applied entry by its revision, so the entries committed to the WAL since
// the last backend commit land in new leaf pages of about their size, and
// a busier WAL makes larger commits, as in etcd. Those pages are added at
// the end of a growing file (see grow), as a database that is not
// compacted meanwhile grows.
func (db *backendDB) commits(p BackendParams, sm *Sampled, stop *atomic.Bool, deadline time.Time, durable *atomic.Int64) error {
	dirty := make([]int64, p.Pages, p.Pages+maxCommitPages)
	start := time.Now()
	sm.begin(start)
	next := start
	for !stop.Load() {
		if p.Interval > 0 {
			if d := time.Until(next); d > 0 {
				time.Sleep(d)
			}
			next = next.Add(p.Interval)
		}
		n := min(p.Pages, int(db.pages-2))
		dirty = dirty[:n]
		for i := range dirty {
			dirty[i] = 2 + db.rnd.Int64N(db.pages-2)
		}
		slices.Sort(dirty)
		t0 := time.Now()
		if durable != nil {
			var err error
			if dirty, err = db.grow(dirty, min((durable.Swap(0)+pageSize-1)/pageSize, maxCommitPages)); err != nil {
				return err
			}
		}
		for _, pg := range dirty {
			if err := pwriteFull(db.fd, db.buf, pg*pageSize); err != nil {
				return fmt.Errorf("write to %s: %w", db.path, err)
			}
		}
		t1 := time.Now()
		if err := db.sync(); err != nil {
			return fmt.Errorf("fdatasync %s: %w", db.path, err)
		}
		t2 := time.Now()
		if err := pwriteFull(db.fd, db.buf, (db.txid%2)*pageSize); err != nil {
			return fmt.Errorf("write to %s: %w", db.path, err)
		}
		t3 := time.Now()
		if err := db.sync(); err != nil {
			return fmt.Errorf("fdatasync %s: %w", db.path, err)
		}
		t4 := time.Now()
		db.txid++
		db.bytes += int64(len(dirty)+1) * pageSize
		stats.Record(db.syncs, t2.Sub(t1))
		stats.Record(db.syncs, t4.Sub(t3))
		if sm.add(t4.Sub(t0), t4) {
			return nil
		}
		if sm.Mode == ModeAdaptive && !deadline.IsZero() && t4.After(deadline) {
			sm.stoppedAt(fmt.Sprintf("reached the %v cap before the verdict was certain", p.Runtime))
			return nil
		}
	}
	sm.stoppedAt("interrupted")
	return nil
}

// workload builds the result record of the commits, without verdicts.
func (db *backendDB) workload(p BackendParams, sm *Sampled) (result.Workload, judged, error) {
	wl := result.Workload{
		Name: "backend", Description: backendDescription,
		Parameters: map[string]any{"pages": p.Pages, "db_size": p.DBSize, "interval_ns": p.Interval.Nanoseconds(),
			"runtime_ns": p.Runtime.Nanoseconds(), "min_duration_ns": p.MinRuntime.Nanoseconds(), "min_samples": p.MinSamples,
			"threshold_ns": sm.Rule.Threshold.Nanoseconds()},
		Stop: result.Stop{Mode: sm.Mode, Reason: sm.Reason, Outcome: sm.Decision.Outcome, Looks: sm.Looks},
		Ops:  sm.Ops, Bytes: db.bytes, DurationNs: sm.Elapsed.Nanoseconds(), Series: sm.Series.Samples,
		Verdicts: []verdict.Verdict{},
	}
	if secs := sm.Elapsed.Seconds(); secs > 0 {
		wl.OpsPerSec, wl.BytesPerSec = float64(sm.Ops)/secs, float64(db.bytes)/secs
	}
	commit, err := sm.judge("commit")
	if err != nil {
		return wl, commit, err
	}
	syncs, err := latency("fdatasync", db.syncs)
	if err != nil {
		return wl, commit, err
	}
	wl.Latencies = []result.Latency{commit.latency, syncs}
	return wl, commit, nil
}
