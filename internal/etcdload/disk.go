package etcdload

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"time"

	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// etcd's disk histograms, as Bench judges them.
const (
	WALFsyncMetric      = observe.WALFsyncMetric
	BackendCommitMetric = observe.BackendCommitMetric
)

// histogramDetail explains where a disk verdict's figure comes from.
const histogramDetail = "from etcd's own histogram (%s, the difference of two scrapes around the load), %s; " +
	"its buckets are 1 ms wide at the bottom and double from there (8-16 ms around 10 ms), " +
	"so the p99 is interpolated linearly within its bucket as Prometheus' histogram_quantile does"

// minObservations is the fewest observations whose p99 JudgeDisk judges
// by default: with fewer, the 99th percentile is the slowest call or two,
// and one slow call would decide the verdict.
const minObservations = 100

// JudgeDisk judges every target's WAL fsync p99 against t.WALFsyncP99
// (WARN within t.WarnMargin under it) and backend commit p99 against
// t.BackendCommitP99. A histogram with fewer than min observations (0:
// minObservations) gives a note instead of a verdict; with decideEarly
// (BenchOptions.DecideEarly), a verdict when its p99 is over the limit
// for good.
func JudgeDisk(t verdict.Thresholds, mds []observe.Member, min int, decideEarly bool) (vs []verdict.Verdict, notes []string) {
	if min <= 0 {
		min = minObservations
	}
	for _, md := range mds {
		for _, c := range []struct {
			th     verdict.Threshold
			metric string
			h      metrics.Histogram
			margin float64
			advice string
		}{
			{t.WALFsyncP99, WALFsyncMetric, md.WALFsync, t.WarnMargin.Limit, "etcd's WAL waits too long for its fdatasyncs (its histogram counts the disk's time and the wait for a CPU after the call alike: the disk is to blame only when the syncs are slow without that wait)"},
			{t.BackendCommitP99, BackendCommitMetric, md.BackendCommit, 0, "bbolt's commits are slow (their histogram counts the disk's time and the waits for a CPU between the commit's writes alike: the disk is to blame only when the device itself is slow)"},
		} {
			p99 := metrics.Quantile(0.99, c.h)
			if math.IsNaN(p99) {
				notes = append(notes, fmt.Sprintf("%s: no %s observations during the load, so no %s verdict", md.Target.Name, c.metric, c.th.Title))
				continue
			}
			if c.h.Count < float64(min) {
				// Too few for a p99, unless it is over the limit for good:
				// the observations still to come, however fast, could not
				// bring it back under (a 3 s step of `etcd capacity` on a
				// slow-sync storage held 17 backend commits with a p99 of
				// 127 ms, and passed unjudged).
				if forGood := metrics.Quantile(0.99, metrics.WithFast(c.h, float64(min)-c.h.Count)); !decideEarly || forGood < c.th.Limit {
					notes = append(notes, fmt.Sprintf("%s: only %.0f %s observations during the load (p99 %v), too few to judge a p99 (at least %d); run the load longer for a %s verdict",
						md.Target.Name, c.h.Count, c.metric, secs(p99), min, c.th.Title))
					continue
				}
				v := judgeP99(c.th, c.margin, p99, md.Target, c.metric, c.h.Count, c.advice)
				v.Detail += fmt.Sprintf("; only %.0f observations, but %d, the rest however fast, would still put the p99 over the limit", c.h.Count, min)
				vs = append(vs, v)
				continue
			}
			vs = append(vs, judgeP99(c.th, c.margin, p99, md.Target, c.metric, c.h.Count, c.advice))
		}
	}
	return vs, notes
}

func judgeP99(th verdict.Threshold, margin, p99 float64, tg observe.Target, metric string, n float64, advice string) verdict.Verdict {
	v := verdict.Verdict{
		Check: th.ID, Title: th.Title + " (" + tg.Name + ", etcd's histogram)", Value: p99, Unit: th.Unit,
		Limit: th.Limit, Comparison: "<", Source: th.Source,
	}
	if margin > 0 {
		warnAt := (1 - margin) * th.Limit
		v.WarnLimit = &warnAt
	}
	val, limit := secs(p99), secs(th.Limit)
	from := fmt.Sprintf(histogramDetail, metric, fmt.Sprintf("%.0f observations, %s", n, tg.About))
	switch {
	case p99 >= th.Limit:
		v.Status = verdict.Fail
		v.Detail = fmt.Sprintf("p99 %v is over the %v limit: %s. The p99 comes %s", val, limit, advice, from)
	case margin > 0 && p99 >= (1-margin)*th.Limit:
		v.Status = verdict.Warn
		v.Detail = fmt.Sprintf("p99 %v passes but is within %.0f %% of the %v limit. The p99 comes %s", val, 100*margin, limit, from)
	default:
		v.Status = verdict.Pass
		v.Detail = fmt.Sprintf("p99 %v is under the %v limit. The p99 comes %s", val, limit, from)
	}
	return v
}

// settleBound is the longest Bench waits for the members to commit the
// run's deleted keys: a commit of thousands of tombstones on a slow
// storage takes hundreds of milliseconds.
const settleBound = 5 * time.Second

func secs(s float64) time.Duration {
	return units.FromSeconds(s).Round(time.Microsecond)
}

// BenchOptions say whose /metrics Bench reads and how it judges them.
type BenchOptions struct {
	Targets    []observe.Target
	Thresholds verdict.Thresholds
	HTTP       *http.Client // nil: metrics.Scrape's client (no keep-alives)
	// BestEffort turns a target whose /metrics cannot be read into a note
	// instead of an error: an external cluster may serve its metrics
	// elsewhere (--listen-metrics-urls) or behind TLS.
	BestEffort bool
	// After is done to the cluster once the load's metrics are read.
	After Maintenance
	// Sample, when not zero, is how often the targets' proposal backlog
	// is read during the load (figures *_proposals_pending_max and
	// *_proposals_unapplied_max); each sample is a scrape of every
	// target, made by the load generator while it sends.
	Sample time.Duration
	// PIDs are the embedded members' process IDs (none for an external
	// cluster): a bench may trace them.
	PIDs []int
	// MinObservations is the fewest observations of a member's disk
	// histogram whose p99 is judged (0: 100). A capacity sweep's short
	// steps judge fewer: its failing steps are repeated, so one slow
	// commit does not set the answer.
	MinObservations int
	// DecideEarly fails a p99 from fewer than MinObservations when it is
	// over the limit for good (the missing observations, however fast,
	// could not bring it under): a capacity step left unjudged would
	// count as carried. Without it such a p99 is a note, as in check's
	// short loads.
	DecideEarly bool
	// Settle waits, once the run's keys are deleted, until every member's
	// backend committed that deletion (observe.Watch.Settle), so that
	// its commit - thousands of tombstones, the slowest of a step's on a
	// slow storage - is not counted in the next load, as it was in a
	// capacity sweep's next step.
	Settle bool
}

// Bench runs l with two scrapes of every target's /metrics around it and
// adds the members' figures, verdicts and notes to the workload, and the
// members as observed to the outcome. Without targets it is Run. An
// interrupted run gets no disk figures or verdicts.
func Bench(ctx context.Context, l Load, o BenchOptions) (out *Outcome, err error) {
	var notes []string
	var watch *observe.Watch
	defer func() {
		if watch != nil {
			watch.StopSampling()
		}
	}()
	// The first scrape is taken when the timed load is about to start,
	// after the keys a range or mixed load reads were written.
	l.ready = func(ctx context.Context) error {
		w, n, err := observe.Begin(ctx, observe.Options{Targets: o.Targets, HTTP: o.HTTP, BestEffort: o.BestEffort, Sample: o.Sample})
		notes = append(notes, n...)
		watch = w
		return err
	}
	// The second scrape is taken when the timed load ended, before the
	// run's keys are deleted: on a 3 s capacity step the delete's commit
	// (thousands of tombstones) was one of some 30 commits, and alone
	// failed a step's backend commit p99.
	var ms []observe.Member
	var endErr error
	ended := false
	l.finished = func(err error) {
		if watch == nil {
			return
		}
		watch.StopSampling()
		if err == nil && len(watch.Targets()) > 0 {
			ms, endErr = watch.End(ctx)
			ended = true
		}
	}
	out, err = Run(ctx, l)
	if watch != nil {
		watch.StopSampling()
	}
	if out != nil {
		out.Workload.Notes = append(out.Workload.Notes, notes...)
	}
	if err != nil {
		return out, err
	}
	if o.Settle && ended && endErr == nil && out.Deleted > 0 {
		if err := watch.Settle(ctx, settleBound); err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			out.Workload.Notes = append(out.Workload.Notes, "the deletion of the run's keys: "+err.Error())
		}
	}
	defer func() {
		if err != nil || out == nil {
			return
		}
		figs, mnotes, merr := maintain(ctx, l, o.After)
		out.Workload.Figures = append(out.Workload.Figures, figs...)
		out.Workload.Notes = append(out.Workload.Notes, mnotes...)
		err = merr
	}()
	if watch == nil || len(watch.Targets()) == 0 {
		return out, nil
	}
	if !ended {
		ms, endErr = watch.End(ctx)
	}
	err = endErr
	if err == nil {
		out.Members = ms
		w := &out.Workload
		w.Figures = append(w.Figures, observe.Figures(ms)...)
		vs, vnotes := JudgeDisk(o.Thresholds, ms, o.MinObservations, o.DecideEarly)
		w.Verdicts = append(w.Verdicts, vs...)
		w.Verdicts = append(w.Verdicts, JudgeHealth(verdict.DiagnoseDefaults(), ms)...)
		w.Notes = append(w.Notes, vnotes...)
		for _, t := range watch.Targets() {
			w.Notes = append(w.Notes, fmt.Sprintf("disk metrics %s_*: %s (%s)", t.Name, t.About, t.URL))
		}
	}
	if err != nil && o.BestEffort && ctx.Err() == nil {
		out.Workload.Notes = append(out.Workload.Notes, "no disk metrics: "+err.Error())
		return out, nil
	}
	return out, err
}
