package strace

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"etcdbench/internal/etcdproc"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/walfile"
)

// Profile is what a trace of etcd's write and sync calls shows about
// its WAL and its database.
type Profile struct {
	Traced time.Duration // from the first to the last line seen

	WALWriteBytes walfile.Sizes // bytes per write() (or pwrite64, writev) on a WAL segment
	WALBytesSync  walfile.Sizes // bytes written to WAL segments between WAL fdatasyncs
	WALSync       *hdr.Histogram
	WALWrite      *hdr.Histogram

	DBWriteBytes walfile.Sizes // bytes per pwrite64 on member/snap/db
	DBSync       *hdr.Histogram

	Errors          int64 // calls on WAL or db that failed
	Orphans, Unread int   // resumed halves without a start; lines not understood

	pending     int64
	first, last time.Duration
	seenAnyTime bool
}

// NewProfile returns an empty profile.
func NewProfile() *Profile {
	return &Profile{
		WALSync: stats.NewLatencyHistogram(), WALWrite: stats.NewLatencyHistogram(), DBSync: stats.NewLatencyHistogram(),
	}
}

// ReadProfile parses strace output from r; files maps descriptors to
// paths for lines strace printed without them (-y missing).
func ReadProfile(r io.Reader, files etcdproc.Files) (*Profile, error) {
	p := NewProfile()
	parser := Parser{At: -1}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if c, ok := parser.Line(sc.Text()); ok {
			p.Add(c, files)
		}
		if parser.At >= 0 {
			p.seen(parser.At)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading strace's output: %w", err)
	}
	p.Orphans, p.Unread = parser.Orphans, parser.Bad
	return p, nil
}

func (p *Profile) seen(at time.Duration) {
	if !p.seenAnyTime {
		p.first, p.seenAnyTime = at, true
	}
	if at < p.first-12*time.Hour { // past midnight
		at += 24 * time.Hour
	}
	p.last = max(p.last, at)
	p.Traced = p.last - p.first
}

// Add counts one completed call.
func (p *Profile) Add(c Line, files etcdproc.Files) {
	path := strings.TrimSuffix(c.Path, " (deleted)")
	if path == "" && c.FD >= 0 {
		path = files.WAL[c.FD]
		if path == "" {
			path = files.DB[c.FD]
		}
	}
	wal, db := etcdproc.IsWALPath(path), etcdproc.IsDBPath(path)
	if !wal && !db {
		return // sockets, pipes, logs
	}
	if c.Err != "" {
		p.Errors++
		return
	}
	sync := c.Name == "fdatasync" || c.Name == "fsync"
	switch {
	case wal && sync:
		if c.Dur >= 0 {
			stats.Record(p.WALSync, c.Dur)
		}
		p.WALBytesSync.Add(p.pending)
		p.pending = 0
	case wal:
		p.WALWriteBytes.Add(c.Ret)
		p.pending += c.Ret
		if c.Dur >= 0 {
			stats.Record(p.WALWrite, c.Dur)
		}
	case db && sync:
		if c.Dur >= 0 {
			stats.Record(p.DBSync, c.Dur)
		}
	case db:
		p.DBWriteBytes.Add(c.Ret)
	}
}

// OverheadNote explains what tracing costs the traced etcd.
const OverheadNote = "strace stops every thread of etcd at every system call it makes (not only the traced ones: seccomp filtering is not available when attaching to a running process) and resumes it after a round trip through strace; while attached, etcd's throughput can halve and its latencies grow. The fdatasync times include some of that overhead (strace -T measures from syscall entry to exit as strace sees them), so they are upper bounds; the write sizes are exact"

// Recommend returns the disk test matching the trace; ok is false when no
// WAL fdatasync was seen (an idle etcd: put some load on it).
func (p *Profile) Recommend(dataDir string) (walfile.Recommendation, bool) {
	if p.WALBytesSync.Count() == 0 {
		return walfile.Recommendation{}, false
	}
	m := p.WALBytesSync.Quantile(0.5)
	return walfile.Recommendation{BS: walfile.RecommendBS(m), Median: m, P90: p.WALBytesSync.Quantile(0.9), DataDir: dataDir}, true
}

// Workload is the trace as a result record. pid and files say what was
// traced, dataDir where the recommended test should run.
func (p *Profile) Workload(pid int, files etcdproc.Files, dataDir string, asked time.Duration) (result.Workload, error) {
	syncs := p.WALBytesSync.Count()
	wl := result.Workload{
		Name:        walfile.WorkloadName,
		Description: fmt.Sprintf("etcd's real WAL write pattern, traced with strace on process %d", pid),
		Parameters: map[string]any{
			"source": "trace", "pid": pid, "duration_ns": int64(asked), "wal_dir": files.WALDir, "data_dir": dataDir,
		},
		Stop:       result.Stop{Mode: "trace", Reason: fmt.Sprintf("traced for %s", asked)},
		Ops:        syncs,
		Bytes:      p.WALWriteBytes.Sum(),
		DurationNs: int64(asked),
	}
	if asked > 0 {
		wl.OpsPerSec = float64(syncs) / asked.Seconds()
		wl.BytesPerSec = float64(wl.Bytes) / asked.Seconds()
	}
	for _, l := range []struct {
		name string
		h    *hdr.Histogram
	}{{"wal fdatasync", p.WALSync}, {"wal write", p.WALWrite}, {"db fdatasync", p.DBSync}} {
		if l.h.TotalCount() == 0 {
			continue
		}
		enc, err := stats.Encode(l.h)
		if err != nil {
			return wl, err
		}
		wl.Latencies = append(wl.Latencies, result.Latency{Name: l.name, Summary: stats.Summarize(l.h), Histogram: enc})
	}
	add := func(name string, v float64, unit, desc string) {
		wl.Figures = append(wl.Figures, result.Figure{Name: name, Value: v, Unit: unit, Description: desc})
	}
	add("wal_writes", float64(p.WALWriteBytes.Count()), "count", "write() calls on WAL segments")
	add("wal_syncs", float64(syncs), "count", "fdatasync() calls on WAL segments")
	walfile.SizeFigures(add, "wal_write_bytes", &p.WALWriteBytes, "bytes per write() on the WAL")
	walfile.SizeFigures(add, "wal_bytes_per_sync", &p.WALBytesSync, "bytes written to the WAL between fdatasyncs")
	add("db_writes", float64(p.DBWriteBytes.Count()), "count", "pwrite() calls on member/snap/db (backend commits)")
	add("db_write_bytes", float64(p.DBWriteBytes.Sum()), "B", "bytes written to the db")
	add("db_syncs", float64(p.DBSync.TotalCount()), "count", "fdatasync() calls on the db (two per backend commit)")
	if rec, ok := p.Recommend(dataDir); ok {
		add("recommended_bs", float64(rec.BS), "B", "--bs for etcdbench disk wal")
		wl.Parameters["recommended_bs"] = rec.BS
		wl.Notes = append(wl.Notes, rec.Note())
	} else {
		wl.Notes = append(wl.Notes, fmt.Sprintf("no fdatasync on a WAL segment in %s: etcd wrote nothing (no writes to it while traced); trace it under its usual load, or a longer --duration", asked))
	}
	wl.Notes = append(wl.Notes, OverheadNote)
	if len(files.WAL) > 0 {
		var ps []string
		for fd, path := range files.WAL {
			ps = append(ps, fmt.Sprintf("%d=%s", fd, path))
		}
		wl.Notes = append(wl.Notes, "WAL descriptors at the start (from /proc/PID/fd): "+strings.Join(sortedStrings(ps), ", ")+"; after a cut etcd writes the next segment through the descriptor of its preallocated .tmp file, which is traced too (strace names it by its new path)")
	}
	for fd, path := range files.DB {
		wl.Notes = append(wl.Notes, fmt.Sprintf("db descriptor %d=%s: its writes and syncs are the backend commits, counted apart from the WAL's", fd, path))
	}
	if p.Errors > 0 {
		wl.Notes = append(wl.Notes, fmt.Sprintf("%d write or sync calls on the WAL or db failed while traced", p.Errors))
	}
	if p.Orphans > 0 || p.Unread > 0 {
		wl.Notes = append(wl.Notes, fmt.Sprintf("%d calls already in progress when strace attached were skipped; %d lines of strace output were not understood", p.Orphans, p.Unread))
	}
	return wl, nil
}

func sortedStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}
