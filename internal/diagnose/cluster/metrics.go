package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	"etcdbench/internal/diagnose"
	"etcdbench/internal/etcdload/metrics"
)

// scrapes are every member's /metrics twice, a window apart; a member's
// entry is nil where its scrape failed.
type scrapes struct {
	before, after []*diagnose.Scrape
	errs          []error
	window        time.Duration
}

// collect scrapes every endpoint's /metrics at start and again window
// later, concurrently, each scrape within timeout, so that a frozen
// member costs a timeout and nothing else waits for it.
func collect(ctx context.Context, cfg Config) scrapes {
	n := len(cfg.Endpoints)
	s := scrapes{before: make([]*diagnose.Scrape, n), after: make([]*diagnose.Scrape, n), errs: make([]error, n)}
	round := func(out []*diagnose.Scrape) {
		var wg sync.WaitGroup
		for i, ep := range cfg.Endpoints {
			if s.errs[i] != nil {
				continue
			}
			wg.Go(func() {
				sctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
				defer cancel()
				url := ep + "/metrics"
				f, err := metrics.Scrape(sctx, cfg.HTTP, url)
				if err != nil {
					s.errs[i] = fmt.Errorf("%s: %w", url, err)
					return
				}
				out[i] = &diagnose.Scrape{Name: fmt.Sprintf("member%d", i), Source: url, Families: f}
			})
		}
		wg.Wait()
	}
	start := time.Now()
	round(s.before)
	select {
	case <-time.After(time.Until(start.Add(cfg.Window))):
	case <-ctx.Done():
		return s
	}
	round(s.after)
	s.window = time.Since(start).Round(time.Millisecond)
	return s
}

// evidence is the metrics' evidence of the members scraped twice, and
// the indexes (into the endpoints) of the members it holds.
func (s scrapes) evidence(cores float64) (diagnose.Evidence, []int) {
	var before, after []diagnose.Scrape
	var idx []int
	for i := range s.before {
		if s.before[i] != nil && s.after[i] != nil {
			before, after = append(before, *s.before[i]), append(after, *s.after[i])
			idx = append(idx, i)
		}
	}
	if len(after) == 0 {
		return diagnose.Evidence{Window: s.window}, nil
	}
	return diagnose.FromScrapes(before, after, s.window, cores), idx
}
