package headroom

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/sysinfo"
)

// DefaultWindow is what the put rate and the device's write IOPS are
// averaged over: the status page's minute.
const DefaultWindow = time.Minute

// putCounter is etcd's count of puts, those inside transactions too.
const putCounter = "etcd_mvcc_put_total"

// scrapeTimeout bounds one read of a member's /metrics.
const scrapeTimeout = 3 * time.Second

// Config says which results to watch and how to read the members' rates.
type Config struct {
	// Files are the saved results (--capacity).
	Files []string
	// MetricsURLs are the /metrics URLs given by member name
	// (--etcd-metrics-url MEMBER=URL); the key "" is for any member
	// (--etcd-metrics-url URL). A member without one has it found from
	// its flags (MetricsURL).
	MetricsURLs map[string]string
	// Root is the root of /proc and /sys ("/" when "").
	Root string
	// Window is what rates are averaged over (DefaultWindow when 0).
	Window time.Duration
	// Logf receives one line per file loaded, changed or refused.
	Logf func(format string, args ...any)
}

// Member is one etcd process the exporter traces.
type Member struct {
	Name, DataDir string
	PID           int
}

// FileStatus is what the status page shows of one --capacity file.
type FileStatus struct {
	Path string
	// Estimate is what it says, when Err is nil.
	Estimate Estimate
	Err      error
	Loaded   time.Time
}

// MemberStatus is what the status page shows of one member's headroom.
type MemberStatus struct {
	Member, DataDir string
	// Volume is where its data dir lies; File the capacity file that
	// measured it ("" none: Reason says so).
	Volume Volume
	File   string
	// Estimate is File's.
	Estimate Estimate
	// MetricsURL is where its put count is read.
	MetricsURL string
	// PutRate is its puts per second over Span, and Ratio PutRate over
	// the estimate, when HasRate; Reason says why not otherwise.
	PutRate, Ratio float64
	HasRate        bool
	Span           time.Duration
	Reason         string
	// WriteIOPS is its device's writes per second over the window and
	// IOPSRatio their share of the volume's cap, when HasIOPS.
	WriteIOPS, IOPSRatio float64
	HasIOPS              bool
}

// Headroom watches the capacity files and the members' rates.
type Headroom struct {
	cfg Config

	mu      sync.Mutex
	files   map[string]*fileState
	members map[string]*memberState // by name and data dir
}

type fileState struct {
	mtime time.Time
	size  int64
	est   *Estimate
	err   error
	at    time.Time
}

type memberState struct {
	puts, writes counterWindow
	status       MemberStatus
}

// New watches cfg.Files; nothing is read until the first Update.
func New(cfg Config) *Headroom {
	if cfg.Root == "" {
		cfg.Root = "/"
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	h := &Headroom{cfg: cfg, files: map[string]*fileState{}, members: map[string]*memberState{}}
	for _, f := range cfg.Files {
		h.files[f] = &fileState{}
	}
	return h
}

// Update reloads the files that changed and reads every member's put
// count and its device's writes once; the exporter calls it at each scan
// of /proc.
func (h *Headroom) Update(ctx context.Context, members []Member) {
	now := time.Now()
	h.reload(now)
	var stats map[string]sysinfo.DiskStats
	if b, err := os.ReadFile(filepath.Join(h.cfg.Root, "proc", "diskstats")); err == nil {
		stats, _ = sysinfo.ParseDiskstats(b)
	}
	seen := map[string]bool{}
	for _, m := range members {
		k := m.Name + "\x00" + m.DataDir
		if seen[k] {
			continue
		}
		seen[k] = true
		h.mu.Lock()
		ms := h.members[k]
		if ms == nil {
			ms = &memberState{puts: counterWindow{window: h.cfg.Window}, writes: counterWindow{window: h.cfg.Window}}
			h.members[k] = ms
		}
		h.mu.Unlock()
		st := h.measure(ctx, now, m, ms, stats)
		h.mu.Lock()
		ms.status = st
		h.mu.Unlock()
	}
	h.mu.Lock()
	for k := range h.members {
		if !seen[k] {
			delete(h.members, k)
		}
	}
	h.mu.Unlock()
}

// measure reads one member's rates; only Update touches ms's windows.
func (h *Headroom) measure(ctx context.Context, now time.Time, m Member, ms *memberState, stats map[string]sysinfo.DiskStats) MemberStatus {
	st := MemberStatus{Member: m.Name, DataDir: m.DataDir}
	vol, disk, note, err := VolumeOf(h.cfg.Root, m.PID, m.DataDir)
	if err != nil {
		st.Reason = err.Error()
		return st
	}
	st.Volume = vol
	path, est, ok := h.match(vol)
	if !ok {
		st.Reason = fmt.Sprintf("no --capacity file measured this volume (filesystem %s, device %s)", vol.Filesystem, orWords(vol.Device, "none: "+note))
		ms.puts.clear()
		ms.writes.clear()
		return st
	}
	st.File, st.Estimate = path, est
	if s, ok := stats[disk]; ok && est.VolumeWriteIOPS > 0 {
		ms.writes.add(now, float64(s.WriteIOs))
		if r, _, err := ms.writes.perSecond(); err == nil {
			st.WriteIOPS, st.IOPSRatio, st.HasIOPS = r, r/est.VolumeWriteIOPS, true
		}
	}
	st.MetricsURL, err = h.metricsURL(m)
	if err != nil {
		st.Reason = err.Error()
		ms.puts.clear()
		return st
	}
	cctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	fams, err := metrics.Scrape(cctx, nil, st.MetricsURL)
	var puts float64
	if err == nil {
		puts, err = metrics.ValueOf(fams, putCounter)
	}
	if err != nil {
		st.Reason = fmt.Sprintf("put count unreadable: %v", err)
		ms.puts.clear()
		return st
	}
	ms.puts.add(now, puts)
	rate, span, err := ms.puts.perSecond()
	if err != nil {
		st.Reason = err.Error()
		return st
	}
	st.PutRate, st.Span, st.Ratio, st.HasRate = rate, span.Round(100*time.Millisecond), rate/est.PutsPerSecond, true
	return st
}

// metricsURL is m's /metrics: given, or found from its flags.
func (h *Headroom) metricsURL(m Member) (string, error) {
	if u, ok := h.cfg.MetricsURLs[m.Name]; ok {
		return u, nil
	}
	if u, ok := h.cfg.MetricsURLs[""]; ok {
		return u, nil
	}
	dir := filepath.Join(h.cfg.Root, "proc", strconv.Itoa(m.PID))
	b, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil {
		return "", fmt.Errorf("etcd's flags unreadable: %w; give --etcd-metrics-url", err)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "environ")) // unreadable: the flags and etcd's defaults
	return MetricsURL(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), env)
}

// match is the newest loaded file (by modification time) that measured
// vol.
func (h *Headroom) match(vol Volume) (string, Estimate, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var best string
	var bestAt time.Time
	for p, f := range h.files {
		if f.est != nil && f.est.Matches(vol) && (best == "" || f.mtime.After(bestAt) || (f.mtime.Equal(bestAt) && p < best)) {
			best, bestAt = p, f.mtime
		}
	}
	if best == "" {
		return "", Estimate{}, false
	}
	return best, *h.files[best].est, true
}

// reload reads again each file whose modification time or size changed,
// and says once in the log what each change did.
func (h *Headroom) reload(now time.Time) {
	host := h.hostname()
	for path, f := range h.fileStates() {
		fi, err := os.Stat(path)
		if err == nil && f.err == nil && f.est != nil && fi.ModTime().Equal(f.mtime) && fi.Size() == f.size {
			continue
		}
		if err == nil && f.err != nil && fi.ModTime().Equal(f.mtime) && fi.Size() == f.size {
			continue // refused, unchanged
		}
		var est Estimate
		if err == nil {
			var b []byte
			if b, err = os.ReadFile(path); err == nil {
				if est, err = Parse(b); err == nil {
					err = est.CheckHost(host)
				}
			}
		}
		h.mu.Lock()
		prev := f.err
		f.at = now
		if fi != nil {
			f.mtime, f.size = fi.ModTime(), fi.Size()
		}
		if err != nil {
			f.est, f.err = nil, err
		} else {
			f.est, f.err = &est, nil
		}
		h.mu.Unlock()
		switch {
		case err != nil && (prev == nil || prev.Error() != err.Error()):
			h.cfg.Logf("capacity file %s: %v; no headroom metrics from it (read again when it changes)", path, err)
		case err == nil:
			h.cfg.Logf("capacity file %s: %.0f puts/s (%s) on filesystem %s, device %s%s", path, est.PutsPerSecond, estimateKind(est), est.Filesystem, orWords(est.Device, "none"), volumeWords(est))
		}
	}
}

func estimateKind(e Estimate) string {
	if e.FromDiskSweep {
		return "the disk sweep's rate: etcd's side was not measured"
	}
	return "capacity's estimate"
}

func volumeWords(e Estimate) string {
	if e.VolumeWriteIOPS == 0 {
		return "; no volume cap found"
	}
	return fmt.Sprintf("; the volume gives %.0f write IOPS", e.VolumeWriteIOPS)
}

func (h *Headroom) fileStates() map[string]*fileState {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]*fileState, len(h.files))
	for p, f := range h.files {
		out[p] = f
	}
	return out
}

// hostname is this machine's, from root's /proc ("" when unreadable).
func (h *Headroom) hostname() string {
	b, err := os.ReadFile(filepath.Join(h.cfg.Root, "proc", "sys", "kernel", "hostname"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Status lists the files and the members, sorted.
func (h *Headroom) Status() ([]FileStatus, []MemberStatus) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var fs []FileStatus
	for p, f := range h.files {
		s := FileStatus{Path: p, Err: f.err, Loaded: f.at}
		if f.est != nil {
			s.Estimate = *f.est
		}
		if f.at.IsZero() && f.err == nil {
			s.Err = fmt.Errorf("not read yet")
		}
		fs = append(fs, s)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path })
	var ms []MemberStatus
	for _, m := range h.members {
		ms = append(ms, m.status)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Member+ms[i].DataDir < ms[j].Member+ms[j].DataDir })
	return fs, ms
}
