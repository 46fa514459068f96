package observe

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"etcdbench/internal/etcdload/metrics"
)

// Options say whose /metrics a Watch reads and how.
type Options struct {
	Targets []Target
	HTTP    *http.Client // nil: metrics.Scrape's client (no keep-alives)
	// BestEffort turns a target whose /metrics cannot be read into a note
	// instead of an error: an external cluster may serve its metrics
	// elsewhere (--listen-metrics-urls) or behind TLS.
	BestEffort bool
	// Sample, when not zero, is how often the targets' proposal backlog
	// is read during the load; each sample is a scrape of every target.
	Sample time.Duration
}

// Watch observes the members around one load: Begin scrapes them when
// the timed load is about to start (and starts sampling their backlog),
// End scrapes them again once it is over.
type Watch struct {
	o       Options
	kept    []Target // the targets whose first scrape succeeded
	before  []scraped
	sampler *backlogSampler
	backlog []Backlog // set when the sampling stops
	after   []scraped // End's scrapes
}

// Settle waits until every watched member's backend committed after
// End's scrape - what was applied since (the run's keys' deletion) is then
// in bbolt and counted - polling each member's
// etcd_disk_backend_commit_duration_seconds count, for at most bound.
// etcd's backend commits its pending writes every batch interval (100 ms)
// and only when there are some, so call it only when something was
// written after End. It returns at once when End did not scrape.
func (w *Watch) Settle(ctx context.Context, bound time.Duration) error {
	if len(w.after) != len(w.kept) {
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for i, t := range w.kept {
		h, err := metrics.HistogramOf(w.after[i].f, BackendCommitMetric)
		if err != nil {
			continue // a member without the histogram: nothing to wait for
		}
		for {
			f, err := metrics.Scrape(sctx, w.o.HTTP, t.URL)
			if err == nil {
				if now, err := metrics.HistogramOf(f, BackendCommitMetric); err == nil && now.Count > h.Count {
					break
				}
			}
			select {
			case <-sctx.Done():
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("%s's backend did not commit within %v", t.Name, bound)
			case <-time.After(settlePoll):
			}
		}
	}
	return nil
}

// Begin scrapes every target once. A target that cannot be read is an
// error, or with BestEffort a note and left out.
func Begin(ctx context.Context, o Options) (w *Watch, notes []string, err error) {
	w = &Watch{o: o}
	sctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	for _, t := range o.Targets {
		f, err := scrapeAll(sctx, o.HTTP, []Target{t})
		switch {
		case err != nil && o.BestEffort && ctx.Err() == nil:
			notes = append(notes, fmt.Sprintf("no disk metrics for %s: %v", t.Name, err))
		case err != nil:
			return nil, notes, err
		default:
			w.kept = append(w.kept, t)
			w.before = append(w.before, f[0])
		}
	}
	if o.Sample > 0 && len(w.kept) > 0 {
		w.sampler = startBacklog(ctx, o.HTTP, w.kept, o.Sample)
	}
	return w, notes, nil
}

// Targets are the targets being watched: those whose first scrape
// succeeded.
func (w *Watch) Targets() []Target { return w.kept }

// StopSampling ends the backlog sampling, if any; End does it too. It
// is called as soon as the load ends: the backlog drains once the
// clients stop.
func (w *Watch) StopSampling() {
	if w.sampler != nil {
		w.backlog = w.sampler.finish()
		w.sampler = nil
	}
}

// End stops the sampling, waits for the members' last backend commit,
// scrapes every watched target again and returns what each recorded
// between the two scrapes.
func (w *Watch) End(ctx context.Context) ([]Member, error) {
	w.StopSampling()
	if len(w.kept) == 0 {
		return nil, nil
	}
	// The backend commits every batch interval: wait one so that the
	// load's last commit is counted.
	select {
	case <-time.After(commitSettle):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	sctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	after, err := scrapeAll(sctx, w.o.HTTP, w.kept)
	if err != nil {
		return nil, err
	}
	w.after = after
	ms, err := deltas(w.kept, w.before, after)
	if err != nil {
		return nil, err
	}
	for i := range ms {
		if i < len(w.backlog) {
			ms[i].Backlog = w.backlog[i]
		}
	}
	return ms, nil
}

const (
	// scrapeTimeout bounds one round of /metrics scrapes.
	scrapeTimeout = 10 * time.Second
	// commitSettle is etcd's default backend batch interval (100 ms) and
	// some slack.
	commitSettle = 150 * time.Millisecond
	// settlePoll is how often Settle reads a member's commit count.
	settlePoll = 20 * time.Millisecond
)

// observe takes one scrape's gauges into b.
func (b *Backlog) observe(f metrics.Families) {
	p, perr := metrics.ValueOf(f, ProposalsPendingMetric)
	c, cerr := metrics.ValueOf(f, ProposalsCommittedMetric)
	a, aerr := metrics.ValueOf(f, ProposalsAppliedMetric)
	if perr != nil && (cerr != nil || aerr != nil) {
		return
	}
	b.Samples++
	if perr == nil {
		b.Pending = max(b.Pending, p)
	}
	if cerr == nil && aerr == nil {
		b.Unapplied = max(b.Unapplied, c-a)
	}
}

// backlogSampler scrapes every target once an interval while a load runs
// and keeps the largest proposal backlog of each: a gauge read only
// before and after the load would miss it, since it drains as soon as
// the clients stop.
type backlogSampler struct {
	stop func()
	done chan struct{}
	max  []Backlog // written by the sampling goroutine until done
}

// startBacklog starts sampling ts every interval until finish.
func startBacklog(ctx context.Context, client *http.Client, ts []Target, every time.Duration) *backlogSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &backlogSampler{stop: cancel, done: make(chan struct{}), max: make([]Backlog, len(ts))}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for i, t := range ts {
				sctx, cancel := context.WithTimeout(ctx, every)
				f, err := metrics.Scrape(sctx, client, t.URL)
				cancel()
				if err != nil {
					continue // a missed sample, not a failed load
				}
				s.max[i].observe(f)
			}
		}
	}()
	return s
}

// finish stops the sampling and returns each target's largest backlog.
func (s *backlogSampler) finish() []Backlog {
	s.stop()
	<-s.done
	return s.max
}
