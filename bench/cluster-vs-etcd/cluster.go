package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/etcdload/metrics"
)

// cluster is a real etcd cluster whose every member's peer URL is a
// toxiproxy proxy in front of its peer listener.
type cluster struct {
	members []*cmp.EtcdBinary
	names   []string // member i's name, m1...
	proxies []string // member i's proxy
	tp      *cmp.Toxiproxy
	dir     string
}

// startCluster starts n members of the etcd at path in a new directory
// under dir, each member's peers reaching it through a proxy of tp that
// delays every byte rtt/2 each way; id names the proxies apart from
// other clusters'.
func startCluster(ctx context.Context, tp *cmp.Toxiproxy, dir, path string, n, id int, rtt time.Duration) (c *cluster, err error) {
	c = &cluster{tp: tp}
	if c.dir, err = os.MkdirTemp(dir, fmt.Sprintf("cluster-%d-", id)); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.stop())
			c = nil
		}
	}()
	c.members, err = cmp.StartEtcdCluster(ctx, c.dir, path, n, func(i int, listen string) (string, error) {
		p := fmt.Sprintf("c%d-m%d", id, i+1)
		addr, err := cmp.FreeAddr()
		if err != nil {
			return "", err
		}
		if err := tp.AddProxy(ctx, p, addr, listen); err != nil {
			return "", err
		}
		c.proxies = append(c.proxies, p)
		c.names = append(c.names, fmt.Sprintf("m%d", i+1))
		return addr, tp.SetLatency(ctx, p, rtt)
	})
	return c, err
}

// stop stops the members, removes their proxies and their directory.
func (c *cluster) stop() error {
	errs := []error{cmp.StopEtcdCluster(c.members)}
	for _, p := range c.proxies {
		errs = append(errs, c.tp.RemoveProxy(context.Background(), p))
	}
	return errors.Join(append(errs, os.RemoveAll(c.dir))...)
}

// isLeader is the gauge a member sets to 1 while it leads.
const isLeader = "etcd_server_is_leader"

// leader is the index of the member that leads now, by the members'
// own /metrics, waiting up to 30 s for one.
func (c *cluster) leader(ctx context.Context) (int, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		for i, e := range c.members {
			f, err := metrics.Scrape(ctx, nil, e.URL+"/metrics")
			if err != nil {
				continue
			}
			if v, err := metrics.ValueOf(f, isLeader); err == nil && v == 1 {
				return i, nil
			}
		}
		if time.Now().After(deadline) {
			return -1, errors.New("no member reported itself the leader within 30 s")
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// scrape reads every member's /metrics.
func (c *cluster) scrape(ctx context.Context) ([]metrics.Families, error) {
	out := make([]metrics.Families, len(c.members))
	for i, e := range c.members {
		f, err := metrics.Scrape(ctx, nil, e.URL+"/metrics")
		if err != nil {
			return nil, fmt.Errorf("member %s's /metrics: %w", c.names[i], err)
		}
		out[i] = f
	}
	return out, nil
}
