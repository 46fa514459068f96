package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// The fill of defrag-leader, shaped as etcdbench drill's (its
// internal/drill/fill.go) but written here, with the bench's own client:
// keys under fillPrefix with fillValue-byte random values, fillWriters
// puts in flight, until the values add up to --db-size. The db then
// holds that much live data: what a defragmentation copies.
const (
	fillPrefix  = "/etcdbench-drill/fill/"
	fillValue   = 64 << 10
	fillWriters = 8
)

// fill puts keys under fillPrefix through one client balanced over
// endpoints until their values add up to size bytes; it returns how many
// it put.
func fill(ctx context.Context, endpoints []string, size int64) (int64, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	n := (size + fillValue - 1) / fillValue
	val := make([]byte, fillValue)
	if _, err := rand.Read(val); err != nil {
		return 0, err
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, fillWriters)
	for range fillWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < n; i = next.Add(1) - 1 {
				if _, err := cli.Put(fctx, fmt.Sprintf("%s%08d", fillPrefix, i), string(val)); err != nil {
					errs <- fmt.Errorf("filling the db to %d bytes: %w", size, err)
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return n, nil
}
