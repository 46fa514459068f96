package diagnose

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"etcdbench/internal/etcdload/metrics"
)

// ErrUnreachable is returned by Collect when a member's /metrics cannot
// be read.
var ErrUnreachable = errors.New("cannot read /metrics")

// ErrBadInput is returned for saved metrics that are not Prometheus text.
var ErrBadInput = errors.New("not a /metrics scrape")

// Target is one member's /metrics URL and the name its figures carry.
type Target struct {
	Name, URL string
}

// scrapeTimeout bounds one round of scrapes.
const scrapeTimeout = 10 * time.Second

func scrapeAll(ctx context.Context, client *http.Client, ts []Target) ([]Scrape, error) {
	sctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	out := make([]Scrape, len(ts))
	for i, t := range ts {
		f, err := metrics.Scrape(sctx, client, t.URL)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w of %s: %w (is the member running, and are its metrics served there? etcd serves them on its client URLs and on --listen-metrics-urls)", ErrUnreachable, t.Name, err)
		}
		out[i] = Scrape{Name: t.Name, Source: t.URL, Families: f}
	}
	return out, nil
}

// Collect scrapes every target, waits window, scrapes again and returns
// the evidence of the difference. cores is assumed for members that do
// not expose GOMAXPROCS. It waits for ctx while the window runs.
func Collect(ctx context.Context, client *http.Client, ts []Target, window time.Duration, cores float64) (Evidence, error) {
	before, err := scrapeAll(ctx, client, ts)
	if err != nil {
		return Evidence{}, err
	}
	start := time.Now()
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return Evidence{}, ctx.Err()
	}
	after, err := scrapeAll(ctx, client, ts)
	if err != nil {
		return Evidence{}, err
	}
	// The window is what passed between the scrapes, a little more than
	// asked.
	return FromScrapes(before, after, time.Since(start).Round(time.Millisecond), cores), nil
}

// FromScrapes builds evidence from scrapes of the same members window
// apart; before nil means after alone, counting since each process
// started.
func FromScrapes(before, after []Scrape, window time.Duration, cores float64) Evidence {
	ev := Evidence{Window: window}
	if before == nil {
		ev.Window = windowSinceStart
		ev.Notes = append(ev.Notes, "one scrape: every count and quantile covers the time since each process started, not just now; give two scrapes (--from twice, or --endpoints with --window) for the present")
	}
	for i, a := range after {
		var b *Scrape
		if before != nil {
			b = &before[i]
		}
		m, notes := EvidenceFromMetrics(b, a, ev.Window, cores)
		ev.Members = append(ev.Members, m)
		ev.Notes = append(ev.Notes, notes...)
		if m.Version != "" {
			ev.Notes = append(ev.Notes, fmt.Sprintf("%s: etcd %s at %s", m.Name, m.Version, m.Source))
		}
		if ok(m.WALFsync.Count) && m.WALFsync.Count == 0 {
			ev.Notes = append(ev.Notes, m.Name+": no WAL fdatasync in the window (no writes): the disk figures are unknown; diagnose while the cluster is under its usual load, or with a longer --window")
		}
	}
	return ev
}

// ParseScrape parses saved /metrics text (name and source label it).
func ParseScrape(name, source string, b []byte) (Scrape, error) {
	f, err := metrics.Parse(b)
	if err != nil {
		return Scrape{}, fmt.Errorf("%w: %s: %w", ErrBadInput, source, err)
	}
	if len(f) == 0 {
		return Scrape{}, fmt.Errorf("%w: %s has no metrics", ErrBadInput, source)
	}
	return Scrape{Name: name, Source: source, Families: f}, nil
}
