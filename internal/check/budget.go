// Package check is the whole answer of `etcdbench check` (and of etcdbench
// without a command): which disk workloads and which etcd loads run for
// each time budget, and how the synthetic WAL figures compare with what the
// real etcd then saw on the same disk.
package check

import (
	"errors"
	"fmt"
	"time"

	"etcdbench/internal/capacity"
	"etcdbench/internal/etcdload"
)

// ErrBadBudget is returned for an unknown budget name.
var ErrBadBudget = errors.New("unknown time budget")

// Budget is what one time budget runs, as data.
type Budget struct {
	Name  string // quick, default, thorough
	About string // the time it takes, for help texts
	// DiskPreset names the disk workloads' preset (disk.PresetNamed).
	DiskPreset string
	// Disk are the disk workloads run, in order, by registered name; the
	// idle WAL comes first, as wal-under-load compares with it.
	Disk []string
	// Settings override single settings of the disk workloads, by
	// workload name then setting name (as on the command line).
	Settings map[string]map[string]string
	// Members of the embedded etcd.
	Members int
	// Put and Range are the embedded etcd's loads, one after the other,
	// from etcdload.DefaultLoad with these settings.
	Put, Range LoadShape
	// EtcdCapacity, when set, runs capacity's etcd side on the embedded
	// etcd after its loads, at this budget, up to the disk's capacity
	// sweep's limit: the check then states the put rate an etcd on this
	// storage and machine carries from capacity's model (capacity.Answer).
	EtcdCapacity *capacity.Side
}

// LoadShape is the part of an etcd load a budget sets.
type LoadShape struct {
	Conns, Clients int
	Duration       time.Duration
	ValSize        int
	KeySpaceSize   int
}

// Load returns etcd's benchmark defaults for op with the shape applied;
// the endpoints are set by the caller.
func (s LoadShape) Load(op etcdload.Op) etcdload.Load {
	l := etcdload.DefaultLoad(op)
	l.Conns, l.Clients, l.Duration, l.Total = s.Conns, s.Clients, s.Duration, 0
	l.ValSize, l.KeySpaceSize = s.ValSize, s.KeySpaceSize
	return l
}

// Budgets returns the budgets. The etcd loads are shaped like a small
// Kubernetes control plane's: 16 clients writing ~1 KiB objects (the
// shape of wal-under-load's 16 group-committed clients), then ranges.
func Budgets() []Budget {
	put := LoadShape{Conns: 4, Clients: 16, ValSize: 1024, KeySpaceSize: 10000}
	rng := LoadShape{Conns: 4, Clients: 16, ValSize: 1024, KeySpaceSize: 1000}
	q, d, t := put, put, put
	q.Duration, d.Duration, t.Duration = 4*time.Second, 6*time.Second, 30*time.Second
	qr, dr, tr := rng, rng, rng
	qr.Duration, dr.Duration, tr.Duration = 2*time.Second, 3*time.Second, 15*time.Second
	thorough := capacity.CapacitySide(3 * time.Second)
	return []Budget{
		{Name: "quick", About: "about 40 s", DiskPreset: "quick", Disk: []string{"wal", "wal-under-load"}, Members: 1, Put: q, Range: qr, EtcdCapacity: &quickEtcdCapacity},
		{Name: "default", About: "about a minute", DiskPreset: "default", Disk: []string{"wal", "backend", "wal-under-load", "mixed", "capacity"}, Members: 1, Put: d, Range: dr,
			Settings: map[string]map[string]string{"capacity": checkCapacity, "mixed": {"runtime": "4s"}}, EtcdCapacity: &checkEtcdCapacity},
		{Name: "thorough", About: "several minutes", DiskPreset: "thorough", Disk: []string{"wal", "backend", "wal-under-load", "mixed", "snapshot", "compaction", "recovery", "capacity"}, Members: 1, Put: t, Range: tr,
			EtcdCapacity: &thorough},
	}
}

// checkCapacity is the default check's disk capacity sweep: a coarse
// ladder from 384 puts/s by 2.5x to etcdctl check perf's xl (15,000, its
// fifth rung), in short steps, bisected twice around the knee (to within
// 30 %). Its first rung is above check perf's s (150), whose step alone
// took 6-8 s for the syncs a pass needs; a disk that fails it tries the
// rungs above, then descends. Its top is xl: the check answers up to
// check perf's loads, and `capacity` beyond. --thorough runs the full
// sweep.
var checkCapacity = map[string]string{
	"start": "384", "factor": "2.5", "resolution": "0.3", "max-rate": "15000",
	"step-runtime": "3s", "step-min-runtime": "1s",
}

// checkEtcdCapacity is the default check's etcd side: capacity's, in
// steps of 2 s held at most 8 s (capacity's are 3 s held up to 10 s),
// bisected to within 25 %, without the probe above the knee. Held only
// 4 s, a step's backend commit p99 came from some 40 commits, nearly
// their slowest: the check answered 0.70-0.84x of capacity on the same
// disk, failing 8,770 puts/s at 25.1-25.6 ms where capacity passed 9,600
// (bench/command-time).
var checkEtcdCapacity = capacity.Side{Step: 2 * time.Second, MaxHold: 8 * time.Second, Factor: 2, Resolution: 0.25,
	StepFlag: "step (capacity --cpu-step)", NoProbe: true}

// quickEtcdCapacity is check --quick's etcd side: capacity's, with no
// disk model before it (the quick budget has no disk sweep), in
// steps of 2 s (a backend commit p99 from some 20 commits, judged from
// 20) that are not held, bisected to within 25 %, without the probe above
// the knee; its ladder starts from what the put load carried
// (capacity.SeedStart). Its answer's step, when it passed within two
// histogram buckets of a limit, runs again for a real etcd's ten seconds
// before it stands: unheld 2 s steps beside four busy loops passed
// 212-357 puts/s where capacity's ten-second steps failed 82-212 (2.4-6.6x
// its answer in three rounds). Its estimate is the side's alone, up to
// check perf's xl.
var quickEtcdCapacity = capacity.Side{Step: 2 * time.Second, MaxHold: 2 * time.Second, Recheck: 10 * time.Second, Factor: 2, Resolution: 0.25,
	StepFlag: "step (the check without --quick)", NoProbe: true}

// BudgetNamed returns the budget called name.
func BudgetNamed(name string) (Budget, error) {
	for _, b := range Budgets() {
		if b.Name == name {
			return b, nil
		}
	}
	return Budget{}, fmt.Errorf("%w %q: want quick, default or thorough", ErrBadBudget, name)
}
