package diskmodel

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"etcdbench/internal/capacity/sweep"
	"etcdbench/internal/capacity/volume"
	"etcdbench/internal/disk"
	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// CapacityParams are the settings of the capacity sweep: open-loop WAL
// steps of rising offered rate (see package sweep).
type CapacityParams struct {
	// Shape is the puts the sweep models (check perf's); EntryBytes the
	// bytes each takes in the WAL (Shape.WALEntryBytes() unless set).
	Shape      PutShape
	EntryBytes int
	// Clients bounds the entries one WAL sync carries, as etcd's clients
	// bound the proposals waiting for its WAL; 0: the clients of the
	// check perf load at each step's rate (CheckPerfClients).
	Clients int
	// The ladder: the first rate, the ratio between steps, the bounds,
	// and the bisection's resolution (0.1: 10 %).
	Start, Factor, Min, Max, Resolution float64
	// Each step stops when its p99 verdict is decided, never before
	// StepMinRuntime and StepMinSamples syncs, never after StepRuntime.
	StepMinRuntime time.Duration
	StepMinSamples int64
	StepRuntime    time.Duration
	Confidence     float64 // overall, shared among the steps
	// Background is "backend" to run etcd's own backend beside the WAL
	// for the whole sweep, fed every put the WAL made durable and
	// committing every 100 ms as etcd's (see etcdmodel.go), or "none" for
	// the WAL alone.
	Background string
	// Marks are the reference loads the answer is compared with.
	Marks []result.CapacityMark
}

// CapacityDescription says what the capacity workload does, for reports.
const CapacityDescription = "the highest write rate the WAL carries within etcd's limits: open-loop steps of rising offered rate (a geometric ladder, then a bisection around the knee), each as long as its own p99 verdict needs, stopping at the first that fails"

var capacitySpec = disk.Spec{
	Name:        "capacity",
	Description: CapacityDescription,
	Short:       "Find the highest write rate the WAL carries within etcd's limits",
	Params: []disk.Param{
		{Name: "entry-bytes", Usage: "bytes per WAL entry (1360: a check perf put, a 256-byte key and a 1024-byte value, in etcd's WAL; the backend's values follow it)"},
		{Name: "clients", Usage: "most entries one WAL sync carries, as etcd's clients bound its raft batches (0: check perf's clients at each step's rate: 50, 200, 500, 1000)"},
		{Name: "start", Usage: "first offered rate, entries per second"},
		{Name: "max-rate", Usage: "highest offered rate tried"},
		{Name: "factor", Usage: "ratio between two rungs of the ladder (above 1)"},
		{Name: "resolution", Usage: "the bisection stops when the failing rate is within this fraction above the passing one (e.g. 0.1; large values skip it)"},
		{Name: "step-runtime", Usage: "cap on each step"},
		{Name: "step-min-runtime", Usage: "each step never stops earlier"},
		{Name: "background", Usage: "backend: etcd's own backend (bbolt) beside the WAL, fed every put the WAL made durable and committing every 100 ms, its commit p99 judged; none: the WAL alone"},
	},
	Build: func(p disk.Preset, s *disk.Settings) (disk.Workload, error) {
		c, err := PresetNamed(p.Name)
		if err != nil {
			return nil, err
		}
		s.Integer("entry-bytes", &c.EntryBytes, 1, 1<<20)
		if s.Has("entry-bytes") {
			c.Shape = c.Shape.withEntryBytes(c.EntryBytes)
		}
		s.Integer("clients", &c.Clients, 0, 4096)
		s.Rate("start", &c.Start)
		s.Rate("max-rate", &c.Max)
		s.Fraction("factor", &c.Factor, 1, 100)
		s.Fraction("resolution", &c.Resolution, 0, 100)
		s.Duration("step-runtime", &c.StepRuntime, false)
		s.Duration("step-min-runtime", &c.StepMinRuntime, true)
		s.Choice("background", &c.Background, "backend", "none")
		if err := s.Err(); err != nil {
			return nil, err
		}
		c.Min = min(c.Min, c.Start)
		if c.Max < c.Start {
			return nil, disk.BadSetting(disk.ErrBadParam, "--max-rate %v is below --start %v", c.Max, c.Start)
		}
		if c.StepRuntime < c.StepMinRuntime {
			return nil, disk.BadSetting(disk.ErrBadParam, "--step-runtime %v is shorter than --step-min-runtime %v", c.StepRuntime, c.StepMinRuntime)
		}
		return capacityWorkload{p: c}, nil
	},
}

type capacityWorkload struct {
	p     CapacityParams
	plain bool // tests on a fusedelay mount of this process (see disk.WALConfig.Plain)
}

// NewCapacityWorkload returns the capacity sweep with p.
func NewCapacityWorkload(p CapacityParams) disk.Workload { return capacityWorkload{p: p} }

// maxBatch is the most entries one sync carries at rate.
func (w capacityWorkload) maxBatch(rate float64) int {
	if w.p.Clients > 0 {
		return w.p.Clients
	}
	return CheckPerfClients(rate)
}

// backendMinCommits is the fewest backend commits a step holds before it
// can pass: a commit p99 over fewer is a guess (20 commits' p99 is their
// slowest), and a step of a second passes on what a throttled volume lets
// through before its queue fills (at 2,000 write IOPS a 1 s step at
// 1,600/s passed where etcd failed at 1,233; bench/capacity-vs-etcd).
const backendMinCommits = 20

// minStepRuntime is the shortest step: the preset's, and with etcd's
// backend beside the WAL, long enough for backendMinCommits commits.
func (w capacityWorkload) minStepRuntime() time.Duration {
	if w.p.Background != "backend" {
		return w.p.StepMinRuntime
	}
	return min(max(w.p.StepMinRuntime, backendMinCommits*backendInterval), w.p.StepRuntime)
}

func (w capacityWorkload) stepConfig(th verdict.Thresholds, rate, confidence float64) disk.WALConfig {
	cfg := disk.WALConfig{
		BlockSize: w.p.EntryBytes, Rate: rate, MaxBatch: w.maxBatch(rate), Mode: disk.ModeAdaptive, Runtime: w.p.StepRuntime, Plain: w.plain,
		Rule: stats.StopRule{
			Threshold: units.FromSeconds(th.WALFsyncP99.Limit), Quantile: 0.99, Confidence: confidence,
			MinSamples: w.p.StepMinSamples, MinDuration: w.minStepRuntime(), Interval: time.Second,
		},
	}
	cfg.Stretch = w.stretch(cfg.Rule, rate)
	return cfg
}

// stepStretch bounds how far past the preset's cap a slow step may run
// for the syncs its pass needs.
const stepStretch = 4

// stretch is how long a step at rate may run when its cap ends it short
// of the syncs a pass needs (disk.WALConfig.Stretch): stepStretch times the
// cap at a rate that cannot give twice those syncs within the cap but
// can give them within the stretch, none otherwise (a step at 2/s cannot
// pass in any time a sweep has). Under --quick's 8 s a step at 50 puts/s
// had 400 syncs of the some 900 a p99 pass needs, so a storage whose syncs are capped at 80/s,
// where etcd carries 60 puts/s, was answered 0 (bench/capacity-vs-etcd's
// fuse-rate-80). Whether a step stretches is known from its rate, before
// it runs, so that its looks can be counted up to the stretch.
func (w capacityWorkload) stretch(rule stats.StopRule, rate float64) time.Duration {
	rule.MaxDuration = w.p.StepRuntime
	if rate*w.p.StepRuntime.Seconds() >= 2*float64(rule.SamplesToPass()) {
		return 0
	}
	rule.MaxDuration = stepStretch * w.p.StepRuntime
	if rate*rule.MaxDuration.Seconds() < float64(rule.SamplesToPass()) {
		return 0
	}
	return rule.MaxDuration
}

func (w capacityWorkload) SpaceNeeded() int64 {
	return w.stepConfig(verdict.Defaults(), w.p.Max, w.p.Confidence).SpaceNeeded() + backendSpace
}

func (w capacityWorkload) sweepConfig(th verdict.Thresholds) sweep.Config {
	return sweep.Config{
		Start: w.p.Start, Factor: w.p.Factor, Min: w.p.Min, Max: w.p.Max, Resolution: w.p.Resolution,
		Confidence: w.p.Confidence, Unit: "writes/s", LimitNs: units.FromSeconds(th.WALFsyncP99.Limit).Nanoseconds(),
		Criterion: w.criterion(th),
		Marks:     w.p.Marks, Sizes: sweep.ClusterSizes,
	}
}

// criterion is what every step must meet, in words.
func (w capacityWorkload) criterion(th verdict.Thresholds) string {
	c := fmt.Sprintf("WAL fdatasync p99 < %v (decided), the offered rate kept (no entry waiting over %v at the end), the slowest entry under %v (check perf's slowest put)",
		units.FromSeconds(th.WALFsyncP99.Limit), units.FromSeconds(th.ScheduleLag.Limit), units.FromSeconds(verdict.CheckPerfDefaults().Slowest.Limit))
	if w.p.Background == "backend" {
		c += fmt.Sprintf(", etcd's backend commit p99 < %v", units.FromSeconds(th.BackendCommitP99.Limit))
	}
	batch := "check perf's clients at each rate"
	if w.p.Clients > 0 {
		batch = fmt.Sprintf("%d", w.p.Clients)
	}
	return c + fmt.Sprintf("; entries of %d bytes (a %d-byte key and a %d-byte value), at most %s per sync, background: %s",
		w.p.EntryBytes, w.p.Shape.KeyBytes, w.p.Shape.ValueBytes, batch, w.p.Background)
}

// idleWindow is how long the device's background writes are measured
// before the sweep, to subtract them from each step's.
const idleWindow = time.Second

func (w capacityWorkload) Run(ctx context.Context, env disk.Env) (result.Workload, error) {
	dir, done, err := disk.Workdir(env.Dir, "capacity")
	if err != nil {
		return result.Workload{}, err
	}
	defer done()
	m := disk.StartMeter(env.Root, disk.DeviceName(env))
	scfg := w.sweepConfig(env.Thresholds)
	var be *etcdBackend
	if w.p.Background == "backend" {
		bgDir := filepath.Join(dir, "bg")
		if err := unix.Mkdir(bgDir, 0o700); err != nil {
			return result.Workload{}, fmt.Errorf("creating %s: %w", bgDir, err)
		}
		if be, err = startEtcdBackend(bgDir, w.p.Shape, w.p.EntryBytes); err != nil {
			return result.Workload{}, err
		}
	}
	dev := volume.NewProbe(env.Root, disk.DeviceName(env))
	if err := dev.Idle(ctx, idleWindow); err != nil {
		if be != nil {
			be.close()
		}
		return result.Workload{}, err
	}
	n := 0
	step := func(ctx context.Context, rate, confidence float64) (result.CapacityStep, error) {
		n++
		cfg := w.stepConfig(env.Thresholds, rate, confidence)
		if be != nil {
			cfg.Durable = &be.durable
			limit := units.FromSeconds(env.Thresholds.BackendCommitP99.Limit)
			cfg.Hold = func() bool { return be.holdStep(limit) }
			be.takeStep() // the commits between two steps belong to neither
		}
		if env.OnSecond != nil {
			label := fmt.Sprintf("step %d at %s writes/s:", n, units.FormatValue(rate, ""))
			cfg.OnSecond = func(p disk.Progress) { p.Label = label; env.OnSecond(p) }
		}
		stepDir := filepath.Join(dir, fmt.Sprintf("step-%d", n))
		if err := unix.Mkdir(stepDir, 0o700); err != nil {
			return result.CapacityStep{}, fmt.Errorf("creating %s: %w", stepDir, err)
		}
		defer disk.RemoveAll(stepDir)
		d0 := dev.Read()
		run, err := disk.RunWAL(ctx, stepDir, cfg)
		if run == nil {
			return result.CapacityStep{}, err
		}
		d1 := dev.Read()
		s, werr := stepOf(run, env)
		if err == nil {
			err = werr
		}
		s.MaxBatch = cfg.BatchBound()
		if o := run.Open; o != nil {
			s.Device = dev.Step(d0, d1, o.Entries)
		}
		if be != nil {
			if berr := be.failed(); berr != nil && err == nil {
				err = berr
			}
			be.takeStep().record(&s)
			judgeBackend(&s, env.Thresholds)
		}
		judgeUndecided(&s)
		return s, err
	}
	c, err := sweep.Sweep(ctx, scfg, step)
	if be != nil {
		if bgErr := be.close(); bgErr != nil && err == nil {
			err = fmt.Errorf("etcd's backend: %w", bgErr)
		}
	}
	if c == nil {
		return result.Workload{}, err
	}
	c.Evidence += latencyBoundNote(c, env.Thresholds)
	if dev.OK() && err == nil {
		err = dev.Idle(ctx, idleWindow)
	}
	bgIOPS, bgBytes, bgFlushes := dev.Background()
	if dev.OK() {
		volume.NetOfOthers(c, bgIOPS, bgBytes, bgFlushes)
		c.Budgets, c.Volume = volume.Budgets(c, env.Thresholds)
		volume.Burst(c)
	}
	wl := w.workload(c, env.Thresholds)
	wl.Process, wl.Device = m.Stop()
	if dev.OK() {
		wl.Figures = append(wl.Figures, result.Figure{Name: "device_background_write_iops", Value: bgIOPS, Unit: "ops/s",
			Description: "the device's writes per second by other processes, the lower of an idle second before the sweep and one after it: counted in each step's device figures, taken out of its cost per put"})
		if lo := lowestDeviceIOPS(c); bgIOPS > 0.1*lo {
			wl.Notes = append(wl.Notes, fmt.Sprintf("other processes wrote to the device: %.0f writes/s (%s/s) in the idle seconds before and after the sweep (the lower), against %.0f/s at its lowest step; the device cost per put and the budgets are net of that rate (the device's own figures are not), and a volume's cap is shared with them: etcd gets what they leave", bgIOPS, units.FormatValue(bgBytes, "B"), lo))
		}
	}
	return wl, err
}

// etcdReportedP99 is the p99 of the commit times in h as a real etcd
// reports its own: its etcd_disk_backend_commit_duration_seconds
// histogram has power-of-two buckets from 1 ms, and dashboards, alerts
// and the limit's sources read it with histogram_quantile, which puts the
// rank linearly between the bounds of its bucket. With three commits of
// a hundred between 16 and 32 ms, etcd says 26.8 ms whatever their exact
// times (its p99 at 1,233 puts/s on a 2,000-IOPS volume,
// bench/capacity-vs-etcd), so the sweep judges its commits the same way.
// 0 when h is empty.
func etcdReportedP99(h *hdr.Histogram) int64 { return etcdReportedP99With(h, 0) }

// etcdReportedP99With is etcdReportedP99 of h and fast more commits in
// etcd's first bucket: the least the p99 can fall to if that many commits
// still come.
func etcdReportedP99With(h *hdr.Histogram, fast int64) int64 {
	if h.TotalCount() == 0 {
		return 0
	}
	per := make([]float64, metrics.DiskBuckets)
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		i := 0
		for i < len(per)-1 && float64(b.To) > metrics.DiskBucketBound(i)*1e9 {
			i++
		}
		if float64(b.To) > metrics.DiskBucketBound(i)*1e9 {
			i = len(per) // beyond the last bound: only in the +Inf bucket
		}
		if i < len(per) {
			per[i] += float64(b.Count)
		}
	}
	hist := metrics.DiskHistogram(per...)
	total := float64(h.TotalCount())
	hist.Buckets[len(hist.Buckets)-1].Count, hist.Count = total, total
	return int64(metrics.Quantile(0.99, metrics.WithFast(hist, float64(fast))) * 1e9)
}

// latencyBoundNote says, to end the evidence with, when the lowest rate
// carried already had its WAL fdatasync or backend commit p99 at half
// its limit or more, or "". etcd's histograms have power-of-two buckets,
// so such a p99 is within one bucket of the limit: the storage's latency
// tail, not the rate, then sets the answer, and a few slow syncs more or
// less move it. On a FUSE storage whose syncs wait a log-normal delay
// (median 1 ms, p99 5 ms) the sweep carried 100-951 writes/s with backend
// commit p99s of 15.7-20.8 ms at every rate, and etcd 3.4 passed 566, 519
// and 336 puts/s in three runs, the embedded etcd 92
// (bench/capacity-vs-etcd); on a healthy disk the lowest rates' p99s are
// 1-4 ms.
func latencyBoundNote(c *result.Capacity, th verdict.Thresholds) string {
	var low *result.CapacityStep
	for i, s := range c.Steps {
		if sweep.Passed(s) && sweep.Counted(s) && (low == nil || s.Rate < low.Rate) {
			low = &c.Steps[i]
		}
	}
	if low == nil {
		return ""
	}
	var near []string
	for _, f := range []struct {
		what  string
		p99   int64
		limit float64
		has   bool
	}{
		{"WAL fdatasync p99", low.SyncP99Ns, th.WALFsyncP99.Limit, low.Syncs > 0},
		{"backend commit p99", low.BackendCommitP99Ns, th.BackendCommitP99.Limit, low.BackendCommits > 0},
	} {
		limit := units.FromSeconds(f.limit)
		if f.has && limit > 0 && time.Duration(f.p99) >= limit/2 {
			near = append(near, fmt.Sprintf("the %s was already %v, %.0f %% of its %v limit", f.what,
				time.Duration(f.p99).Round(100*time.Microsecond), 100*float64(f.p99)/float64(limit), limit))
		}
	}
	if len(near) == 0 {
		return ""
	}
	return fmt.Sprintf("; at the lowest rate carried (%.0f %s) %s: within one of etcd's power-of-two histogram buckets of the limit, so this storage's latency tail, not the rate, sets the answer, and a few slow syncs more or less move it (a real etcd's answer on such a storage moves from run to run): it needs a lower latency tail, not more IOPS",
		low.Rate, c.Unit, strings.Join(near, ", and "))
}

// judgeBackend fails a step whose backend commit p99, as etcd reports
// it, reached etcd's limit.
func judgeBackend(s *result.CapacityStep, th verdict.Thresholds) {
	limit := units.FromSeconds(th.BackendCommitP99.Limit)
	if s.BackendCommits == 0 || time.Duration(s.BackendCommitP99Ns) < limit {
		return
	}
	s.Status = verdict.Fail
	if s.Failed == "" {
		from := "etcd's own histogram"
		if s.BackendCommitTimed {
			from = "timed around each commit"
		}
		s.Failed = fmt.Sprintf("%s: %v over %d commits, limit %v (etcd's backend, fed the step's puts; %s)", th.BackendCommitP99.Title,
			time.Duration(s.BackendCommitP99Ns).Round(10*time.Microsecond), s.BackendCommits, limit, from)
	}
}

// judgeUndecided says why a step whose p99 verdict was not decided is not
// a carried rate (see sweep.Passed).
func judgeUndecided(s *result.CapacityStep) {
	if !s.Decided && s.Status != verdict.Fail && s.Failed == "" {
		s.Failed = "undecided: the WAL fdatasync p99 was neither shown under nor over the limit before the step's cap, so the rate is not counted as carried"
	}
}

// stepOf turns one open-loop run into a step of the sweep: its verdict is
// the worst of the p99, the schedule and the slowest entry.
func stepOf(run *disk.WALRun, env disk.Env) (result.CapacityStep, error) {
	s := result.CapacityStep{
		Decided: run.Decision.Outcome != stats.Undecided, DurationNs: run.Elapsed.Nanoseconds(), Syncs: run.Ops,
		SyncP50Ns: run.Sync.ValueAtPercentile(50), SyncP99Ns: run.Sync.ValueAtPercentile(99),
	}
	if secs := run.Elapsed.Seconds(); secs > 0 {
		s.SyncsPerSec = float64(run.Ops) / secs
	}
	if o := run.Open; o != nil {
		s.Achieved = o.Achieved(run.Elapsed)
		s.CommitP50Ns, s.CommitP99Ns = o.Commit.ValueAtPercentile(50), o.Commit.ValueAtPercentile(99)
		s.CommitMaxNs = o.Commit.Max()
		s.BacklogMax, s.LagEndNs = float64(o.BacklogMax), o.LagEnd.Nanoseconds()
		if run.Ops > 0 {
			s.EntriesPerSync = float64(o.Entries) / float64(run.Ops)
			s.BytesPerSync = float64(run.Bytes) / float64(run.Ops)
		}
	}
	wl, err := run.Workload(env.Thresholds, env.Facts)
	if err != nil {
		return s, err
	}
	for _, v := range wl.Verdicts {
		if v.Check != env.Thresholds.WALFsyncP99.ID && v.Check != env.Thresholds.ScheduleLag.ID {
			continue
		}
		if v.Status > s.Status {
			s.Status = v.Status
		}
		if v.Status == verdict.Fail && s.Failed == "" {
			s.Failed = v.Title + ": " + v.Detail
		}
	}
	if slow := verdict.CheckPerfDefaults().Slowest; s.CommitMaxNs > 0 && time.Duration(s.CommitMaxNs) > units.FromSeconds(slow.Limit) {
		s.Status = verdict.Fail
		if s.Failed == "" {
			s.Failed = fmt.Sprintf("slowest entry: %v from its scheduled arrival to its fdatasync, limit %v (%s)",
				time.Duration(s.CommitMaxNs).Round(time.Millisecond), units.FromSeconds(slow.Limit), slow.Source)
		}
	}
	return s, nil
}

// workload is the sweep as a result: the answer, the curve, the verdict.
func (w capacityWorkload) workload(c *result.Capacity, th verdict.Thresholds) result.Workload {
	wl := result.Workload{
		Name: "capacity", Description: CapacityDescription,
		Parameters: map[string]any{
			"entry_bytes": w.p.EntryBytes, "start": w.p.Start, "factor": w.p.Factor, "min_rate": w.p.Min, "max_rate": w.p.Max,
			"resolution": w.p.Resolution, "confidence": w.p.Confidence, "step_confidence": c.StepConfidence,
			"step_runtime_ns": w.p.StepRuntime.Nanoseconds(), "step_min_runtime_ns": w.p.StepMinRuntime.Nanoseconds(),
			"step_min_samples": w.p.StepMinSamples, "threshold_ns": units.FromSeconds(th.WALFsyncP99.Limit).Nanoseconds(),
			"background": w.p.Background, "key_bytes": w.p.Shape.KeyBytes, "value_bytes": w.p.Shape.ValueBytes, "clients": w.p.Clients,
		},
		Stop:      result.Stop{Mode: "sweep", Reason: sweepReason(c)},
		Latencies: []result.Latency{},
		Series:    []stats.SecondSample{},
		Verdicts:  []verdict.Verdict{},
		Capacity:  c,
	}
	for _, s := range c.Steps {
		wl.Ops += s.Syncs
		wl.Bytes += int64(s.BytesPerSync * float64(s.Syncs))
		wl.DurationNs += s.DurationNs
	}
	if secs := time.Duration(wl.DurationNs).Seconds(); secs > 0 {
		wl.OpsPerSec, wl.BytesPerSec = float64(wl.Ops)/secs, float64(wl.Bytes)/secs
	}
	wl.Figures = append(wl.Figures, result.Figure{Name: "capacity_rate", Value: c.Rate, Unit: "ops/s", Description: "highest offered write rate whose step met every limit"})
	if c.Upper > 0 {
		wl.Figures = append(wl.Figures, result.Figure{Name: "capacity_upper", Value: c.Upper, Unit: "ops/s", Description: "lowest offered write rate whose step failed: the limit lies between the two"})
	}
	if !c.Interrupted {
		wl.Verdicts = append(wl.Verdicts, verdict.JudgeCapacity(th.CapacityMin, th.CapacityHeavy, c.Rate, c.Decided, c.Confidence, c.Criterion))
	}
	return wl
}

func sweepReason(c *result.Capacity) string {
	switch {
	case c.Interrupted:
		return fmt.Sprintf("interrupted after %d steps", len(c.Steps))
	case c.Upper == 0:
		undecided := 0
		for _, s := range c.Steps {
			if sweep.Counted(s) && !s.Decided && s.Status != verdict.Fail {
				undecided++
			}
		}
		if undecided > 0 {
			return fmt.Sprintf("every decided step passed, up to the highest rate tried (%d steps, %d undecided)", len(c.Steps), undecided)
		}
		return fmt.Sprintf("every step passed, up to the highest rate tried (%d steps)", len(c.Steps))
	}
	return fmt.Sprintf("%d steps: the knee lies between %.0f and %.0f writes/s", len(c.Steps), c.Rate, c.Upper)
}

// lowestDeviceIOPS is the device's writes per second at the sweep's
// lowest step with device figures (0: none).
func lowestDeviceIOPS(c *result.Capacity) float64 {
	lo, rate := 0.0, 0.0
	for _, s := range c.Steps {
		if s.Device != nil && (rate == 0 || s.Rate < rate) {
			lo, rate = s.Device.WriteIOPS, s.Rate
		}
	}
	return lo
}
