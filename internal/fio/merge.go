package fio

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"etcdbench/internal/stats"
	"etcdbench/internal/units"
)

// ErrNoSync is returned when no job of the output made fsync or fdatasync
// calls, so there is nothing to judge as a WAL.
var ErrNoSync = errors.New("no fio job made fsync/fdatasync calls (run fio with --fdatasync=1, as the etcd recipe does)")

// maxSyncs bounds the sync count of a job: a trillion fdatasyncs would take
// years, so more means the input is not fio's.
const maxSyncs = 1e12

// Group is the jobs of one fio reporting group, merged: they ran at the
// same time on the same machine, so their sync latencies form one
// distribution (what the disk gave to all of them) and their rates add up.
type Group struct {
	ID      int
	Names   []string // the job names, once each
	Entries int      // entries of fio's "jobs" array merged
	Writers int      // processes or threads that wrote (numjobs summed)
	// Folded names the entries into which group_reporting folded several
	// jobs; their writer count is inferred from run times (see Groups).
	Folded []FoldedEntry
	// WriterTime is the run times of all the group's writers added up
	// (fio's job_runtime), zero when fio did not record it.
	WriterTime time.Duration
	Options    map[string]string // the first syncing job's effective options
	// AllOptions are every syncing entry's effective options.
	AllOptions []map[string]string
	Syncs      int64         // fsync/fdatasync calls
	Writes     int64         // write calls
	WriteBytes int64         // bytes written
	SyncIOPS   float64       // syncs per second of all writers together
	Elapsed    time.Duration // the longest entry's run time
	// Hist holds the merged sync latencies. Exact is true when it was built
	// from fio's full histograms (json+ bins); otherwise it is rebuilt from
	// each job's percentiles and is accurate only at those points.
	Hist  *hdr.Histogram
	Exact bool
	lats  []Lat
}

// FoldedEntry is an entry of fio's "jobs" that group_reporting made of
// several jobs. fio's JSON does not say how many (only its normal output's
// "jobs=N" does), and it labels the entry with the group's first job's name
// but the group's last job's options (stat.c sets opt_lists[j] for every
// member). Its job_runtime is the sum of the members' run times while its
// write runtime is the longest one's, so their ratio is how many jobs
// wrote at once on average: a job that ran for a small part of the time
// counts for that part only.
type FoldedEntry struct {
	Name    string
	Jobs    int           // inferred: the ratio, rounded
	Runtime time.Duration // job_runtime, the members' run times added up
	Wall    time.Duration // the longest member's run time
}

// foldedAt is the ratio of job_runtime to the wall-clock time from which an
// entry is taken for several jobs folded by group_reporting: one job's
// job_runtime is its own run time (a ratio of 1), two jobs give close to 2
// unless one of them ran for a small part of the time.
const foldedAt = 1.5

// writersOf is how many jobs an entry stands for, from its run times.
func writersOf(j *Job) (n int, folded bool) {
	wall := ranFor(j)
	if j.RuntimeMs <= 0 || wall <= 0 {
		return 1, false
	}
	ratio := float64(j.RuntimeMs) * float64(time.Millisecond) / float64(wall)
	if ratio < foldedAt {
		return 1, false
	}
	return int(math.Round(ratio)), true
}

// SyncIOPSPerWriter is the synced IOPS of one writer, what the IOPS verdict
// judges since etcd has one WAL writer: all syncs over the writers' run
// times added up, so that a writer that finished early counts for the time
// it ran. Without fio's job_runtime it is the group's rate over its
// writers; it is never above the group's rate.
func (g *Group) SyncIOPSPerWriter() float64 {
	if g.Writers <= 1 {
		return g.SyncIOPS
	}
	if g.WriterTime > 0 {
		return min(g.SyncIOPS, float64(g.Syncs)/g.WriterTime.Seconds())
	}
	return g.SyncIOPS / float64(g.Writers)
}

// Effective returns a job's options with the global ones underneath.
func (o *Output) Effective(j *Job) map[string]string {
	m := map[string]string{}
	for k, v := range o.GlobalOptions {
		m[k] = v
	}
	for k, v := range j.Options {
		m[k] = v
	}
	return m
}

// Groups merges the jobs of o by reporting group, in group order, keeping
// only groups whose jobs made sync calls. Without group_reporting fio
// prints each job (and each numjobs copy) on its own; with it, one entry
// per group, named after its first job: both merge to the same figures and
// writer count. It never reads only the first job.
func Groups(o *Output) ([]Group, error) {
	byID := map[int]*Group{}
	var ids []int
	type nameKey struct {
		group int
		name  string
	}
	entries, numjobs := map[nameKey]int{}, map[nameKey]int{}
	for i := range o.Jobs {
		j := &o.Jobs[i]
		if j.Error != 0 {
			return nil, fmt.Errorf("fio job %q reports error %d (%s): its figures are not valid", j.Name, j.Error, errnoText(j.Error))
		}
		if j.Sync == nil || j.Sync.Lat.N <= 0 {
			continue
		}
		if j.Sync.Lat.N > maxSyncs {
			return nil, fmt.Errorf("fio job %q reports %d syncs, more than any real run makes: is this fio's output?", j.Name, j.Sync.Lat.N)
		}
		g := byID[j.GroupID]
		if g == nil {
			g = &Group{ID: j.GroupID}
			byID[j.GroupID] = g
			ids = append(ids, j.GroupID)
		}
		opts := o.Effective(j)
		if g.Options == nil {
			g.Options = opts
		}
		g.AllOptions = append(g.AllOptions, opts)
		if len(g.Names) == 0 || g.Names[len(g.Names)-1] != j.Name {
			g.Names = append(g.Names, j.Name)
		}
		g.Entries++
		k := nameKey{j.GroupID, j.Name}
		n, folded := writersOf(j)
		entries[k] += n
		if folded {
			g.Folded = append(g.Folded, FoldedEntry{Name: j.Name, Jobs: n, Runtime: time.Duration(j.RuntimeMs) * time.Millisecond, Wall: ranFor(j)})
		}
		g.WriterTime += time.Duration(j.RuntimeMs) * time.Millisecond
		if n, err := strconv.Atoi(opts["numjobs"]); err == nil && n > 1 {
			numjobs[k] = n
		}
		lat := j.Sync.Lat
		g.Syncs += lat.N
		g.Writes += j.Write.TotalIOs
		g.WriteBytes += j.Write.IOBytes
		g.Elapsed = max(g.Elapsed, ranFor(j))
		g.lats = append(g.lats, lat)
	}
	if len(ids) == 0 {
		return nil, ErrNoSync
	}
	// Without group_reporting each numjobs copy is an entry of its own;
	// with it (which the JSON does not record) one entry stands for all the
	// group's jobs, whatever their names: numjobs, where the entry's options
	// give it, and the entry's run times tell how many (writersOf).
	for k, n := range entries {
		byID[k.group].Writers += max(n, numjobs[k])
	}
	// The group's jobs started together: its rate is all their syncs over
	// the longest one's time (summing each job's own rate would overstate
	// it when one finished early).
	for _, g := range byID {
		if g.Elapsed > 0 {
			g.SyncIOPS = float64(g.Syncs) / g.Elapsed.Seconds()
		}
	}
	sort.Ints(ids)
	out := make([]Group, 0, len(ids))
	for _, id := range ids {
		g := byID[id]
		h, exact, err := mergeLats(g.lats)
		if err != nil {
			return nil, fmt.Errorf("fio group %d: %w", id, err)
		}
		g.Hist, g.Exact = h, exact
		out = append(out, *g)
	}
	return out, nil
}

// ranFor is how long an entry ran. With group_reporting fio's job_runtime
// is the sum over the group's jobs, which ran at the same time; its write
// IOPS already uses the wall-clock time, so that time is read back from the
// IOPS where it can be (which also gives more than whole milliseconds).
func ranFor(j *Job) time.Duration {
	if j.Write.TotalIOs > 0 && j.Write.IOPS > 0 {
		return units.FromSeconds(float64(j.Write.TotalIOs) / j.Write.IOPS)
	}
	return time.Duration(j.RuntimeMs) * time.Millisecond
}

// mergeLats adds the sync latencies of several entries into one histogram:
// exactly from json+ bins when every entry has them, else rebuilt from the
// percentiles (each interval's samples at its upper percentile, so the
// rebuilt percentiles are never below fio's).
func mergeLats(lats []Lat) (*hdr.Histogram, bool, error) {
	h := stats.NewLatencyHistogram()
	exact := true
	for _, l := range lats {
		if len(l.Bins) == 0 {
			exact = false
		}
	}
	for _, l := range lats {
		if exact {
			for k, c := range l.Bins {
				v, err := strconv.ParseInt(k, 10, 64)
				if err != nil || v < 0 || c < 0 {
					return nil, false, fmt.Errorf("bad latency bin %q: %d", k, c)
				}
				recordN(h, v, c)
			}
			continue
		}
		pts := percentiles(l)
		if len(pts) == 0 {
			return nil, false, errors.New("sync latencies without percentiles: was --percentile_list emptied or clat_percentiles=0 given?")
		}
		var done int64
		for _, p := range pts {
			upto := int64(math.Round(float64(l.N) * p.p / 100))
			if upto > done {
				recordN(h, p.v, upto-done)
				done = upto
			}
		}
		if done < l.N {
			recordN(h, max(l.Max, pts[len(pts)-1].v), l.N-done)
		}
	}
	return h, exact, nil
}

func recordN(h *hdr.Histogram, v, n int64) {
	v = max(v, 1)
	v = min(v, h.HighestTrackableValue())
	_ = h.RecordValues(v, n) // v is clamped into range
}

type pctPoint struct {
	p float64
	v int64
}

// percentiles returns l's percentiles in increasing order.
func percentiles(l Lat) []pctPoint {
	var out []pctPoint
	for k, v := range l.Percentile {
		p, err := strconv.ParseFloat(k, 64)
		if err != nil || p <= 0 || p > 100 {
			continue
		}
		out = append(out, pctPoint{p, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].p < out[j].p })
	return out
}

// Exceeding bounds how many syncs were slower than thresholdNs: exact
// (lo == hi) from json+ bins, else from where the threshold falls between
// each job's percentiles.
func (g *Group) Exceeding(thresholdNs int64) (lo, hi int64) {
	for _, l := range g.lats {
		if len(l.Bins) > 0 && g.Exact {
			for k, c := range l.Bins {
				if v, _ := strconv.ParseInt(k, 10, 64); v > thresholdNs {
					lo += c
					hi += c
				}
			}
			continue
		}
		below, above := 0.0, 100.0 // known fractions at or below the threshold
		for _, p := range percentiles(l) {
			if p.v <= thresholdNs {
				below = math.Max(below, p.p)
			} else {
				above = math.Min(above, p.p)
			}
		}
		jhi := int64(math.Ceil(float64(l.N) * (100 - below) / 100))
		jlo := int64(math.Floor(float64(l.N) * (100 - above) / 100))
		if l.Max > thresholdNs {
			jlo = max(jlo, 1)
		} else {
			jhi = 0
		}
		lo, hi = lo+jlo, hi+min(jhi, l.N)
	}
	return lo, hi
}

// errnoText names a few errors fio jobs report.
func errnoText(e int) string {
	switch e {
	case 2:
		return "no such file or directory"
	case 5:
		return "I/O error"
	case 13:
		return "permission denied"
	case 22:
		return "invalid argument, often O_DIRECT with an unaligned bs"
	case 28:
		return "no space left on device"
	}
	return "see errno " + strconv.Itoa(e)
}
