package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/bench/internal/search"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/testutil/zoo"
)

// server is a real etcd running in a storage.
type server interface {
	URL() string
	Stop() error
}

// etcdKind is one real etcd the bench bisects: Debian's etcd 3.4 or the
// embedded etcd of go.mod in a process of its own.
type etcdKind struct {
	Name  string
	start func(ctx context.Context, p *zoo.Place) (server, error)
}

// binary is an etcd binary run in a place (cmp.EtcdBinary).
type binary struct{ e *cmp.EtcdBinary }

func (b binary) URL() string { return b.e.URL }
func (b binary) Stop() error { return b.e.Stop() }

// embedded is the bench's embedded etcd helper (cmp.EtcdServer).
type embedded struct{ s *cmp.EtcdServer }

func (e embedded) URL() string { return e.s.URL }
func (e embedded) Stop() error { return e.s.Stop() }

// stepper runs fixed-rate steps of etcd's benchmark against a server.
type stepper struct {
	benchmark string
	conns     int
	clients   int
	// checkPerf sends check perf's clients and connections at each rate
	// instead of conns and clients.
	checkPerf bool
	keySize   int
	valSize   int
	dur       time.Duration
	lim       search.Limits
}

// run offers rate puts/s for s.dur and judges the step from etcd's
// /metrics, the device's counters and the place's cgroup's.
func (s stepper) run(ctx context.Context, srv server, p *zoo.Place, dev string, rate float64) (step, error) {
	st := step{Offered: rate}
	before, err := metrics.Scrape(ctx, nil, srv.URL()+"/metrics")
	if err != nil {
		return st, err
	}
	devBefore, err := readDiskstats(dev)
	if err != nil {
		return st, err
	}
	var cgW, cgB int64
	if p.Cgroup != nil {
		if cgW, cgB, err = p.Cgroup.Writes(); err != nil {
			return st, err
		}
	}
	st.Conns, st.Clients = s.shapeAt(rate)
	put := cmp.RatePut{Endpoint: srv.URL(), Conns: st.Conns, Clients: st.Clients, Rate: rate, Dur: s.dur, KeySize: s.keySize, ValSize: s.valSize}
	pr, err := cmp.RunRatePut(ctx, s.benchmark, put)
	if err != nil {
		return st, err
	}
	st.Seconds, st.TimedOut, st.Broken = pr.Wall.Seconds(), pr.TimedOut, pr.Broken
	if pr.TimedOut {
		st.Puts = put.Total()
	} else {
		st.BenchmarkCPU = pr.CPU.Seconds()
		st.Achieved, st.Puts, st.Errors = pr.Report.OpsPerSec, pr.Report.Requests, pr.Report.Errors
	}
	after, err := metrics.Scrape(ctx, nil, srv.URL()+"/metrics")
	if err != nil {
		return st, err
	}
	devAfter, err := readDiskstats(dev)
	if err != nil {
		return st, err
	}
	st.Device = devAfter.sub(devBefore)
	if p.Cgroup != nil {
		w, b, err := p.Cgroup.Writes()
		if err != nil {
			return st, err
		}
		st.CgroupWrites, st.CgroupBytes = w-cgW, b-cgB
	}
	st.evidence(before, after)
	st.judge(s.lim)
	return st, nil
}

// shapeAt is the connections and clients a step at rate sends.
func (s stepper) shapeAt(rate float64) (conns, clients int) {
	if s.checkPerf {
		p := etcdload.CheckPresetAt(rate)
		return p.Conns, p.Clients
	}
	return s.conns, s.clients
}

func readDiskstats(dev string) (diskCounters, error) {
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		return diskCounters{}, err
	}
	return parseDiskstats(b, dev)
}

// truth is one real etcd's bisection on one storage.
type truth struct {
	Etcd        string  `json:"etcd"`
	HighestPass float64 `json:"highest_pass"` // 0: none passed
	LowestFail  float64 `json:"lowest_fail"`  // 0: none failed
	Steps       []step  `json:"steps"`
	Wall        float64 `json:"wall_s"`
}

// bisect starts k in p, searches its highest passing rate (searchOn) and
// stops it: the truth on a member of its own.
func bisect(ctx context.Context, k etcdKind, p *zoo.Place, dev string, s stepper, srch search.Search, progress io.Writer) (truth, error) {
	start := time.Now()
	srv, err := k.start(ctx, p)
	if err != nil {
		return truth{Etcd: k.Name}, err
	}
	t, err := searchOn(ctx, k.Name, srv, p, dev, s, srch, progress)
	t.Wall = time.Since(start).Seconds()
	return t, errors.Join(err, srv.Stop())
}

// searchOn searches the highest passing rate of srv, a real etcd named
// name already running in p, and leaves it running: the caller starts and
// stops it, so that other measurements can share the member (--paired).
// Wall is the search's time.
func searchOn(ctx context.Context, name string, srv server, p *zoo.Place, dev string, s stepper, srch search.Search, progress io.Writer) (truth, error) {
	t := truth{Etcd: name}
	start := time.Now()
	done := func(err error) (truth, error) {
		t.Wall = time.Since(start).Seconds()
		return t, err
	}
	ts, err := srch.Run(ctx, func(ctx context.Context, r float64, vote bool) (bool, bool, error) {
		// A burstable volume's truth is its sustained rate: each step
		// starts with its credits spent, so none runs on them (10 s on
		// credits passed 800 puts/s on a bucket whose baseline carries
		// 218).
		if p.Spend != nil {
			if err := p.Spend(ctx); err != nil {
				return false, false, err
			}
		}
		st, err := s.run(ctx, srv, p, dev, r)
		if err != nil {
			return false, false, err
		}
		verdict := "FAIL"
		if st.Pass {
			verdict = "pass"
		}
		if vote {
			verdict += " (vote)"
		}
		fmt.Fprintf(progress, "    %s %6.0f puts/s: %s (%s)\n", name, r, verdict, st.Why)
		st.Vote = vote
		t.Steps = append(t.Steps, st)
		return st.Pass, st.Pass && s.lim.AtLimit(st.WALP99, st.CommitP99), nil
	})
	if err != nil {
		return done(err)
	}
	lo, hi := search.Bounds(ts)
	t.HighestPass = lo
	if hi < 1e18 {
		t.LowestFail = hi
	}
	return done(nil)
}

// perPut is a real etcd's device cost per put at its highest passing
// rate.
type perPut struct {
	Rate            float64 `json:"rate"`
	DeviceWrites    float64 `json:"device_writes_per_put"`
	DeviceBytes     float64 `json:"device_bytes_per_put"`
	DeviceFlushes   float64 `json:"device_flushes_per_put"`
	CgroupWrites    float64 `json:"cgroup_writes_per_put,omitempty"`
	CgroupBytes     float64 `json:"cgroup_bytes_per_put,omitempty"`
	WALFsyncsPerPut float64 `json:"wal_fsyncs_per_put"`
	CommitsPerSec   float64 `json:"backend_commits_per_sec"`
	// EtcdCPU and BenchmarkCPU are CPU seconds per put, NaN when not
	// measured (printed only: JSON has no NaN).
	EtcdCPU      float64 `json:"-"`
	BenchmarkCPU float64 `json:"-"`
}

// costAt is t's step at its highest passing rate, per put.
func costAt(t truth) (perPut, bool) {
	for _, st := range t.Steps {
		if st.Pass && st.Offered == t.HighestPass && st.Puts > 0 {
			n := float64(st.Puts)
			return perPut{Rate: st.Offered,
				DeviceWrites: float64(st.Device.Writes) / n, DeviceBytes: float64(st.Device.SectorsWrite) * 512 / n,
				DeviceFlushes: float64(st.Device.Flushes) / n,
				CgroupWrites:  float64(st.CgroupWrites) / n, CgroupBytes: float64(st.CgroupBytes) / n,
				WALFsyncsPerPut: st.WALFsyncs / n, CommitsPerSec: st.Commits / st.Seconds,
				EtcdCPU: perPutOrNaN(st.EtcdCPU, n), BenchmarkCPU: perPutOrNaN(st.BenchmarkCPU, n)}, true
		}
	}
	return perPut{}, false
}

// perPutOrNaN is v/n, NaN for an unmeasured (0) v.
func perPutOrNaN(v, n float64) float64 {
	if v <= 0 {
		return math.NaN()
	}
	return v / n
}

// placeDir makes a fresh directory for one measurement in dir.
func placeDir(dir, storage string) (string, error) {
	return os.MkdirTemp(dir, strings.ReplaceAll(storage, "/", "-")+"-")
}
