package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/result"
	"etcdbench/internal/units"
)

// listCase is one measurement on a freshly started member: K LISTs of
// the largest resource at once, full (unpaginated) or paginated.
type listCase struct {
	K     int  `json:"k"`
	Paged bool `json:"paged"`
}

func (c listCase) String() string {
	if c.Paged {
		return fmt.Sprintf("%d paginated", c.K)
	}
	return fmt.Sprintf("%d full", c.K)
}

// prediction is what `etcdbench diagnose data --endpoints` said of a
// member: the largest resource, its live keys and bytes, and the memory
// model's figures.
type prediction struct {
	Resource string            `json:"resource"`
	Prefix   string            `json:"prefix"`
	Keys     int64             `json:"keys"`
	Bytes    int64             `json:"bytes"`
	DBBytes  int64             `json:"db_bytes"`
	Memory   result.DataMemory `json:"memory"`
	// ListMemory and ListMemoryPaged are diagnose data's per-resource
	// figures for the resource (one full LIST, one paginated one).
	ListMemory      int64   `json:"list_memory_bytes"`
	ListMemoryPaged int64   `json:"list_memory_paged_bytes"`
	Wall            float64 `json:"wall_s"` // diagnose data's wall time, its probes included
}

// peak is the member's predicted peak resident memory during c: idle +
// per_listed_byte x bytes for one full LIST; idle + max(that, k x
// per_listed_byte_concurrent x bytes) for k > 1; idle + k x
// paged_per_listed_byte x a page (bytes x 500 / keys when keys > 500)
// for k paginated ones.
func (p prediction) peak(c listCase) float64 {
	return float64(p.Memory.IdleBytes) + p.over(c)
}

// over is the predicted peak over idle.
func (p prediction) over(c listCase) float64 {
	m, b := p.Memory, float64(p.Bytes)
	if c.Paged {
		page := p.Bytes
		if p.Keys > pageSize {
			page = p.Bytes * pageSize / p.Keys
		}
		return float64(c.K) * m.PagedPerListedByte * float64(page)
	}
	one := m.PerListedByte * b
	if c.K <= 1 {
		return one
	}
	return max(one, float64(c.K)*m.PerListedByteConcurrent*b)
}

// caseResult is one case on a freshly started member: its memory before
// the LISTs and at their peak (VmRSS sampled every 10 ms; RssAnon and
// RssFile at that sample), and what the LISTs returned.
type caseResult struct {
	listCase
	Idle     status   `json:"idle"`
	Peak     status   `json:"peak"`
	PeakAnon int64    `json:"peak_anon_bytes"`
	Objects  int64    `json:"objects"`      // of one LIST
	Listed   int64    `json:"listed_bytes"` // of one LIST: keys and values
	Wall     float64  `json:"wall_s"`       // all K LISTs
	Samples  int      `json:"samples"`
	Errs     []string `json:"errors,omitempty"`
	Skipped  string   `json:"skipped,omitempty"`
	// In a memory cgroup (the OOM check): its charged memory before the
	// LISTs and its peak (memory.max_usage_in_bytes), how the member
	// ended when it did not survive them, and the kernel's OOM kills.
	IdleCgroup int64  `json:"idle_cgroup_bytes,omitempty"`
	PeakCgroup int64  `json:"peak_cgroup_bytes,omitempty"`
	Killed     string `json:"killed,omitempty"`
	OOMKills   int64  `json:"oom_kills,omitempty"`
}

// observation is one member's round: its idle memory when started, what
// diagnose data predicted, and each case's truth.
type observation struct {
	Round     int          `json:"round"`
	Etcd      string       `json:"etcd"`
	Target    string       `json:"target"`
	IdleRSS   int64        `json:"idle_rss_bytes"` // VmRSS before diagnose data ran
	Predicted prediction   `json:"predicted"`
	Cases     []caseResult `json:"cases"`
	Load      float64      `json:"load_average"`
}

// diagnose runs `etcdbench diagnose data --endpoints URL --dir dir -o
// json` (and args) on the running member and returns its prediction for
// the largest resource. A FAIL verdict (the list-memory rule under a tight limit)
// exits 1 and is no error here.
func diagnose(ctx context.Context, etcdbench, url, dir string, args ...string) (prediction, error) {
	var p prediction
	ch, err := cmp.RunChild(ctx, []int{1}, etcdbench, append([]string{"diagnose", "data", "--endpoints", url, "--dir", dir, "-o", "json"}, args...)...)
	p.Wall = ch.Wall.Seconds()
	if err != nil {
		return p, err
	}
	var res result.Result
	if err := cmp.DecodeFirst(ch.Stdout, &res); err != nil {
		return p, fmt.Errorf("etcdbench diagnose data's JSON: %w%s", err, cmp.Tail(ch.Stderr))
	}
	var d *result.Data
	for _, w := range res.Workloads {
		if w.Data != nil {
			d = w.Data
		}
	}
	if d == nil || d.Memory == nil {
		return p, fmt.Errorf("etcdbench diagnose data predicted no memory%s", cmp.Tail(ch.Stderr))
	}
	p.Memory, p.Resource, p.DBBytes = *d.Memory, d.Memory.Resource, d.DB.SizeBytes
	for _, r := range d.Resources {
		if r.Resource == p.Resource {
			p.Prefix, p.Keys, p.Bytes, p.ListMemory, p.ListMemoryPaged = r.Prefix, r.Keys, r.Bytes, r.ListMemoryBytes, r.ListMemoryPagedBytes
		}
	}
	if p.Prefix == "" {
		return p, fmt.Errorf("etcdbench diagnose data names %q the largest resource but lists no such resource", p.Resource)
	}
	return p, nil
}

// measure predicts m's LIST memory with diagnose data on m started
// afresh, then runs each case on m started afresh again.
func measure(ctx context.Context, m *member, o options, etcdbench, dir string, stderr io.Writer) (observation, error) {
	ob := observation{Etcd: m.kind.Name, Target: m.target}
	ob.Load, _ = cmp.LoadAverage()
	if err := m.start(ctx, nil); err != nil {
		return ob, err
	}
	settle(ctx, o.Settle)
	if st, err := readStatus(m.pid()); err == nil {
		ob.IdleRSS = st.RSS
	}
	p, err := diagnose(ctx, etcdbench, m.client, dir)
	ob.Predicted = p
	if err = errors.Join(err, m.stop()); err != nil {
		return ob, err
	}
	fmt.Fprintf(stderr, "%s %s: %s holds %d objects, %s; idle %s (diagnose data read %s, from %s); per listed byte %.2f, concurrent %.2f, paged %.2f; diagnose data took %.0f s\n",
		ob.Etcd, ob.Target, p.Resource, p.Keys, units.FormatBytes(p.Bytes), units.FormatBytes(ob.IdleRSS), units.FormatBytes(p.Memory.IdleBytes), p.Memory.IdleFrom,
		p.Memory.PerListedByte, p.Memory.PerListedByteConcurrent, p.Memory.PagedPerListedByte, p.Wall)
	for _, c := range o.cases() {
		r, err := runCase(ctx, m, p, c, o.Settle, o.Client, nil)
		ob.Cases = append(ob.Cases, r)
		if err != nil {
			return ob, fmt.Errorf("%s: %w", c, err)
		}
		if r.Skipped != "" {
			fmt.Fprintf(stderr, "  %s: skipped: %s\n", c, r.Skipped)
			continue
		}
		fmt.Fprintf(stderr, "  %s LISTs: idle %s, peak %s (anon %s), predicted %s: %.2fx; %d objects, %s each, in %.1f s%s\n", c,
			units.FormatBytes(r.Idle.RSS), units.FormatBytes(r.Peak.RSS), units.FormatBytes(r.PeakAnon), units.FormatBytes(int64(p.peak(c))),
			p.peak(c)/float64(r.Peak.RSS), r.Objects, units.FormatBytes(r.Listed), r.Wall, errNote(r.Errs))
	}
	return ob, nil
}

func errNote(errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	return fmt.Sprintf("; %d LISTs failed: %s", len(errs), errs[0])
}

// settle waits d (the member's start-up garbage collected, its idle
// memory steady) unless ctx ends first.
func settle(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// runCase starts m (in cg when not nil: its data's pages evicted from
// the page cache first, so that the member's own reads charge them to
// its cgroup), waits wait, reads its idle memory, sends c's LISTs (by
// client, see newLister) while
// sampling its memory, and stops it, or reaps it when it was killed. A
// case whose predicted peak and the client's buffers would not fit in
// this machine's available memory is skipped.
func runCase(ctx context.Context, m *member, p prediction, c listCase, wait time.Duration, client string, cg *memCgroup) (caseResult, error) {
	r := caseResult{listCase: c}
	if avail := memAvailable(); avail > 0 {
		need := p.peak(c) + float64(c.K)*float64(p.Bytes)
		if need > 0.8*float64(avail) {
			r.Skipped = fmt.Sprintf("its predicted peak and the client's buffers (%s) exceed 80 %% of the machine's available memory (%s)",
				units.FormatBytes(int64(need)), units.FormatBytes(avail))
			return r, nil
		}
	}
	var wrap func(cmd *exec.Cmd)
	if cg != nil {
		if err := evict(m.dataDir); err != nil {
			return r, err
		}
		wrap = cg.wrap
	}
	if err := m.start(ctx, wrap); err != nil {
		return r, err
	}
	stop := func(err error) (caseResult, error) { return r, errors.Join(err, m.stop()) }
	settle(ctx, wait)
	idle, err := readStatus(m.pid())
	if err != nil {
		return stop(err)
	}
	r.Idle = idle
	l, err := newLister(m.client, p.Prefix, client)
	if err != nil {
		return stop(err)
	}
	defer l.close()
	var kills int64
	if cg != nil {
		_ = cg.resetPeak()
		r.IdleCgroup, _ = cg.usage()
		kills, _ = cg.oomKills()
	}
	s := sample(m.pid(), cg)
	lctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	res := l.listAt(lctx, c.K, c.Paged)
	cancel()
	s.end()
	r.Peak, r.PeakAnon, r.PeakCgroup, r.Samples = s.peak, s.peakAnon, s.peakCgroup, s.samples
	r.Objects, r.Listed, r.Wall, r.Errs = res.Objects, res.Bytes, res.Wall.Seconds(), res.Errs
	if ctx.Err() != nil {
		return stop(ctx.Err())
	}
	if cg != nil {
		_, r.PeakCgroup = cg.usage()
		if len(r.Errs) > 0 {
			// A LIST fails when the member is killed under it: give its
			// exit a moment to be seen.
			for i := 0; i < 100 && !m.exited(); i++ {
				time.Sleep(20 * time.Millisecond)
			}
		}
		if m.exited() {
			after, _ := cg.oomKills()
			r.OOMKills = after - kills
			if sig := m.killedBy(); sig != 0 {
				r.Killed = sig.String()
			} else {
				r.Killed = "exited: " + m.exit.String()
			}
		}
	}
	return stop(nil)
}

// memAvailable is the machine's MemAvailable in bytes, 0 when unknown.
func memAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			var kb int64
			if _, err := fmt.Sscanf(f[1], "%d", &kb); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// evict writes dir's files out and drops their pages from the page
// cache (posix_fadvise DONTNEED), as after a reboot, without touching
// the rest of the machine's cache: the member that starts next reads
// them again.
func evict(dir string) error {
	return filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return fmt.Errorf("fdatasync %s: %w", path, err)
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			return fmt.Errorf("fadvise %s: %w", path, err)
		}
		return nil
	})
}
