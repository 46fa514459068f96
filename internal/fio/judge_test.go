package fio

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// runFio runs the real fio with a job file in a temporary directory and
// returns its JSON output (format json or json+).
func runFio(t *testing.T, format, jobfile string) []byte {
	t.Helper()
	bin, err := exec.LookPath("fio")
	if err != nil {
		t.Skip("fio is not installed (Debian package fio)")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "job.fio")
	jobfile = strings.ReplaceAll(jobfile, "DIR", dir)
	if err := os.WriteFile(path, []byte(jobfile), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--output-format="+format, path).Output()
	if err != nil {
		t.Fatalf("fio: %v\n%s", err, out)
	}
	return out
}

const recipe = `[mytest]
directory=DIR
rw=write
ioengine=sync
fdatasync=1
size=1m
bs=2300
`

// syncsPerJob is how many fdatasyncs one job of size 1m, bs 2300 makes.
const syncsPerJob = (1<<20 + 2299) / 2300

// paced holds each of two writers to 500 syncs a second, some 0.9 s a
// job: unpaced, a job of the recipe's 456 syncs took 35-380 ms here, and
// one preempted for tens of milliseconds on a loaded machine could run
// for less than half its twin's time, below the job_runtime / runtime
// ratio (foldedAt) by which folded writers are told apart.
const paced = "rate_iops=500\n"

// twoJobs is the recipe as two differently named jobs of one group, which
// group_reporting folds into one entry named after the first.
const twoJobs = `[global]
` + paced + `directory=DIR
rw=write
ioengine=sync
fdatasync=1
size=1m
bs=2300

[a]

[b]
`

func judge(t *testing.T, b []byte) *result.Result {
	t.Helper()
	o, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Judge(o, JudgeOptions{Thresholds: verdict.Defaults(), Confidence: 0.95, Source: "test.json", Args: []string{"etcdbench judge", "test.json"}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func notes(wl *result.Workload) string { return strings.Join(wl.Notes, "\n") }

func TestJudgeRealFioShapes(t *testing.T) {
	cases := []struct {
		name, format, job string
		first             string // the first job's name ("": mytest)
		groups, writers   int
		folded            bool  // group_reporting folded several jobs into one entry
		syncs             int64 // per group
		exact             bool
		unlike, notUnlike []string
	}{
		{name: "etcd recipe", format: "json", job: recipe, groups: 1, writers: 1, syncs: syncsPerJob,
			notUnlike: []string{"direct=1", "ioengine", "bs=", "writers at once"}},
		{name: "recipe json+", format: "json+", job: recipe, groups: 1, writers: 1, syncs: syncsPerJob, exact: true},
		{name: "numjobs=2 without group_reporting", format: "json+", job: recipe + paced + "numjobs=2\n", groups: 1, writers: 2, syncs: 2 * syncsPerJob, exact: true,
			unlike: []string{"2 writers at once"}},
		{name: "numjobs=2 with group_reporting", format: "json", job: "[global]\ngroup_reporting\n" + recipe + paced + "numjobs=2\n", groups: 1, writers: 2, folded: true, syncs: 2 * syncsPerJob,
			unlike: []string{"2 writers at once"}},
		// The same two writers as differently named jobs: fio folds them
		// into one entry "a", and neither the entries nor numjobs say
		// there were two.
		{name: "jobs a and b with group_reporting", format: "json", job: strings.Replace(twoJobs, "[global]\n", "[global]\ngroup_reporting\n", 1), first: "a", groups: 1, writers: 2, folded: true, syncs: 2 * syncsPerJob,
			unlike: []string{"2 writers at once"}},
		{name: "jobs a and b with group_reporting json+", format: "json+", job: strings.Replace(twoJobs, "[global]\n", "[global]\ngroup_reporting\n", 1), first: "a", groups: 1, writers: 2, folded: true, syncs: 2 * syncsPerJob, exact: true,
			unlike: []string{"2 writers at once"}},
		{name: "jobs a and b without group_reporting", format: "json", job: twoJobs, first: "a", groups: 1, writers: 2, syncs: 2 * syncsPerJob,
			unlike: []string{"2 writers at once"}},
		{name: "direct=1 libaio 4k", format: "json", job: strings.ReplaceAll(recipe, "ioengine=sync", "ioengine=libaio\ndirect=1\niodepth=4") + "bs=4k\n", groups: 1, writers: 1, syncs: 256,
			unlike: []string{"direct=1", "ioengine=libaio", "iodepth=4"}},
		{name: "large blocks, fsync every 4 writes", format: "json+", job: strings.ReplaceAll(recipe, "fdatasync=1", "fsync=4") + "bs=64k\n", groups: 1, writers: 1, syncs: 4, exact: true,
			unlike: []string{"bs=64k", "fsync=4"}},
		{name: "two groups (stonewall)", format: "json", job: recipe + "\n[second]\nstonewall\ndirectory=DIR\nrw=randwrite\nioengine=psync\nfdatasync=1\nsize=1m\nbs=2300\n", groups: 2, writers: 1, syncs: syncsPerJob,
			unlike: []string{"rw=randwrite"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // the paced cases wait on their rate, not the disk
			b := runFio(t, c.format, c.job)
			o, err := Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			gs, err := Groups(o)
			if err != nil {
				t.Fatal(err)
			}
			if len(gs) != c.groups {
				t.Fatalf("%d groups, want %d", len(gs), c.groups)
			}
			g := gs[0]
			if g.Writers != c.writers || g.Exact != c.exact || (len(g.Folded) > 0) != c.folded {
				t.Errorf("writers %d exact %v folded %+v, want %d %v %v", g.Writers, g.Exact, g.Folded, c.writers, c.exact, c.folded)
			}
			// Every job's syncs count, not only the first entry's.
			slack := max(int64(c.writers), c.syncs/50) // async engines may drop a sync or two
			if g.Syncs < c.syncs-slack || g.Syncs > c.syncs+slack || g.Hist.TotalCount() != g.Syncs {
				t.Errorf("syncs %d (histogram %d), want about %d", g.Syncs, g.Hist.TotalCount(), c.syncs)
			}
			if c.exact {
				checkExactMerge(t, o, &g)
			} else {
				// The merged distribution lies between the entries' own:
				// its p99 at or above the lowest entry's p99 and at most
				// the highest entry's next listed percentile, p99.5 (the
				// rebuilt distributions put each interval's samples at
				// its upper percentile, rounded to whole samples: with a
				// few hundred syncs a job, the merged 99th percentile
				// sample can be one of those).
				lo, hi := int64(1<<62), int64(0)
				for _, j := range o.Jobs {
					if j.GroupID != g.ID || j.Sync == nil {
						continue
					}
					p, ok := j.Sync.Lat.At(99)
					next, ok2 := j.Sync.Lat.At(99.5)
					if !ok || !ok2 {
						t.Fatal("fio printed no p99 or p99.5")
					}
					lo, hi = min(lo, p), max(hi, next)
				}
				p99 := g.Hist.ValueAtPercentile(99)
				if float64(p99) < 0.998*float64(lo) || float64(p99) > 1.002*float64(hi) {
					t.Errorf("merged p99 %d outside the jobs' p99 and p99.5 %d..%d", p99, lo, hi)
				}
			}
			r := judge(t, b)
			if len(r.Workloads) != c.groups || r.Status == nil {
				t.Fatalf("%d workloads, status %v", len(r.Workloads), r.Status)
			}
			wl := &r.Workloads[0]
			checks := map[string]bool{}
			for _, v := range wl.Verdicts {
				checks[v.Check] = true
			}
			for _, want := range []string{"wal_fsync_p99", "sync_iops_min", "sync_implausibly_fast"} {
				if !checks[want] {
					t.Errorf("no %s verdict: %+v", want, wl.Verdicts)
				}
			}
			// The duration is the wall-clock one, also with group_reporting
			// (whose job_runtime adds up the jobs' times).
			if secs := float64(wl.DurationNs) / 1e9; secs <= 0 || math.Abs(wl.OpsPerSec*secs-float64(wl.Ops)) > 0.05*float64(wl.Ops)+1 {
				t.Errorf("%d syncs in %v s at %v/s do not add up", wl.Ops, secs, wl.OpsPerSec)
			}
			iops := wl.Verdicts[1].Value
			if iops <= 0 || iops > wl.OpsPerSec*1.0001 || (c.writers == 1 && iops != wl.OpsPerSec) {
				t.Errorf("IOPS verdict %v, workload %v/s over %d writers", iops, wl.OpsPerSec, c.writers)
			}
			if c.writers > 1 {
				// One writer's rate: all syncs over the run times fio gives
				// for the group's entries, added up - well below the sum
				// of the writers' rates.
				var ms int64
				for _, j := range o.Jobs {
					if j.GroupID == g.ID {
						ms += j.RuntimeMs
					}
				}
				want := min(wl.OpsPerSec, float64(wl.Ops)/(float64(ms)/1000))
				if math.Abs(iops-want) > 1e-6*want || iops > wl.OpsPerSec/foldedAt {
					t.Errorf("IOPS verdict %v, want %v: %d syncs over %d ms of writers, the group's rate being %v/s", iops, want, wl.Ops, ms, wl.OpsPerSec)
				}
				if f := wl.Figure("sync_iops_per_writer"); f == nil || f.Value != iops {
					t.Errorf("figure sync_iops_per_writer %+v, verdict %v", f, iops)
				}
			}
			if !strings.Contains(wl.Description, strconv.Itoa(c.writers)+" writer(s)") || wl.Parameters["writers"] != c.writers {
				t.Errorf("description %q, parameters %v: want %d writers", wl.Description, wl.Parameters, c.writers)
			}
			var n string
			for i := range r.Workloads {
				n += notes(&r.Workloads[i]) + "\n"
			}
			for _, u := range c.unlike {
				if !strings.Contains(n, "unlike etcd's WAL: "+u) {
					t.Errorf("notes lack %q:\n%s", u, n)
				}
			}
			for _, u := range c.notUnlike {
				if strings.Contains(n, "unlike etcd's WAL: "+u) {
					t.Errorf("notes wrongly say %q:\n%s", u, n)
				}
			}
			first := c.first
			if first == "" {
				first = "mytest"
			}
			if !strings.Contains(n, "fio --name="+first+" ") || !strings.Contains(n, "--bs=") {
				t.Errorf("notes lack fio's command line:\n%s", n)
			}
			if strings.Contains(n, "folded by group_reporting") != c.folded {
				t.Errorf("notes say folded %v, want %v:\n%s", !c.folded, c.folded, n)
			}
			if c.groups == 2 && r.Workloads[1].Name == r.Workloads[0].Name {
				t.Error("two groups under one name")
			}
		})
	}
}

// checkExactMerge checks the merged histogram against all the group's bins
// added up: the same count, and a p99 within one sample's rank of the
// merged bins' (fio rounds the rank up, HdrHistogram to the nearest).
func checkExactMerge(t *testing.T, o *Output, g *Group) {
	t.Helper()
	counts := map[int64]int64{}
	var n int64
	for _, j := range o.Jobs {
		if j.GroupID != g.ID || j.Sync == nil {
			continue
		}
		for k, c := range j.Sync.Lat.Bins {
			v, err := strconv.ParseInt(k, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			counts[v] += c
			n += c
		}
	}
	if n != g.Hist.TotalCount() {
		t.Fatalf("merged %d samples, the bins hold %d", g.Hist.TotalCount(), n)
	}
	vals := make([]int64, 0, len(counts))
	for v := range counts {
		vals = append(vals, v)
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	rank := int64(math.Ceil(0.99 * float64(n)))
	var lo, hi int64
	var seen int64
	for _, v := range vals {
		seen += counts[v]
		if lo == 0 && seen >= rank-1 {
			lo = v
		}
		if seen >= rank+1 {
			hi = v
			break
		}
	}
	if hi == 0 {
		hi = vals[len(vals)-1]
	}
	p99 := g.Hist.ValueAtPercentile(99)
	if float64(p99) < 0.998*float64(lo) || float64(p99) > 1.002*float64(hi) {
		t.Errorf("merged p99 %d, the bins' p99 is between %d and %d", p99, lo, hi)
	}
}

// fio's json and json+ outputs of the same jobs give the same figures: the
// histogram rebuilt from the percentiles matches them there.
func TestRebuiltHistogramKeepsFioPercentiles(t *testing.T) {
	b := runFio(t, "json", recipe)
	o, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := Groups(o)
	if err != nil {
		t.Fatal(err)
	}
	lat := o.Jobs[0].Sync.Lat
	for _, p := range []float64{50, 90, 99} {
		want, _ := lat.At(p)
		got := gs[0].Hist.ValueAtPercentile(p)
		if d := float64(got-want) / float64(want); d < -0.002 || d > 0.002 {
			t.Errorf("p%g rebuilt %d, fio %d", p, got, want)
		}
	}
}

func TestExceedingBounds(t *testing.T) {
	lat := Lat{N: 1000, Max: 50e6, Percentile: map[string]int64{"50.000000": 1e6, "90.000000": 5e6, "99.000000": 20e6, "99.900000": 40e6}}
	g := Group{lats: []Lat{lat}}
	// 10 ms lies between p90 (5 ms) and p99 (20 ms): 1 % to 10 % above.
	lo, hi := g.Exceeding(10e6)
	if lo != 10 || hi != 100 {
		t.Errorf("Exceeding(10ms) = %d..%d, want 10..100", lo, hi)
	}
	if lo, hi := g.Exceeding(60e6); lo != 0 || hi != 0 {
		t.Errorf("above the max: %d..%d", lo, hi)
	}
	if lo, hi := g.Exceeding(45e6); lo != 1 || hi != 1 {
		t.Errorf("between p99.9 and the max: %d..%d, want the max alone", lo, hi)
	}
}

func TestNoSyncIsAnError(t *testing.T) {
	b := runFio(t, "json", strings.ReplaceAll(recipe, "fdatasync=1\n", ""))
	o, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Groups(o); err != ErrNoSync {
		t.Fatalf("err = %v, want ErrNoSync", err)
	}
}

func TestDecisionIsSafeWithInexactCounts(t *testing.T) {
	// 1000 syncs, p99 at 20 ms: whatever the exact count, the p99 fails.
	lat := Lat{N: 100000, Min: 1e5, Max: 90e6, Mean: 2e6, Percentile: map[string]int64{"50.000000": 1e6, "90.000000": 5e6, "95.000000": 15e6, "99.000000": 20e6}}
	o := &Output{Jobs: []Job{{Name: "x", Sync: &Sync{Lat: lat}, Write: IO{TotalIOs: 100000, IOPS: 500}}}}
	r, err := Judge(o, JudgeOptions{Thresholds: verdict.Defaults(), Confidence: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	wl := r.Workloads[0]
	if wl.Stop.Outcome != stats.Fail || wl.Verdicts[0].Status != verdict.Fail || !r.Failed() {
		t.Fatalf("outcome %s, verdict %s", wl.Stop.Outcome, wl.Verdicts[0].Status)
	}
}

// A bs given and fio's default are judged by one rule, against the WAL
// batch size given or the recipe's.
func TestUnlikeBlockSize(t *testing.T) {
	observed := WALSize{Bytes: 370, Source: "--wal-bs"}
	cases := []struct {
		name string
		opts map[string]string
		wal  WALSize
		want string // in the bs note; "": no bs note
	}{
		{"recipe", map[string]string{"bs": "2300"}, DefaultWALSize, ""},
		{"no bs, recipe size", map[string]string{}, DefaultWALSize, ""},
		{"bs=4k, recipe size", map[string]string{"bs": "4k"}, DefaultWALSize, ""},
		{"no bs, small batches", map[string]string{}, observed, "no bs option, so fio's default of 4096 bytes: more than 4x away from the 370-byte WAL batches it is compared with (--wal-bs)"},
		{"bs=4k, small batches", map[string]string{"bs": "4k"}, observed, "bs=4k: more than 4x away from the 370-byte WAL batches it is compared with (--wal-bs)"},
		{"blocksize=4096, small batches", map[string]string{"blocksize": "4096"}, observed, "bs=4096: more than 4x away"},
		{"bs=370, small batches", map[string]string{"bs": "370"}, observed, ""},
		{"bs=64k", map[string]string{"bs": "64k"}, DefaultWALSize, "bs=64k: more than 4x away from the 2300-byte WAL batches it is compared with (the Kubernetes average"},
		{"read,write sizes", map[string]string{"bs": "64k,2300"}, DefaultWALSize, ""},
		{"bssplit", map[string]string{"bssplit": "4k/50:64k/50"}, observed, "bssplit/bsrange: mixed write sizes; etcd's WAL is judged with one size near its batches, here 370 bytes (--wal-bs)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got string
			for _, u := range Unlike(&Group{AllOptions: []map[string]string{c.opts}}, c.wal) {
				if strings.HasPrefix(u, "bs") || strings.HasPrefix(u, "no bs") {
					got = u
				}
			}
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("bs note %q, want one containing %q", got, c.want)
			}
		})
	}
	// BlockSize reads what units.ParseSize reads, as disk wal --bs does.
	for _, bs := range []string{"2300", "4k", "1m"} {
		want, err := units.ParseSize(bs)
		if got, from := BlockSize(map[string]string{"bs": bs}); err != nil || got != want || from != bs {
			t.Errorf("BlockSize(bs=%s) = %d, %q; want %d", bs, got, from, want)
		}
	}
}

// Judging with an observed WAL batch size says so in the note, and the
// size is recorded; the recipe's bs=2300 is then far from 370-byte batches.
func TestJudgeWithObservedWALSize(t *testing.T) {
	b := runFio(t, "json", recipe)
	o, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Judge(o, JudgeOptions{Thresholds: verdict.Defaults(), Confidence: 0.95, WALSize: WALSize{Bytes: 370, Source: "--wal-bs 370"}})
	if err != nil {
		t.Fatal(err)
	}
	wl := &r.Workloads[0]
	if n := notes(wl); !strings.Contains(n, "unlike etcd's WAL: bs=2300: more than 4x away from the 370-byte WAL batches it is compared with (--wal-bs 370)") {
		t.Errorf("notes lack the bs note against --wal-bs:\n%s", n)
	}
	if wl.Parameters["wal_batch_bytes"] != int64(370) || wl.Parameters["block_size"] != int64(2300) {
		t.Errorf("parameters %v: want wal_batch_bytes 370, block_size 2300", wl.Parameters)
	}
}
