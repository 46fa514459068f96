package data

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"etcdbench/internal/diagnose"
	"etcdbench/internal/diagnose/data/cost"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/stats"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/units"
)

// Config is one validated `diagnose data`: exactly one of DataDir,
// Snapshot and Endpoints.
type Config struct {
	// DataDir is a stopped member's data dir (or its member dir).
	DataDir string
	// Snapshot is a file of etcdctl snapshot save.
	Snapshot string
	// Endpoints are client URLs with their scheme; the first member's
	// snapshot is streamed into a scratch directory under Dir.
	Endpoints []string
	TLS       *tls.Config
	// HTTP reads the member's /metrics for its quota (nil: not read).
	HTTP *http.Client
	// Timeout bounds each call to the member but the snapshot stream.
	Timeout time.Duration
	// Dir is the disk the predictions probe, and where an online
	// snapshot is streamed.
	Dir string
	// Predict runs the cost probes on Dir.
	Predict bool
	// MemoryLimit is the member's memory limit as the user gives it (0:
	// its cgroup's when it runs on this machine, else the machine's).
	MemoryLimit int64
	// Top is the length of the top lists (0: DefaultTop).
	Top int
	// Thresholds are the rules' limits (nil: DefaultThresholds).
	Thresholds *Thresholds
	// Args is the command line, for the result.
	Args []string
}

// Check refuses a config that names no source or several (one of
// DataDir, Snapshot or one member of Endpoints, the flags' words), a top
// list under 1, and a missing Dir where one is written: an online
// snapshot is streamed there, the predictions probe it.
func (c Config) Check() error {
	given := 0
	for _, s := range []bool{c.DataDir != "", c.Snapshot != "", len(c.Endpoints) > 0} {
		if s {
			given++
		}
	}
	switch {
	case given != 1:
		return run.Usagef("give one of --data-dir DIR, --snapshot FILE or --endpoints URL")
	case len(c.Endpoints) > 1:
		return run.Usagef("--endpoints: one member's URL (every member holds the same data)")
	case c.Top < 1:
		return run.Usagef("--top %d: want at least 1", c.Top)
	case c.Dir != "":
		// Checked before the analysis, which can take seconds on a
		// large db, finds what the probes would have.
		if st, err := os.Stat(c.Dir); err != nil {
			return run.Usagef("--dir %s: %v", c.Dir, errors.Unwrap(err))
		} else if !st.IsDir() {
			return run.Usagef("--dir %s: not a directory", c.Dir)
		}
		return nil
	case !c.Predict && len(c.Endpoints) == 0:
		return nil
	case len(c.Endpoints) > 0:
		return run.Usagef("--dir is required (the disk the snapshot is streamed to and the predictions probe, e.g. --dir /var/lib/etcd)")
	}
	return run.Usagef("--dir is required (the disk the predictions probe, e.g. --dir /var/tmp), or --predict=false")
}

// Run analyses the source cfg names and returns the report. Bad input
// (a locked, missing, foreign or damaged db) is a usage error of one
// line; nothing is written but the scratch directory of an online
// snapshot, removed before Run returns, and the cost probes' own
// temporary directory under Dir.
func Run(ctx context.Context, cfg Config) (*result.Result, error) {
	started := time.Now().UTC() // the report's time counts the snapshot, the analysis and the probes
	th := DefaultThresholds()
	if cfg.Thresholds != nil {
		th = *cfg.Thresholds
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	d := &result.Data{}
	var path, walDir, label string
	var lv live
	var r *run.Run
	switch {
	case cfg.DataDir != "":
		db, wal, err := findDB(cfg.DataDir)
		if err != nil {
			return nil, run.Usage(err)
		}
		if cfg.Predict && within(cfg.Dir, cfg.DataDir) {
			return nil, run.Usagef("--dir %s is inside --data-dir %s, where nothing may be written: give --dir another directory on the same disk", cfg.Dir, cfg.DataDir)
		}
		path, walDir, d.Source, label = db, wal, "data-dir", cfg.DataDir
	case cfg.Snapshot != "":
		path, d.Source, label = cfg.Snapshot, "snapshot", cfg.Snapshot
	case len(cfg.Endpoints) > 0:
		var err error
		if r, path, lv, err = online(ctx, cfg); err != nil {
			return nil, err
		}
		d.Source, d.Endpoint, label = "endpoint", cfg.Endpoints[0], cfg.Endpoints[0]
	default:
		return nil, run.Usagef("nothing to analyse: give --data-dir DIR, --snapshot FILE or --endpoints URL")
	}
	a, err := Analyze(ctx, path, cfg.Top)
	if r != nil {
		r.Close(&err)
	}
	if err != nil {
		if ctx.Err() == nil && r == nil {
			err = run.Usage(err) // the file given is not what it should be
		}
		return nil, err
	}
	a.DB.Quota = lv.quota
	d.Path, _ = filepath.Abs(path)
	fill(d, a)
	if cfg.Predict {
		s, err := sizesOf(a, path, walDir)
		if err != nil {
			return nil, err
		}
		p, err := cost.Predict(ctx, cfg.Dir, s)
		if err != nil {
			return nil, fmt.Errorf("predicting on %s: %w", cfg.Dir, err)
		}
		d.Predicted = &result.DataPredicted{
			RestartSeconds: p.Restart.Seconds, RestartFrom: p.Restart.From,
			DefragSeconds: p.Defrag.Seconds, DefragFrom: p.Defrag.From,
			SnapshotSendSeconds: p.SnapshotSend.Seconds, SnapshotSendFrom: p.SnapshotSend.From,
			WALBytes: s.WALBytes, WALEntries: s.WALEntries,
		}
	}
	if cfg.Predict {
		if d.Memory, err = listMemory(ctx, cfg, a, d, lv); err != nil {
			return nil, fmt.Errorf("predicting what LISTs cost the member's memory: %w", err)
		}
	}
	fs := judge(a, th, label)
	fs = append(fs, judgeMemory(d.Memory, th, label)...)
	diagnose.Rank(fs)
	res := run.NewResult(cfg.Args)
	res.StartedAt = started
	envDir := cfg.Dir
	if envDir == "" {
		envDir = filepath.Dir(d.Path)
	}
	res.Environment = sysinfo.Collect("/", envDir)
	w := result.Workload{
		Name: "diagnose-data", Description: "what fills etcd: " + sourceWords(d),
		Parameters: map[string]any{"source": d.Source, "path": d.Path, "top": len(a.TopByRevisions), "predict": cfg.Predict},
		Stop:       result.Stop{Mode: d.Source, Reason: "the whole db read once"},
		Ops:        a.Revisions, Bytes: a.DB.SizeBytes, DurationNs: int64(a.Duration),
		OpsPerSec: float64(a.Revisions) / a.Duration.Seconds(), BytesPerSec: float64(a.DB.SizeBytes) / a.Duration.Seconds(),
		Latencies: []result.Latency{}, Series: []stats.SecondSample{},
		Verdicts: verdicts(fs, lv.quota > 0), Data: d, Figures: figures(d), Notes: append(a.Notes, notes(a, d)...),
	}
	if d.Endpoint != "" {
		w.Parameters["endpoint"] = d.Endpoint
	}
	if cfg.Dir != "" {
		w.Parameters["dir"] = cfg.Dir
	}
	res.Workloads = []result.Workload{w}
	res.Finish(time.Now().UTC())
	return res, nil
}

// sizesOf are the figures a's db (at path) and the WAL in walDir (""
// for none) give the predictions.
func sizesOf(a *Analysis, path, walDir string) (cost.Sizes, error) {
	var s cost.Sizes
	s.DBBytes, s.InUseBytes, s.Keys, s.Revisions = a.DB.FileBytes, a.DB.InUseBytes, a.Keys, a.Revisions // a restart reads the whole file
	if walDir == "" {
		return s, nil
	}
	var since cost.WAL
	var err error
	if s.WALDir, since, s.WALReplay, err = walSince(walDir); err != nil {
		return s, fmt.Errorf("reading the WAL in %s: %w", walDir, err)
	}
	s.WALBytes, s.WALEntries = since.Bytes, since.Entries
	if s.FullElection, err = cost.WaitsFullElection(path); err != nil {
		return s, fmt.Errorf("reading %s's snapshots: %w", path, err)
	}
	if s.RestoresTwice, err = cost.RestoresTwice(path); err != nil {
		return s, fmt.Errorf("reading %s's snapshots: %w", path, err)
	}
	return s, nil
}

// DataDirSizes reads a stopped member's data directory (read-only) for
// the figures its restart's prediction scales with (cost.Predict).
func DataDirSizes(ctx context.Context, dataDir string) (cost.Sizes, error) {
	db, wal, err := findDB(dataDir)
	if err != nil {
		return cost.Sizes{}, err
	}
	a, err := Analyze(ctx, db, 0)
	if err != nil {
		return cost.Sizes{}, err
	}
	return sizesOf(a, db, wal)
}

// within says whether dir is parent or below it (symbolic links
// followed).
func within(dir, parent string) bool {
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		a, _ := filepath.Abs(p)
		return a
	}
	rel, err := filepath.Rel(real(parent), real(dir))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func sourceWords(d *result.Data) string {
	switch d.Source {
	case "endpoint":
		return "a snapshot of " + d.Endpoint + "'s db, streamed into the scratch directory and removed"
	case "snapshot":
		return "the snapshot " + d.Path
	}
	return "the db " + d.Path + ", read-only"
}

// fill puts the analysis into the result's model.
func fill(d *result.Data, a *Analysis) {
	d.Keys, d.Revisions, d.Tombstones, d.AnalysisNs = a.Keys, a.Revisions, a.Tombstones, int64(a.Duration)
	d.Resources = make([]result.DataResource, 0, len(a.Resources))
	for _, r := range a.Resources {
		d.Resources = append(d.Resources, result.DataResource{Resource: r.Name, Prefix: r.Prefix, Keys: r.Keys, Bytes: r.Bytes,
			BytesAllRevisions: r.BytesAllRevisions, Revisions: r.Revisions})
	}
	keys := func(ks []Key) []result.DataKey {
		out := make([]result.DataKey, 0, len(ks))
		for _, k := range ks {
			out = append(out, result.DataKey{Key: k.Key, Revisions: k.Revisions, Bytes: k.Bytes})
		}
		return out
	}
	d.TopKeys, d.TopKeysBySize = keys(a.TopByRevisions), keys(a.TopBySize)
	l := a.Leases
	d.Leases = result.DataLeases{Count: l.Count, KeysAttached: l.KeysAttached,
		TTLMinNs: l.TTLMin * int64(time.Second), TTLMedianNs: l.TTLMedian * int64(time.Second), TTLMaxNs: l.TTLMax * int64(time.Second)}
	db := a.DB
	d.DB = result.DataDB{FileBytes: db.FileBytes, SizeBytes: db.SizeBytes, InUseBytes: db.InUseBytes, FreeBytes: db.FreeBytes,
		FreePages: db.FreePages, PageSize: db.PageSize, Fill: db.Fill, Revision: db.Revision, CompactedRevision: db.CompactedRevision,
		ConsistentIndex: db.ConsistentIndex, QuotaBytes: db.Quota}
}

// figures are the headline figures, for the reporters that show
// figures (text, prom).
func figures(d *result.Data) []result.Figure {
	f := []result.Figure{
		{Name: "db_size", Value: float64(d.DB.SizeBytes), Unit: "B", Description: "the db's pages up to their high-water mark (etcd's db size)"},
		{Name: "db_in_use", Value: float64(d.DB.InUseBytes), Unit: "B", Description: "the db less its free pages (etcd's in use)"},
		{Name: "db_free", Value: float64(d.DB.FreeBytes), Unit: "B", Description: "free pages: what a defragmentation frees"},
		{Name: "keys", Value: float64(d.Keys), Unit: "count", Description: "keys live at the latest revision"},
		{Name: "revisions", Value: float64(d.Revisions), Unit: "count", Description: "revisions kept since the last compaction"},
		{Name: "leases", Value: float64(d.Leases.Count), Unit: "count", Description: "leases granted and not expired"},
	}
	if d.DB.QuotaBytes > 0 {
		f = append(f, result.Figure{Name: "quota", Value: float64(d.DB.QuotaBytes), Unit: "B", Description: "the member's --quota-backend-bytes"})
	}
	if p := d.Predicted; p != nil {
		f = append(f,
			result.Figure{Name: "predicted_restart", Value: p.RestartSeconds, Unit: "s", Description: "restart, start to healthy: " + p.RestartFrom},
			result.Figure{Name: "predicted_defrag", Value: p.DefragSeconds, Unit: "s", Description: "defragmentation, the member blocked: " + p.DefragFrom},
			result.Figure{Name: "predicted_snapshot_send", Value: p.SnapshotSendSeconds, Unit: "s", Description: "a snapshot sent to a new member: " + p.SnapshotSendFrom})
	}
	return f
}

// notes say what the tables and the db's lines do not.
func notes(a *Analysis, d *result.Data) []string {
	var out []string
	if h := a.Helm; h.Releases > 0 {
		out = append(out, fmt.Sprintf("Helm: %d releases keep %d release Secrets (%s); %s keeps the most, %d", h.Releases, h.Secrets, units.FormatBytes(h.Bytes), h.Most, h.MostRevisions))
	}
	if d.DB.QuotaBytes == 0 {
		out = append(out, "the quota is not known (a member says it only online, with --endpoints): the quota rule judged nothing")
	}
	if p := d.Predicted; p != nil && d.Source != "data-dir" {
		out = append(out, "a snapshot holds no WAL: the predicted restart replays none")
	}
	return out
}
