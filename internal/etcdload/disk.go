package etcdload

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/result"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// etcd's disk histograms (buckets ExponentialBuckets(0.001, 2, 14): 1 ms to
// 8.192 s, doubling).
const (
	WALFsyncMetric      = "etcd_disk_wal_fsync_duration_seconds"
	BackendCommitMetric = "etcd_disk_backend_commit_duration_seconds"
)

// MetricsTarget is one /metrics endpoint and the name its figures carry.
type MetricsTarget struct {
	// Name prefixes the figures, e.g. "member0".
	Name string
	URL  string
	// About says what the figures cover, for the notes.
	About string
}

// EmbeddedTargets returns what to scrape for an embedded cluster, given
// its members' /metrics URLs in member order (etcdcluster's
// Cluster.MetricsURLs): one target per member, named member0, member1...
// Three members run in processes of their own, so each target covers
// only its member.
func EmbeddedTargets(urls []string) []MetricsTarget {
	if len(urls) == 1 {
		return []MetricsTarget{{Name: "member0", URL: urls[0], About: "the embedded member"}}
	}
	ts := make([]MetricsTarget, len(urls))
	for i, u := range urls {
		ts[i] = MetricsTarget{Name: fmt.Sprintf("member%d", i), URL: u, About: fmt.Sprintf("embedded member %d (its own process)", i)}
	}
	return ts
}

// MemberDisk is what one target's disk histograms recorded during the load:
// the difference of a scrape after and one before.
type MemberDisk struct {
	Target        MetricsTarget
	WALFsync      metrics.Histogram
	BackendCommit metrics.Histogram
	// Others are the figures of metrics that not every etcd has or that
	// appear only once used (apply duration, slow applies, leader
	// changes, db size, peer round trips); missing ones are left out.
	Others []result.Figure
}

// Further metrics read around the load, when the member has them.
const (
	ApplyMetric         = "etcd_server_apply_duration_seconds"
	SlowApplyMetric     = "etcd_server_slow_apply_total"
	LeaderChangesMetric = "etcd_server_leader_changes_seen_total"
	DBSizeMetric        = "etcd_mvcc_db_total_size_in_bytes"
	PeerRTTMetric       = "etcd_network_peer_round_trip_time_seconds"
)

// otherFigures reads the optional metrics of one target, whose scrapes
// were window apart.
func otherFigures(name string, before, after metrics.Families, window time.Duration) []result.Figure {
	out := cpuFigures(name, before, after, window)
	for _, c := range []struct{ metric, id, what string }{
		{SlowApplyMetric, "slow_applies", "applies slower than --warning-apply-duration (100 ms) during the load"},
		{LeaderChangesMetric, "leader_changes", "leader changes seen during the load"},
	} {
		b, berr := metrics.ValueOf(before, c.metric)
		a, aerr := metrics.ValueOf(after, c.metric)
		if berr == nil && aerr == nil && a >= b {
			out = append(out, result.Figure{Name: name + "_" + c.id, Value: a - b, Unit: "count", Description: c.what})
		}
	}
	if v, err := metrics.ValueOf(after, DBSizeMetric); err == nil {
		out = append(out, result.Figure{Name: name + "_db_size", Value: v, Unit: "B", Description: "backend database file size after the load"})
	}
	for _, c := range []struct{ metric, id, what string }{
		{ApplyMetric, "apply_p99", "apply duration p99 during the load (etcd's histogram, 0.1 ms buckets at the bottom)"},
		{PeerRTTMetric, "peer_rtt_p99", "peer round-trip time p99 during the load (etcd's histogram, 0.1 ms buckets at the bottom)"},
	} {
		if h, ok := metrics.HistogramDelta(before, after, c.metric); ok {
			if v := metrics.Quantile(0.99, h); !math.IsNaN(v) {
				out = append(out, result.Figure{Name: name + "_" + c.id, Value: v, Unit: "s", Description: c.what})
			}
		}
	}
	return out
}

// scraped is one target's /metrics and when it was read: the middle of
// the request, when the member's handler ran.
type scraped struct {
	f  metrics.Families
	at time.Time
}

// scrapeAll scrapes every target.
func scrapeAll(ctx context.Context, client *http.Client, ts []MetricsTarget) ([]scraped, error) {
	out := make([]scraped, len(ts))
	for i, t := range ts {
		sent := time.Now()
		f, err := metrics.Scrape(ctx, client, t.URL)
		if err != nil {
			return nil, fmt.Errorf("etcdload: %s: %w", t.Name, err)
		}
		out[i] = scraped{f: f, at: sent.Add(time.Since(sent) / 2)}
	}
	return out, nil
}

// diskDeltas subtracts the before scrapes from the after scrapes.
func diskDeltas(ts []MetricsTarget, befores, afters []scraped) ([]MemberDisk, error) {
	var out []MemberDisk
	for i, t := range ts {
		before, after := befores[i].f, afters[i].f
		md := MemberDisk{Target: t, Others: otherFigures(t.Name, before, after, afters[i].at.Sub(befores[i].at))}
		for _, m := range []struct {
			name string
			dst  *metrics.Histogram
		}{{WALFsyncMetric, &md.WALFsync}, {BackendCommitMetric, &md.BackendCommit}} {
			b, err := metrics.HistogramOf(before, m.name)
			if err != nil {
				return nil, fmt.Errorf("etcdload: %s: %w", t.Name, err)
			}
			a, err := metrics.HistogramOf(after, m.name)
			if err != nil {
				return nil, fmt.Errorf("etcdload: %s: %w", t.Name, err)
			}
			if *m.dst, err = metrics.Delta(b, a); err != nil {
				return nil, fmt.Errorf("etcdload: %s %s: %w", t.Name, m.name, err)
			}
		}
		out = append(out, md)
	}
	return out, nil
}

// DiskFigures are each target's WAL fsync and backend commit p50, p99 and
// counts over the load, e.g. "member0_wal_fsync_p99" in seconds. A
// quantile of an empty histogram is NaN and left out.
func DiskFigures(mds []MemberDisk) []result.Figure {
	var out []result.Figure
	for _, md := range mds {
		for _, h := range []struct {
			id, what string
			h        metrics.Histogram
		}{{"wal_fsync", "WAL fdatasync", md.WALFsync}, {"backend_commit", "backend commit", md.BackendCommit}} {
			out = append(out, result.Figure{
				Name: md.Target.Name + "_" + h.id + "s", Value: h.h.Count, Unit: "count",
				Description: h.what + "s during the load (etcd's histogram)",
			})
			for _, q := range []float64{0.5, 0.99} {
				v := metrics.Quantile(q, h.h)
				if math.IsNaN(v) {
					continue
				}
				out = append(out, result.Figure{
					Name: fmt.Sprintf("%s_%s_p%g", md.Target.Name, h.id, 100*q), Value: v, Unit: "s",
					Description: fmt.Sprintf("%s p%g during the load (etcd's histogram, interpolated as histogram_quantile does)", h.what, 100*q),
				})
			}
		}
		out = append(out, md.Others...)
	}
	return out
}

// histogramDetail explains where a disk verdict's figure comes from.
const histogramDetail = "from etcd's own histogram (%s, the difference of two scrapes around the load), %s; " +
	"its buckets are 1 ms wide at the bottom and double from there (8-16 ms around 10 ms), " +
	"so the p99 is interpolated linearly within its bucket as Prometheus' histogram_quantile does"

// minObservations is the fewest observations whose p99 JudgeDisk judges:
// with fewer, the 99th percentile is the slowest call or two, and one
// slow call would decide the verdict.
const minObservations = 100

// JudgeDisk judges every target's WAL fsync p99 against t.WALFsyncP99
// (WARN within t.WarnMargin under it) and backend commit p99 against
// t.BackendCommitP99. A histogram with fewer than minObservations
// observations gives a note instead of a verdict.
func JudgeDisk(t verdict.Thresholds, mds []MemberDisk) (vs []verdict.Verdict, notes []string) {
	for _, md := range mds {
		for _, c := range []struct {
			th     verdict.Threshold
			metric string
			h      metrics.Histogram
			margin float64
			advice string
		}{
			{t.WALFsyncP99, WALFsyncMetric, md.WALFsync, t.WarnMargin.Limit, "etcd's WAL waits too long for the disk; use a faster disk (SSD/NVMe) dedicated to etcd"},
			{t.BackendCommitP99, BackendCommitMetric, md.BackendCommit, 0, "bbolt commits are slow; use a faster disk and keep other writers off it"},
		} {
			p99 := metrics.Quantile(0.99, c.h)
			if math.IsNaN(p99) {
				notes = append(notes, fmt.Sprintf("%s: no %s observations during the load, so no %s verdict", md.Target.Name, c.metric, c.th.Title))
				continue
			}
			if c.h.Count < minObservations {
				notes = append(notes, fmt.Sprintf("%s: only %.0f %s observations during the load (p99 %v), too few to judge a p99 (at least %d); run the load longer for a %s verdict",
					md.Target.Name, c.h.Count, c.metric, secs(p99), minObservations, c.th.Title))
				continue
			}
			vs = append(vs, judgeP99(c.th, c.margin, p99, md.Target, c.metric, c.h.Count, c.advice))
		}
	}
	return vs, notes
}

func judgeP99(th verdict.Threshold, margin, p99 float64, tg MetricsTarget, metric string, n float64, advice string) verdict.Verdict {
	v := verdict.Verdict{
		Check: th.ID, Title: th.Title + " (" + tg.Name + ", etcd's histogram)", Value: p99, Unit: th.Unit,
		Limit: th.Limit, Comparison: "<", Source: th.Source,
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

func secs(s float64) time.Duration {
	return units.FromSeconds(s).Round(time.Microsecond)
}

// BenchOptions say whose /metrics Bench reads and how it judges them.
type BenchOptions struct {
	Targets    []MetricsTarget
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
}

// ExternalTargets returns a target per client endpoint, named member0,
// member1... in the order given; an endpoint without a scheme gets http://.
func ExternalTargets(endpoints []string) []MetricsTarget {
	ts := make([]MetricsTarget, len(endpoints))
	for i, ep := range endpoints {
		u := strings.TrimSuffix(ep, "/")
		if !strings.Contains(u, "://") {
			u = "http://" + u
		}
		ts[i] = MetricsTarget{Name: fmt.Sprintf("member%d", i), URL: u + "/metrics", About: "the member at " + ep}
	}
	return ts
}

// Bench runs l with two scrapes of every target's /metrics around it and
// adds the disk figures, verdicts and notes to the workload. Without
// targets it is Run. An interrupted run gets no disk figures or verdicts.
func Bench(ctx context.Context, l Load, o BenchOptions) (out *Outcome, err error) {
	targets := o.Targets
	var notes []string
	var before []scraped
	var kept []MetricsTarget
	var sampler *backlogSampler
	sampled := func() []result.Figure {
		if sampler == nil {
			return nil
		}
		figs := sampler.finish()
		sampler = nil
		return figs
	}
	defer sampled()
	// The first scrape is taken when the timed load is about to start,
	// after the keys a range or mixed load reads were written.
	l.ready = func(ctx context.Context) error {
		sctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
		defer cancel()
		for _, t := range targets {
			f, err := scrapeAll(sctx, o.HTTP, []MetricsTarget{t})
			switch {
			case err != nil && o.BestEffort && ctx.Err() == nil:
				notes = append(notes, fmt.Sprintf("no disk metrics for %s: %v", t.Name, err))
			case err != nil:
				return err
			default:
				kept = append(kept, t)
				before = append(before, f[0])
			}
		}
		if o.Sample > 0 && len(kept) > 0 {
			sampler = startBacklog(ctx, o.HTTP, kept, o.Sample)
		}
		return nil
	}
	out, err = Run(ctx, l)
	backlogFigures := sampled()
	if out != nil {
		out.Workload.Notes = append(out.Workload.Notes, notes...)
	}
	if err != nil {
		return out, err
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
	if len(kept) == 0 {
		return out, nil
	}
	// The backend commits every batch interval: wait one so that the
	// load's last commit is counted.
	select {
	case <-time.After(commitSettle):
	case <-ctx.Done():
		return out, ctx.Err()
	}
	sctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	after, err := scrapeAll(sctx, o.HTTP, kept)
	cancel()
	if err == nil {
		var mds []MemberDisk
		if mds, err = diskDeltas(kept, before, after); err == nil {
			w := &out.Workload
			w.Figures = append(w.Figures, DiskFigures(mds)...)
			w.Figures = append(w.Figures, backlogFigures...)
			vs, vnotes := JudgeDisk(o.Thresholds, mds)
			w.Verdicts = append(w.Verdicts, vs...)
			w.Verdicts = append(w.Verdicts, JudgeHealth(verdict.DiagnoseDefaults(), mds)...)
			w.Notes = append(w.Notes, vnotes...)
			for _, t := range kept {
				w.Notes = append(w.Notes, fmt.Sprintf("disk metrics %s_*: %s (%s)", t.Name, t.About, t.URL))
			}
		}
	}
	if err != nil && o.BestEffort && ctx.Err() == nil {
		out.Workload.Notes = append(out.Workload.Notes, "no disk metrics: "+err.Error())
		return out, nil
	}
	return out, err
}

const (
	// scrapeTimeout bounds one round of /metrics scrapes.
	scrapeTimeout = 10 * time.Second
	// commitSettle is etcd's default backend batch interval (100 ms) and
	// some slack.
	commitSettle = 150 * time.Millisecond
)
