package disk

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/verdict"
)

// RecoveryParams are the settings of the recovery workload.
type RecoveryParams struct {
	BlockSize     int64         // sequential read size
	Size          int64         // db-sized file to read back
	RandomRuntime time.Duration // time for the 4 KiB random reads
	Runtime       time.Duration // cap on the sequential read
}

const recoveryDescription = "a restarting member: a sequential read of a db-sized file, then 4 KiB random reads, with the page cache defeated; bandwidth, IOPS and time to read 100 MB and 1 GB"

var recoverySpec = Spec{
	Name:        "recovery",
	Description: recoveryDescription,
	Short:       "Time a restarting member's reads: the db in sequence, then 4 KiB at random",
	InAll:       true,
	Params: []Param{
		{Name: "bs", Usage: "bytes per sequential read (a multiple of 4k)"},
		{Name: "size", Usage: "size of the db-like file that is read back"},
		{Name: "random-runtime", Usage: "time spent on 4 KiB random reads"},
		{Name: "runtime", Usage: "cap on the sequential read"},
	},
	Build: func(p Preset, s *Settings) (Workload, error) {
		r := p.Recovery
		s.Size("bs", &r.BlockSize)
		s.Size("size", &r.Size)
		s.Duration("random-runtime", &r.RandomRuntime, true)
		s.Duration("runtime", &r.Runtime, false)
		if s.err != nil {
			return nil, s.err
		}
		if r.BlockSize%pageSize != 0 || r.BlockSize > r.Size {
			return nil, BadSetting(ErrBadParam, "--bs must be a multiple of 4k and at most --size")
		}
		return recoveryWorkload{p: r}, nil
	},
}

type recoveryWorkload struct{ p RecoveryParams }

func (w recoveryWorkload) SpaceNeeded() int64 { return w.p.Size + 4*mib }

// Page-cache strategies, recorded as the result's engine.
const (
	engineDirect  = "O_DIRECT"
	engineFadvise = "posix_fadvise(DONTNEED)"
)

func (w recoveryWorkload) Run(ctx context.Context, env Env) (result.Workload, error) {
	p := w.p
	dir, done, err := Workdir(env.Dir, "recovery")
	if err != nil {
		return result.Workload{}, err
	}
	defer done()
	path := filepath.Join(dir, "db")
	prep := time.Now()
	if err := writeFile(path, p.Size); err != nil {
		return result.Workload{}, err
	}
	prepTime := time.Since(prep)
	rd, err := openUncached(path)
	if err != nil {
		return result.Workload{}, err
	}
	defer rd.close()
	stop, release := stopOnCancel(ctx)
	defer release()

	// The reads are raw system calls on this locked thread (see rawio.go).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	m := StartMeter(env.Root, DeviceName(env))
	seqH, randH := stats.NewLatencyHistogram(), stats.NewLatencyHistogram()
	read, seqTime, err := rd.sequential(p, seqH, stop)
	if err != nil {
		return result.Workload{}, err
	}
	if err := rd.forget(); err != nil {
		return result.Workload{}, err
	}
	randOps, randTime, err := rd.random(read, p.RandomRuntime, randH, stop)
	if err != nil {
		return result.Workload{}, err
	}
	wl := result.Workload{
		Name: "recovery", Description: recoveryDescription, Engine: rd.engine,
		Parameters: map[string]any{"block_size": p.BlockSize, "size": p.Size, "random_runtime_ns": p.RandomRuntime.Nanoseconds(), "runtime_ns": p.Runtime.Nanoseconds()},
		Stop:       result.Stop{Mode: ModeSize, Reason: fmt.Sprintf("read %d bytes, then random reads for %v", read, randTime.Round(time.Millisecond))},
		Ops:        read/p.BlockSize + randOps, Bytes: read + randOps*pageSize,
		DurationNs: (seqTime + randTime).Nanoseconds(), Series: []stats.SecondSample{}, Verdicts: []verdict.Verdict{},
	}
	wl.Process, wl.Device = m.Stop()
	if secs := (seqTime + randTime).Seconds(); secs > 0 {
		wl.OpsPerSec, wl.BytesPerSec = float64(wl.Ops)/secs, float64(wl.Bytes)/secs
	}
	for _, l := range []struct {
		name string
		h    *hdr.Histogram
	}{{"sequential-read", seqH}, {"random-read", randH}} {
		lat, err := latency(l.name, l.h)
		if err != nil {
			return wl, err
		}
		wl.Latencies = append(wl.Latencies, lat)
	}
	bw := float64(read) / seqTime.Seconds()
	wl.Figures = []result.Figure{
		{Name: "sequential_read_bandwidth", Value: bw, Unit: "B/s", Description: "reading the db-sized file back, page cache defeated"},
		{Name: "time_to_read_100MB", Value: 100e6 / bw, Unit: "s", Description: "at that bandwidth: a small cluster's db"},
		{Name: "time_to_read_1GB", Value: 1e9 / bw, Unit: "s", Description: "at that bandwidth: a large cluster's db"},
		{Name: "prepare_time", Value: prepTime.Seconds(), Unit: "s", Description: "writing the file before the timed reads (not part of the figures)"},
	}
	if randTime > 0 {
		wl.Figures = append(wl.Figures, result.Figure{Name: "random_read_iops", Value: float64(randOps) / randTime.Seconds(), Unit: "ops/s", Description: "4 KiB reads at random offsets, one at a time"})
	}
	if rd.engine == engineFadvise {
		wl.Notes = append(wl.Notes, "O_DIRECT is not supported here: the page cache was dropped with posix_fadvise(DONTNEED) before each phase instead")
	}
	if stop.Load() {
		return wl, ctx.Err()
	}
	if read < p.Size {
		wl.Notes = append(wl.Notes, fmt.Sprintf("the sequential read stopped at the %v cap after %d of %d bytes", p.Runtime, read, p.Size))
	}
	wl.Verdicts = append(wl.Verdicts, verdict.JudgeBandwidth(env.Thresholds.RecoveryBW, env.Thresholds.RecoveryBWLarge,
		env.Thresholds.RecoveryBW.ID, "bandwidth to read the db back", bw))
	return wl, nil
}

// writeFile writes size random bytes to a new file at path, durably.
func writeFile(path string, size int64) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	defer unix.Close(fd)
	chunk := make([]byte, mib)
	if _, err := rand.Read(chunk); err != nil {
		return err
	}
	for off := int64(0); off < size; off += mib {
		n := min(mib, size-off)
		if err := pwriteFull(fd, chunk[:n], off); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if err := unix.Fdatasync(fd); err != nil {
		return fmt.Errorf("fdatasync %s: %w", path, err)
	}
	return nil
}

// uncachedReader reads a file without help from the page cache.
type uncachedReader struct {
	path   string
	fd     int
	size   int64
	engine string
	buf    []byte // page-aligned, as O_DIRECT needs
	unmap  func() error
}

// openUncached opens path with O_DIRECT, or, where the filesystem refuses
// it (tmpfs, some FUSE), buffered with the cache dropped by posix_fadvise.
func openUncached(path string) (*uncachedReader, error) {
	r := &uncachedReader{path: path, engine: engineDirect}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EINVAL) {
		r.engine = engineFadvise
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	r.fd = fd
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	r.size = st.Size
	if err := r.forget(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return r, nil
}

func (r *uncachedReader) close() {
	unix.Close(r.fd)
	if r.unmap != nil {
		_ = r.unmap()
	}
}

// forget drops the file's pages from the cache when O_DIRECT is not used.
func (r *uncachedReader) forget() error {
	if r.engine != engineFadvise {
		return nil
	}
	if err := unix.Fadvise(r.fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("posix_fadvise %s: %w", r.path, err)
	}
	return nil
}

// buffer returns a page-aligned buffer of n bytes.
func (r *uncachedReader) buffer(n int64) ([]byte, error) {
	if int64(len(r.buf)) >= n {
		return r.buf[:n], nil
	}
	if r.unmap != nil {
		_ = r.unmap()
	}
	b, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("allocating an aligned buffer: %w", err)
	}
	r.buf, r.unmap = b, func() error { return unix.Munmap(b) }
	return b, nil
}

// sequential reads the file from the start in p.BlockSize blocks.
func (r *uncachedReader) sequential(p RecoveryParams, h *hdr.Histogram, stop *atomic.Bool) (int64, time.Duration, error) {
	buf, err := r.buffer(p.BlockSize)
	if err != nil {
		return 0, 0, err
	}
	var off int64
	start := time.Now()
	deadline := start.Add(p.Runtime)
	for off < r.size && !stop.Load() {
		t0 := time.Now()
		n, err := rawPread(r.fd, buf, off)
		t1 := time.Now()
		if err != nil {
			return off, t1.Sub(start), fmt.Errorf("reading %s: %w", r.path, err)
		}
		if n == 0 {
			break
		}
		stats.Record(h, t1.Sub(t0))
		off += int64(n)
		if p.Runtime > 0 && t1.After(deadline) {
			break
		}
	}
	return off, time.Since(start), nil
}

// random reads 4 KiB pages at random offsets within the first span bytes,
// one at a time, for d.
func (r *uncachedReader) random(span int64, d time.Duration, h *hdr.Histogram, stop *atomic.Bool) (int64, time.Duration, error) {
	pages := span / pageSize
	if d <= 0 || pages == 0 {
		return 0, 0, nil
	}
	buf, err := r.buffer(pageSize)
	if err != nil {
		return 0, 0, err
	}
	rnd := mrand.New(mrand.NewPCG(3, 4))
	var ops int64
	start := time.Now()
	end := start.Add(d)
	for !stop.Load() {
		off := rnd.Int64N(pages) * pageSize
		t0 := time.Now()
		if _, err := rawPread(r.fd, buf, off); err != nil {
			return ops, t0.Sub(start), fmt.Errorf("reading %s: %w", r.path, err)
		}
		t1 := time.Now()
		stats.Record(h, t1.Sub(t0))
		ops++
		if t1.After(end) {
			break
		}
	}
	return ops, time.Since(start), nil
}
