package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// probe is the bench's own client: one put every interval, open-loop
// (each in a goroutine of its own, due whether or not the ones before
// returned), through one etcd client balanced over every member's
// endpoint, each with its own timeout; it logs each put's due time, end
// and error.
type probe struct {
	cli      *clientv3.Client
	interval time.Duration
	timeout  time.Duration
	value    string
	prefix   string

	mu   sync.Mutex
	puts []put
	wg   sync.WaitGroup
}

func newProbe(endpoints []string, interval, timeout time.Duration, valSize int) (*probe, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, err
	}
	return &probe{cli: cli, interval: interval, timeout: timeout, value: strings.Repeat("v", valSize), prefix: "drill-vs-etcd/probe/"}, nil
}

// run sends puts from now until stop is closed (or ctx ends), then waits
// for those in flight and returns every put.
func (p *probe) run(ctx context.Context, stop <-chan struct{}) []put {
	start := time.Now()
	for n := 0; ; n++ {
		due := start.Add(time.Duration(n) * p.interval)
		if d := time.Until(due); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-stop:
				t.Stop()
			case <-ctx.Done():
				t.Stop()
			}
		}
		select {
		case <-stop:
		case <-ctx.Done():
		default:
			p.wg.Add(1)
			go p.one(ctx, n, due)
			continue
		}
		break
	}
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.puts
}

// one sends put n, due at due.
func (p *probe) one(ctx context.Context, n int, due time.Time) {
	defer p.wg.Done()
	pctx, cancel := context.WithTimeout(ctx, p.timeout)
	_, err := p.cli.Put(pctx, fmt.Sprintf("%s%08d", p.prefix, n), p.value)
	cancel()
	r := put{Due: due, Done: time.Now()}
	if err != nil {
		r.Err = err.Error()
	}
	p.mu.Lock()
	p.puts = append(p.puts, r)
	p.mu.Unlock()
}

func (p *probe) close() { p.cli.Close() }
