package drill

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sync/errgroup"
)

// FillPrefix is where Fill writes its keys.
const FillPrefix = "/etcdbench-drill/fill/"

// fillValue and fillClients shape the fill: 64 KiB values (well under
// etcd's 1.5 MiB request limit, large enough that the db grows by the
// values, not the index), eight puts in flight.
const (
	fillValue   = 64 << 10
	fillClients = 8
)

// Fill puts keys under FillPrefix until their values add up to size
// bytes, so that the db holds that much live data (its file a little
// more): what a defragmentation copies.
func Fill(ctx context.Context, cli *clientv3.Client, size int64) error {
	n := (size + fillValue - 1) / fillValue
	val := make([]byte, fillValue)
	if _, err := rand.Read(val); err != nil {
		return err
	}
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range fillClients {
		g.Go(func() error {
			for i := next.Add(1) - 1; i < n; i = next.Add(1) - 1 {
				if _, err := cli.Put(gctx, fmt.Sprintf("%s%08d", FillPrefix, i), string(val)); err != nil {
					return fmt.Errorf("filling the db to %d bytes: %w", size, err)
				}
			}
			return nil
		})
	}
	return g.Wait()
}
