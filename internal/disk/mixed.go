package disk

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"etcdbench/internal/disk/uring"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/verdict"
)

// MixedParams are the settings of the mixed random I/O workload.
type MixedParams struct {
	BlockSize int64
	Size      int64 // the file the I/O is spread over
	Runtime   time.Duration
	NumJobs   int
	IODepth   int
	ReadMix   int    // percent of reads
	Engine    string // auto, io_uring or psync
}

// Engines of the mixed workload.
const (
	EngineAuto    = "auto"
	EngineIOUring = "io_uring"
	EnginePsync   = "psync"
)

const mixedDescription = "mixed random I/O like a busy etcd host's disk: 4 KiB reads and writes at queue depth, O_DIRECT; IOPS, bandwidth, latency, CPU and device utilisation"

var mixedSpec = Spec{
	Name:        "mixed",
	Description: mixedDescription,
	Short:       "Measure random 4 KiB reads and writes at queue depth, as on a busy etcd host",
	InAll:       true,
	Params: []Param{
		{Name: "bs", Usage: "bytes per I/O (a multiple of 4k)"},
		{Name: "size", Usage: "size of the file the I/O is spread over"},
		{Name: "runtime", Usage: "run time"},
		{Name: "numjobs", Usage: "workers, each with its own queue"},
		{Name: "iodepth", Usage: "I/Os each worker keeps in flight"},
		{Name: "rwmixread", Usage: "percent of reads"},
		{Name: "engine", Usage: "auto (io_uring, else psync), io_uring or psync"},
	},
	Build: func(p Preset, s *Settings) (Workload, error) {
		m := p.Mixed
		s.Size("bs", &m.BlockSize)
		s.Size("size", &m.Size)
		s.Duration("runtime", &m.Runtime, false)
		s.Integer("numjobs", &m.NumJobs, 1, 256)
		s.Integer("iodepth", &m.IODepth, 1, 1024)
		s.Integer("rwmixread", &m.ReadMix, 0, 100)
		s.Choice("engine", &m.Engine, EngineAuto, EngineIOUring, EnginePsync)
		if s.err != nil {
			return nil, s.err
		}
		if m.BlockSize%pageSize != 0 || m.BlockSize > m.Size {
			return nil, BadSetting(ErrBadParam, "--bs must be a multiple of 4k and at most --size")
		}
		return mixedWorkload{p: m}, nil
	},
}

type mixedWorkload struct{ p MixedParams }

func (w mixedWorkload) SpaceNeeded() int64 { return w.p.Size + 4*mib }

// chooseEngine resolves "auto" and checks that io_uring works if asked
// for: when the kernel or a seccomp profile refuses it, --engine io_uring
// fails with uring's ErrUnsupported.
func chooseEngine(want string) (string, string, error) {
	if want == EnginePsync {
		return EnginePsync, "", nil
	}
	err := uring.Probe()
	switch {
	case err == nil:
		return EngineIOUring, "", nil
	case want == EngineIOUring:
		return "", "", fmt.Errorf("%w (use --engine psync)", err)
	}
	return EnginePsync, fmt.Sprintf("io_uring is not available (%v): used pread/pwrite from %s", err, "one goroutine per I/O in flight"), nil
}

// mixedJob is one worker's share: its own histograms, merged at the end, so
// the hot path takes no lock.
type mixedJob struct {
	read, write, submit *hdr.Histogram
	reads, writes       int64
	err                 error
}

func newMixedJob() *mixedJob {
	return &mixedJob{read: stats.NewLatencyHistogram(), write: stats.NewLatencyHistogram(), submit: stats.NewLatencyHistogram()}
}

func (w mixedWorkload) Run(ctx context.Context, env Env) (result.Workload, error) {
	p := w.p
	engine, engineNote, err := chooseEngine(p.Engine)
	if err != nil {
		return result.Workload{}, err
	}
	dir, done, err := Workdir(env.Dir, "mixed")
	if err != nil {
		return result.Workload{}, err
	}
	defer done()
	path := filepath.Join(dir, "data")
	if err := writeFile(path, p.Size); err != nil {
		return result.Workload{}, err
	}
	direct := true
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EINVAL) {
		direct = false
		fd, err = unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return result.Workload{}, fmt.Errorf("opening %s: %w", path, err)
	}
	defer unix.Close(fd)
	stop, release := stopOnCancel(ctx)
	defer release()

	m := StartMeter(env.Root, DeviceName(env))
	start := time.Now()
	deadline := start.Add(p.Runtime)
	var jobs []*mixedJob
	if engine == EngineIOUring {
		jobs, err = runUringJobs(fd, p, deadline, stop)
	} else {
		jobs, err = runPsyncJobs(fd, p, deadline, stop)
	}
	elapsed := time.Since(start)
	proc, dev := m.Stop()
	if err != nil {
		return result.Workload{}, err
	}
	wl, err := mixedResult(p, engine, jobs, elapsed)
	if err != nil {
		return wl, err
	}
	wl.Process, wl.Device = proc, dev
	if engineNote != "" {
		wl.Notes = append(wl.Notes, engineNote)
	}
	if !direct {
		wl.Notes = append(wl.Notes, "the filesystem refused O_DIRECT: buffered I/O was used, so reads may come from the page cache")
	}
	if stop.Load() {
		return wl, ctx.Err()
	}
	wl.Notes = append(wl.Notes, explainMixed(wl)...)
	return wl, nil
}

// mixedResult merges the jobs into the result record.
func mixedResult(p MixedParams, engine string, jobs []*mixedJob, elapsed time.Duration) (result.Workload, error) {
	all := newMixedJob()
	for _, j := range jobs {
		all.read.Merge(j.read)
		all.write.Merge(j.write)
		all.submit.Merge(j.submit)
		all.reads += j.reads
		all.writes += j.writes
	}
	ops := all.reads + all.writes
	wl := result.Workload{
		Name: "mixed", Description: mixedDescription, Engine: engine,
		Parameters: map[string]any{"block_size": p.BlockSize, "size": p.Size, "runtime_ns": p.Runtime.Nanoseconds(),
			"numjobs": p.NumJobs, "iodepth": p.IODepth, "rwmixread": p.ReadMix, "engine": engine},
		Stop: result.Stop{Mode: ModeTime, Reason: fmt.Sprintf("ran for %v", p.Runtime)},
		Ops:  ops, Bytes: ops * p.BlockSize, DurationNs: elapsed.Nanoseconds(),
		Series: []stats.SecondSample{}, Verdicts: []verdict.Verdict{},
	}
	secs := elapsed.Seconds()
	if secs > 0 {
		wl.OpsPerSec, wl.BytesPerSec = float64(ops)/secs, float64(wl.Bytes)/secs
	}
	names := []struct {
		name string
		h    *hdr.Histogram
	}{{"read", all.read}, {"write", all.write}}
	if engine == EngineIOUring {
		names = append(names, struct {
			name string
			h    *hdr.Histogram
		}{"submit", all.submit})
	}
	for _, n := range names {
		l, err := latency(n.name, n.h)
		if err != nil {
			return wl, err
		}
		wl.Latencies = append(wl.Latencies, l)
	}
	if secs > 0 {
		wl.Figures = []result.Figure{
			{Name: "read_iops", Value: float64(all.reads) / secs, Unit: "ops/s", Description: "random reads completed per second"},
			{Name: "write_iops", Value: float64(all.writes) / secs, Unit: "ops/s", Description: "random writes completed per second"},
			{Name: "read_bandwidth", Value: float64(all.reads*p.BlockSize) / secs, Unit: "B/s", Description: "bytes read per second"},
			{Name: "write_bandwidth", Value: float64(all.writes*p.BlockSize) / secs, Unit: "B/s", Description: "bytes written per second"},
		}
	}
	return wl, nil
}
