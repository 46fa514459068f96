package etcdload

import (
	"cmp"
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/internal/result"
)

// Maintenance is what Bench does to the cluster after the load and its
// metrics scrape.
type Maintenance struct {
	// Compact compacts the key-value history up to the revision after the
	// run's keys were deleted (physically, waiting for it). On a shared
	// cluster this also drops every other key's older revisions: watchers
	// and readers of those revisions get "compacted" errors.
	Compact bool
	// Defrag defragments every endpoint's member after the compaction, one
	// at a time: it blocks the member's reads and writes while it runs and
	// returns the freed pages to the filesystem.
	Defrag bool
}

// maintain compacts and defragments as m says and reports the database
// size of each endpoint before and after.
func maintain(ctx context.Context, l Load, m Maintenance) ([]result.Figure, []string, error) {
	if !m.Compact && !m.Defrag {
		return nil, nil, nil
	}
	c, err := dial(l, [][]string{l.Client.Endpoints})
	if err != nil {
		return nil, nil, err
	}
	defer c[0].Close()
	cli := c[0]
	timeout := cmp.Or(l.CleanupTimeout, defaultCleanupTimeout)
	var figs []result.Figure
	var notes []string
	if m.Compact {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		resp, err := cli.Get(cctx, l.Prefix(), clientv3.WithCountOnly())
		if err == nil {
			_, err = cli.Compact(cctx, resp.Header.Revision, clientv3.WithCompactPhysical())
		}
		cancel()
		if err != nil {
			return nil, nil, fmt.Errorf("compacting after the load: %w", err)
		}
		notes = append(notes, fmt.Sprintf("compacted the history up to revision %d after the load", resp.Header.Revision))
	}
	if !m.Defrag {
		return figs, notes, nil
	}
	for i, ep := range l.Client.Endpoints {
		dctx, cancel := context.WithTimeout(ctx, timeout)
		before, err := cli.Status(dctx, ep)
		if err == nil {
			_, err = cli.Defragment(dctx, ep)
		}
		var after *clientv3.StatusResponse
		if err == nil {
			after, err = cli.Status(dctx, ep)
		}
		cancel()
		if err != nil {
			return figs, notes, fmt.Errorf("defragmenting %s after the load: %w", ep, err)
		}
		name := fmt.Sprintf("member%d", i)
		figs = append(figs,
			result.Figure{Name: name + "_db_size_before_defrag", Value: float64(before.DbSize), Unit: "B", Description: "backend database file size of " + ep + " before the defragmentation after the load"},
			result.Figure{Name: name + "_db_size_after_defrag", Value: float64(after.DbSize), Unit: "B", Description: "backend database file size of " + ep + " after it"},
		)
	}
	notes = append(notes, fmt.Sprintf("defragmented %d member(s) after the load", len(l.Client.Endpoints)))
	return figs, notes, nil
}
