package headroom

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/testutil/hostetcd"
)

// logLines collects what a Headroom logs.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// count is how many lines contain s.
func (l *logLines) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// writeCapacity saves a capacity result of rate puts/s measured in env.
func writeCapacity(t *testing.T, path string, env sysinfo.Facts, rate float64) {
	t.Helper()
	b := capacityResult(t, env, &result.Capacity{Rate: 2 * rate, Etcd: &result.CapacityEstimate{Rate: rate},
		Volume: &result.CapacityVolume{WriteIOPS: 1000, WriteBytesPerSec: 4e6}})
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// memberStatus is the status of member name after the last Update.
func memberStatus(t *testing.T, h *Headroom, name string) MemberStatus {
	t.Helper()
	_, ms := h.Status()
	for _, m := range ms {
		if m.Member == name {
			return m
		}
	}
	t.Fatalf("no status of member %s in %+v", name, ms)
	return MemberStatus{}
}

// TestHeadroomRealEtcd reads a real etcd's put rate against a capacity
// file saved on its volume: the rate is the puts made between two
// updates over the time between them, the ratio that over the estimate;
// a garbage file and another machine's are refused with one log line
// each, a file that changes is read again, and a member whose metrics
// cannot be read gets a reason and no ratio.
func TestHeadroomRealEtcd(t *testing.T) {
	e := hostetcd.Start(t, "hr", "")
	dir := t.TempDir()
	env := sysinfo.Collect("/", e.DataDir)
	good, garbage, other := filepath.Join(dir, "capacity.json"), filepath.Join(dir, "garbage.json"), filepath.Join(dir, "other.json")
	writeCapacity(t, good, env, 200)
	if err := os.WriteFile(garbage, []byte("not a result\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	elsewhere := env
	elsewhere.Hostname = "another-" + env.Hostname
	writeCapacity(t, other, elsewhere, 5000)
	var logs logLines
	h := New(Config{Files: []string{good, garbage, other}, Window: time.Hour, Logf: logs.logf})
	m := Member{Name: e.Name, DataDir: e.DataDir, PID: e.PID()}

	tb1 := time.Now()
	h.Update(t.Context(), []Member{m})
	ta1 := time.Now()
	if st := memberStatus(t, h, "hr"); st.File != good || st.HasRate || st.Reason == "" {
		t.Fatalf("after one update: %+v, want file %s, no rate yet and a reason", st, good)
	}
	const n = 300
	e.Put(t, n, 4)
	tb2 := time.Now()
	h.Update(t.Context(), []Member{m})
	ta2 := time.Now()
	st := memberStatus(t, h, "hr")
	lo, hi := n/ta2.Sub(tb1).Seconds(), n/tb2.Sub(ta1).Seconds()
	if !st.HasRate || st.PutRate < lo || st.PutRate > hi {
		t.Fatalf("put rate %.1f (has %v, %s), want %d puts over the time between the updates: %.1f..%.1f", st.PutRate, st.HasRate, st.Reason, n, lo, hi)
	}
	if math.Abs(st.Ratio-st.PutRate/200) > 1e-9 {
		t.Errorf("ratio %v, want the rate %v over the estimate 200", st.Ratio, st.PutRate)
	}
	if !strings.HasPrefix(st.MetricsURL, e.Endpoint) {
		t.Errorf("metrics URL %s, want the one of etcd's --listen-client-urls %s", st.MetricsURL, e.Endpoint)
	}
	files, _ := h.Status()
	for _, f := range files {
		if (f.Err == nil) != (f.Path == good) {
			t.Errorf("file %s: err %v", f.Path, f.Err)
		}
	}
	h.Update(t.Context(), []Member{m})
	if logs.count(garbage) != 1 || logs.count("another machine") != 1 {
		t.Errorf("want one log line for each refused file, got:\n%s", strings.Join(logs.lines, "\n"))
	}

	t.Run("reload", func(t *testing.T) {
		writeCapacity(t, good, env, 400)
		later := time.Now().Add(time.Minute) // the same second, another modification time
		if err := os.Chtimes(good, later, later); err != nil {
			t.Fatal(err)
		}
		h.Update(t.Context(), []Member{m})
		if st := memberStatus(t, h, "hr"); st.Estimate.PutsPerSecond != 400 {
			t.Errorf("estimate after the file changed: %v, want 400", st.Estimate.PutsPerSecond)
		}
	})
	t.Run("unreachable metrics", func(t *testing.T) {
		url := fmt.Sprintf("http://127.0.0.1:%d/metrics", hostetcd.FreePort(t))
		h := New(Config{Files: []string{good}, MetricsURLs: map[string]string{"": url}})
		h.Update(t.Context(), []Member{m})
		h.Update(t.Context(), []Member{m})
		st := memberStatus(t, h, "hr")
		if st.HasRate || !strings.Contains(st.Reason, "put count unreadable") || !strings.Contains(st.Reason, url) {
			t.Errorf("status %+v, want no rate and the reason naming %s", st, url)
		}
	})
	t.Run("no file for the volume", func(t *testing.T) {
		nowhere := env
		nowhere.Filesystem.MajorMinor, nowhere.Device = "0:1", nil
		p := filepath.Join(t.TempDir(), "capacity.json")
		writeCapacity(t, p, nowhere, 200)
		h := New(Config{Files: []string{p}})
		h.Update(t.Context(), []Member{m})
		if st := memberStatus(t, h, "hr"); st.File != "" || !strings.Contains(st.Reason, "no --capacity file measured this volume") {
			t.Errorf("status %+v, want no file and why", st)
		}
	})
}
