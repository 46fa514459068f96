package disk

import (
	"fmt"
	mrand "math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"etcdbench/internal/disk/uring"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
)

// runJobs starts n workers running job, each on its own locked OS thread
// and with GOMAXPROCS raised so each keeps a P while it waits in a raw
// system call (as fio's jobs each have their own thread), and waits for
// them; the first error any of them met is returned.
func runJobs(n int, job func(i int, j *mixedJob)) ([]*mixedJob, error) {
	jobs := make([]*mixedJob, n)
	withThreads(n+1, func() {
		var wg sync.WaitGroup
		for i := range jobs {
			jobs[i] = newMixedJob()
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				job(i, jobs[i])
			}()
		}
		wg.Wait()
	})
	for _, j := range jobs {
		if j.err != nil {
			return jobs, j.err
		}
	}
	return jobs, nil
}

// runUringJobs runs p.NumJobs workers, each with its own ring keeping
// p.IODepth I/Os in flight, like fio --ioengine=io_uring --numjobs --iodepth.
// The read and write latencies are completion latencies (fio's clat): from
// the return of the io_uring_enter that submitted the request to the reaping
// of its completion. The submit histogram times each io_uring_enter call
// that submits (fio's slat, per call rather than per request).
func runUringJobs(fd int, p MixedParams, deadline time.Time, stop *atomic.Bool) ([]*mixedJob, error) {
	return runJobs(p.NumJobs, func(i int, j *mixedJob) {
		j.err = uringJob(fd, p, uint64(i), deadline, stop, j)
	})
}

func uringJob(fd int, p MixedParams, seed uint64, deadline time.Time, stop *atomic.Bool, j *mixedJob) error {
	depth := p.IODepth
	ring, err := uring.New(uint32(depth))
	if err != nil {
		return err
	}
	defer ring.Close()
	ring.UseRawSyscalls() // runJobs locked this thread and gave it a P of its own
	bufs, unmap, err := uring.AlignedBuffers(depth, int(p.BlockSize))
	if err != nil {
		return err
	}
	defer unmap()
	rnd := mrand.New(mrand.NewPCG(seed, 0x6d69786564))
	blocks := p.Size / p.BlockSize
	issued := make([]time.Time, depth)
	isWrite := make([]bool, depth)
	cqes := make([]uring.CQE, depth)
	fresh := make([]int, 0, depth) // slots prepared since the last submit
	prep := func(slot int) {
		off := rnd.Int64N(blocks) * p.BlockSize
		isWrite[slot] = rnd.IntN(100) >= p.ReadMix
		fresh = append(fresh, slot)
		if isWrite[slot] {
			ring.PrepWrite(fd, bufs[slot], off, uint64(slot))
		} else {
			ring.PrepRead(fd, bufs[slot], off, uint64(slot))
		}
	}
	submit := func() error {
		t0 := time.Now()
		_, err := ring.Submit(0)
		t1 := time.Now()
		stats.Record(j.submit, t1.Sub(t0))
		for _, slot := range fresh {
			issued[slot] = t1
		}
		fresh = fresh[:0]
		return err
	}
	for slot := range depth {
		prep(slot)
	}
	if err := submit(); err != nil {
		return err
	}
	inflight := depth
	for inflight > 0 {
		if err := ring.WaitCQE(); err != nil {
			return err
		}
		n := ring.Reap(cqes)
		now := time.Now()
		more := !stop.Load() && now.Before(deadline)
		prepared := 0
		for _, c := range cqes[:n] {
			slot := int(c.UserData)
			if c.Res < 0 {
				return fmt.Errorf("io_uring I/O on the test file: %w", unix.Errno(-c.Res))
			}
			if int64(c.Res) != p.BlockSize {
				return fmt.Errorf("%w: io_uring I/O moved %d of %d bytes", ErrShortWrite, c.Res, p.BlockSize)
			}
			if isWrite[slot] {
				stats.Record(j.write, now.Sub(issued[slot]))
				j.writes++
			} else {
				stats.Record(j.read, now.Sub(issued[slot]))
				j.reads++
			}
			inflight--
			if more {
				prep(slot)
				inflight++
				prepared++
			}
		}
		if prepared > 0 {
			if err := submit(); err != nil {
				return err
			}
		}
	}
	return nil
}

// runPsyncJobs is the fallback when io_uring is refused: one goroutine per
// I/O in flight (numjobs x iodepth), each on its own thread doing raw
// pread/pwrite, as fio's psync engine does with that many jobs.
func runPsyncJobs(fd int, p MixedParams, deadline time.Time, stop *atomic.Bool) ([]*mixedJob, error) {
	n := p.NumJobs * p.IODepth
	bufs, unmap, err := uring.AlignedBuffers(n, int(p.BlockSize))
	if err != nil {
		return nil, err
	}
	defer unmap()
	return runJobs(n, func(i int, j *mixedJob) {
		rnd := mrand.New(mrand.NewPCG(uint64(i), 0x7073796e63))
		blocks := p.Size / p.BlockSize
		buf := bufs[i]
		for !stop.Load() {
			off := rnd.Int64N(blocks) * p.BlockSize
			write := rnd.IntN(100) >= p.ReadMix
			t0 := time.Now()
			var err error
			if write {
				err = rawPwriteFull(fd, buf, off)
			} else {
				var n int
				if n, err = rawPread(fd, buf, off); err == nil && int64(n) != p.BlockSize {
					err = fmt.Errorf("short read: %d of %d bytes", n, p.BlockSize)
				}
			}
			t1 := time.Now()
			if err != nil {
				j.err = fmt.Errorf("I/O on the test file: %w", err)
				return
			}
			if write {
				stats.Record(j.write, t1.Sub(t0))
				j.writes++
			} else {
				stats.Record(j.read, t1.Sub(t0))
				j.reads++
			}
			if !t1.Before(deadline) {
				return
			}
		}
	})
}

// explainMixed says in plain words what the mixed figures mean for etcd.
func explainMixed(wl result.Workload) []string {
	var out []string
	p := wl.Parameters
	inflight := intOf(p["numjobs"]) * intOf(p["iodepth"])
	out = append(out, fmt.Sprintf("%.0f random I/Os per second with %d in flight: these are concurrent IOPS, the figure cloud providers quote. etcd's WAL needs sequential synced IOPS (one write+fdatasync at a time, the wal workload), which are usually 10-100 times fewer on the same disk.",
		wl.OpsPerSec, inflight))
	if r := wl.Latency("read"); r != nil && r.Count > 0 {
		p99, _ := r.At(99)
		out = append(out, fmt.Sprintf("read p99 %v: a bbolt read that misses the page cache waits about this long while the disk is this busy.", time.Duration(p99).Round(time.Microsecond)))
	}
	if d := wl.Device; d != nil {
		switch {
		case d.Utilization >= 0.8:
			out = append(out, fmt.Sprintf("the device was busy %.0f %% of the time with %.1f I/Os queued on average: the disk was (close to) the limit, and every other writer on it (etcd's WAL included) waits in the same queue.", 100*d.Utilization, d.AvgQueue))
		default:
			out = append(out, fmt.Sprintf("the device was busy %.0f %% of the time (%.1f I/Os queued on average): it had headroom, so the limit was elsewhere (queue depth, CPU, or a throttle in front of a virtual disk).", 100*d.Utilization, d.AvgQueue))
		}
	}
	if pr := wl.Process; pr != nil && wl.Ops > 0 {
		cpu := time.Duration(pr.UserNs + pr.SystemNs)
		busy := cpu.Seconds() / (float64(wl.DurationNs) / 1e9) / float64(runtime.NumCPU())
		line := fmt.Sprintf("etcdbench used %.1f us of CPU per I/O (%.0f %% of all CPUs)", float64(cpu.Microseconds())/float64(wl.Ops), 100*busy)
		if busy >= 0.9 {
			line += ": the CPUs were saturated, so the figures may be limited by CPU rather than by the disk"
		}
		out = append(out, line+".")
	}
	return out
}

func intOf(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case int64:
		return int(x)
	case float64:
		return int(x)
	}
	return 0
}
