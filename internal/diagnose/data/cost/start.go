package cost

import (
	"context"
	"fmt"
	"time"

	"etcdbench/internal/etcdcluster"
)

// startCost is how long a single member takes from its start to ready on
// an empty data dir in dir: what a restart costs beyond its data (the
// server's setup, its listeners and the election it wins alone).
func startCost(ctx context.Context, dir string, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: dir, Members: 1, StartTimeout: timeout})
	took := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("cost: starting an empty member in %s: %w", dir, err)
	}
	if err := c.Close(); err != nil {
		return 0, fmt.Errorf("cost: stopping the empty member in %s: %w", dir, err)
	}
	return took, nil
}
