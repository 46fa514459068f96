package zoo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"etcdbench/internal/fusedelay"
)

// Default is the zoo the capacity bench runs over: the plain disk, four
// write IOPS caps from 500 to 5,000, a bandwidth cap, fusedelay's two
// models, the two latency tails, the burst bucket and the competing
// writer, three of them on a busy machine (Busy), and the busy plain
// directory beside a Go process as kube-apiserver (GoAlloc). Its latency
// draws are seeded with 1 (Seeded).
func Default() []Storage { return Seeded(1) }

// Seeded is Default with the latency storages' delays drawn from seed:
// where a storage's truth moves with the seed, it is the seed's luck, not
// the storage's (latency-tail's p99 at etcd's limit).
func Seeded(seed uint64) []Storage {
	return []Storage{
		Plain(),
		IOPSCap(500), IOPSCap(1000), IOPSCap(2000), IOPSCap(5000),
		BandwidthCap(4 << 20),
		FUSERateCap(80, 4),
		FUSESlowSync(2*time.Millisecond, 1_000_000),
		LatencyTail(1500*time.Microsecond, 8*time.Millisecond, seed),
		NetworkBlock(time.Millisecond, 5*time.Millisecond, seed),
		BurstBucket(3000, 500, 30_000),
		CompetingWriter(200, 16<<10),
		Busy(Plain(), BusyThreads()),
		Busy(CompetingWriter(200, 16<<10), BusyThreads()),
		Busy(IOPSCap(2000), BusyThreads()),
		Busy(GoAlloc(Plain(), DefaultGoAlloc), BusyThreads()),
	}
}

// Plain is the directory itself.
func Plain() Storage {
	return Storage{Name: "plain", About: "the directory itself"}
}

var cgroupSeq atomic.Int64

// cgroupName is unique among the cgroups this process makes.
func cgroupName(storage string) string {
	return fmt.Sprintf("etcdbench-zoo-%d-%d-%s", os.Getpid(), cgroupSeq.Add(1), storage)
}

// throttled sets up a cgroup with lim on the disk under dir.
func throttled(p *Place, dir, name string, lim Limits) error {
	c, err := NewCgroup(dir, cgroupName(name), lim)
	if err != nil {
		return err
	}
	p.Cgroup = c
	p.onClose(c.Remove)
	return nil
}

// IOPSCap caps the disk's write I/Os per second for the place's cgroup.
func IOPSCap(iops int64) Storage {
	name := fmt.Sprintf("iops-%d", iops)
	return Storage{Name: name, InCgroup: true,
		About: fmt.Sprintf("the disk with its write IOPS capped at %d by the kernel's block throttle (cgroup)", iops),
		setup: func(_ context.Context, dir string, p *Place) error {
			return throttled(p, dir, name, Limits{WriteIOPS: iops})
		}}
}

// BandwidthCap caps the disk's write bytes per second for the place's
// cgroup.
func BandwidthCap(bps int64) Storage {
	name := fmt.Sprintf("bw-%dk", bps>>10)
	return Storage{Name: name, InCgroup: true,
		About: fmt.Sprintf("the disk with its writes capped at %d KiB/s by the kernel's block throttle (cgroup)", bps>>10),
		setup: func(_ context.Context, dir string, p *Place) error {
			return throttled(p, dir, name, Limits{WriteBPS: bps})
		}}
}

// mountFUSE mounts a fusedelay passthrough of dir/backing on dir/mnt.
func mountFUSE(p *Place, dir string) (*fusedelay.FS, error) {
	backing, mnt := filepath.Join(dir, "backing"), filepath.Join(dir, "mnt")
	for _, d := range []string{backing, mnt} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	f, err := fusedelay.New(backing, mnt, 0)
	if errors.Is(err, fusedelay.ErrUnavailable) {
		err = fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if err != nil {
		return nil, errors.Join(err, os.Remove(mnt), os.RemoveAll(backing))
	}
	p.Dir, p.FS = mnt, f
	p.onClose(func() error { return errors.Join(f.Close(), os.Remove(mnt), os.RemoveAll(backing)) })
	return f, nil
}

// FUSERateCap is fusedelay's token bucket: perSec syncs per second,
// burst syncs ahead.
func FUSERateCap(perSec float64, burst int) Storage {
	return Storage{Name: fmt.Sprintf("fuse-rate-%g", perSec),
		About: fmt.Sprintf("FUSE passthrough, syncs capped at %g/s (token bucket, burst %d)", perSec, burst),
		setup: func(_ context.Context, dir string, p *Place) error {
			f, err := mountFUSE(p, dir)
			if err == nil {
				f.SetRateCap(perSec, burst)
			}
			return err
		}}
}

// FUSESlowSync is fusedelay's delay plus bandwidth: each sync waits delay
// plus the bytes written since the last sync at bytesPerSec.
func FUSESlowSync(delay time.Duration, bytesPerSec int64) Storage {
	return Storage{Name: "fuse-slow-sync",
		About: fmt.Sprintf("FUSE passthrough, each sync waits %v + its bytes at %d KB/s", delay, bytesPerSec/1000),
		setup: func(_ context.Context, dir string, p *Place) error {
			f, err := mountFUSE(p, dir)
			if err == nil {
				f.SetDelay(delay)
				f.SetBandwidth(bytesPerSec)
			}
			return err
		}}
}

// LogNormal returns a seeded draw of durations whose median is median and
// whose 99th percentile is p99 (p99 >= median); safe for concurrent use.
func LogNormal(median, p99 time.Duration, seed uint64) func() time.Duration {
	const z99 = 2.3263478740408408 // the standard normal's 99th percentile
	sigma := math.Log(float64(p99)/float64(median)) / z99
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return func() time.Duration {
		mu.Lock()
		z := r.NormFloat64()
		mu.Unlock()
		return time.Duration(float64(median) * math.Exp(sigma*z))
	}
}

// NetworkBlock is LatencyTail with a tail under etcd's WAL limit (median
// 1 ms, p99 5 ms in Default: a network block device a real etcd's WAL
// fsync p99 reads 7.4-8.0 ms on, at every rate). Its backend commits,
// two syncs each, sit near their own limit instead: etcd's commit p99 read
// 15-27 ms at every rate from 50 to 800 puts/s, two or three commits in a
// hundred past its 16 ms bucket bound, and etcd 3.4 bisected on it passed
// 566, 519 and 336 puts/s in three runs, the embedded etcd 92
// (bench/capacity-vs-etcd). On LatencyTail's p99 of 8 ms the WAL sits at
// its limit: etcd 3.4 passed from 0 to 109 puts/s over 13 runs and 6
// seeds.
func NetworkBlock(median, p99 time.Duration, seed uint64) Storage {
	s := LatencyTail(median, p99, seed)
	s.Name = "network-block"
	return s
}

// LatencyTail is a FUSE passthrough whose syncs wait a log-normal delay
// of the given median and p99 (seeded), as a network block device.
func LatencyTail(median, p99 time.Duration, seed uint64) Storage {
	return Storage{Name: "latency-tail",
		About: fmt.Sprintf("FUSE passthrough, each sync waits a log-normal delay: median %v, p99 %v (seed %d)", median, p99, seed),
		setup: func(_ context.Context, dir string, p *Place) error {
			f, err := mountFUSE(p, dir)
			if err == nil {
				f.SetDelayFunc(LogNormal(median, p99, seed))
			}
			return err
		}}
}
