package memory

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/stats"
)

// PageSize is the objects a paginated LIST asks for at a time, as
// kube-apiserver pages (its default --limit for lists from etcd).
const PageSize = 500

// Concurrent is how many LISTs the probe sends at once for the
// concurrent factor.
const Concurrent = 4

// repeats is how often each case runs, on a member freshly started each
// time: the peak depends on when Go's collector runs, and the factor is
// the median.
const repeats = 3

// probePrefix is where the probe's objects are.
const probePrefix = "/registry/probe/"

// sampleEvery is how often the probe reads the member's resident memory.
const sampleEvery = 5 * time.Millisecond

// Probe is what LISTs cost a member of this etcd build's memory on this
// machine, measured on synthetic objects of one size.
type Probe struct {
	// ObjectBytes is the objects' value size, Objects their count and
	// ListedBytes what one full LIST returned (keys and values).
	ObjectBytes, Objects, ListedBytes int64
	// DBBytes is the probe db's file size; IdleRSS the member's resident
	// memory before the LISTs, its db mapped (bbolt maps it populated).
	DBBytes, IdleRSS int64
	// PerByte is the peak resident memory over the idle one during one
	// full unpaginated LIST, per listed byte; PerByteConcurrent the same
	// during Concurrent of them at once, per LIST.
	PerByte, PerByteConcurrent float64
	// PagedPerByte is the peak over idle during Concurrent paginated
	// LISTs at once (PageSize objects a page), per LIST and byte of one
	// page.
	PagedPerByte float64
	// Took is how long the probe took.
	Took time.Duration
}

// Baseline is a member's resident memory before any LIST, less its db:
// what a member holds beside the mapped file.
func (p Probe) Baseline() int64 { return max(0, p.IdleRSS-p.DBBytes) }

// RunProbe fills a member (a process of its own, data in a new directory
// under dir, removed after) with objects of objectBytes up to listBytes,
// then measures, each on the member freshly started on that data (Go
// keeps what its heap grew to), the peak of its resident memory during
// one full LIST, Concurrent full LISTs, and Concurrent paginated ones:
// the median of repeats runs of each.
func RunProbe(ctx context.Context, dir string, objectBytes, listBytes int64) (Probe, error) {
	start := time.Now()
	objectBytes = max(objectBytes, 64)
	p := Probe{ObjectBytes: objectBytes, Objects: max(1, listBytes/objectBytes)}
	work, err := os.MkdirTemp(dir, ".etcdbench-memory-")
	if err != nil {
		return p, err
	}
	defer os.RemoveAll(work)
	// A snapshot within the fill and a short log after it: a restarted
	// member replays no object, as a member that has run long replays
	// little (a replayed log leaves its heap room the LISTs reuse).
	opts := etcdcluster.Options{Dir: work, OwnProcess: true, UnsafeNoFsync: true,
		SnapshotCount: uint64(max(100, p.Objects/2)), SnapshotCatchUpEntries: 10}
	cases := []struct {
		lists int
		paged bool
		into  *float64
	}{{1, false, &p.PerByte}, {Concurrent, false, &p.PerByteConcurrent}, {Concurrent, true, &p.PagedPerByte}}
	// The fill on a member of its own: every case then starts from what
	// a restart leaves.
	m, err := startMember(ctx, opts)
	if err != nil {
		return p, err
	}
	err = fill(ctx, m.cli, p.Objects, objectBytes)
	m.close()
	if err != nil {
		return p, err
	}
	var idles []float64
	for _, c := range cases {
		var factors []float64
		for range repeats {
			m, err := startMember(ctx, opts)
			if err != nil {
				return p, err
			}
			idle, peak, err := m.measure(ctx, c.lists, c.paged, &p)
			m.close()
			if err != nil {
				return p, err
			}
			idles = append(idles, float64(idle))
			per := float64(p.ListedBytes)
			if c.paged {
				per = float64(p.ListedBytes * probePage(p.Objects) / p.Objects)
			}
			factors = append(factors, float64(max(0, peak-idle))/float64(c.lists)/per)
		}
		*c.into = stats.Median(factors)
	}
	p.IdleRSS = int64(stats.Median(idles))
	p.Took = time.Since(start)
	return p, nil
}

// member is the probe's member and a client of it.
type member struct {
	c   *etcdcluster.Cluster
	cli *clientv3.Client
	pid int
}

func startMember(ctx context.Context, opts etcdcluster.Options) (*member, error) {
	c, err := etcdcluster.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		c.Close()
		return nil, err
	}
	m := &member{c: c, cli: cli, pid: c.PID(0)}
	if m.pid == 0 {
		m.close()
		return nil, errors.New("memory: the probe's member is not a process of its own")
	}
	return m, nil
}

func (m *member) close() {
	m.cli.Close()
	m.c.Close()
}

// fill puts n objects of size bytes under probePrefix, eight at a time.
func fill(ctx context.Context, cli *clientv3.Client, n, size int64) error {
	val := make([]byte, size)
	if _, err := rand.Read(val); err != nil {
		return err
	}
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range 8 {
		g.Go(func() error {
			for i := next.Add(1) - 1; i < n; i = next.Add(1) - 1 {
				if _, err := cli.Put(gctx, fmt.Sprintf("%sobject-%09d", probePrefix, i), string(val)); err != nil {
					return fmt.Errorf("memory: filling the probe's member: %w", err)
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// measure reads the member's idle resident memory, then sends lists
// LISTs of the probe's objects at once (paginated or not) and returns
// the idle and the peak resident memory while they ran; it records the
// bytes one full LIST returned in p.
func (m *member) measure(ctx context.Context, lists int, paged bool, p *Probe) (idle, peak int64, err error) {
	if st, err := m.cli.Status(ctx, m.c.Endpoints()[0]); err == nil {
		p.DBBytes = st.DbSize
	}
	if idle, err = RSS("/", m.pid); err != nil {
		return 0, 0, err
	}
	var mu sync.Mutex
	peak = idle
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			if r, err := RSS("/", m.pid); err == nil {
				mu.Lock()
				peak = max(peak, r)
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	g, gctx := errgroup.WithContext(ctx)
	for range lists {
		g.Go(func() error {
			n, err := list(gctx, m.cli, paged, probePage(p.Objects))
			if err == nil && !paged {
				atomic.StoreInt64(&p.ListedBytes, n)
			}
			return err
		})
	}
	err = g.Wait()
	time.Sleep(2 * sampleEvery) // the last sample after the responses
	close(stop)
	<-sampled
	return idle, peak, err
}

// probePage is the objects a page of the probe's paginated LISTs asks
// for: PageSize, or fewer so that a LIST is probePages pages at least -
// each page's garbage waits for Go's collector, so a paginated LIST
// holds more than one page, and a probe of one page would not show it.
func probePage(objects int64) int64 { return max(1, min(PageSize, objects/probePages)) }

// probePages is how many pages the probe's paginated LISTs have at
// least.
const probePages = 8

// list reads every probe object, in one range or in pages of page
// objects, and returns the keys' and values' bytes.
func list(ctx context.Context, cli *clientv3.Client, paged bool, page int64) (int64, error) {
	end := clientv3.GetPrefixRangeEnd(probePrefix)
	if !paged {
		r, err := cli.Get(ctx, probePrefix, clientv3.WithRange(end))
		if err != nil {
			return 0, fmt.Errorf("memory: the probe's LIST: %w", err)
		}
		var n int64
		for _, kv := range r.Kvs {
			n += int64(len(kv.Key) + len(kv.Value))
		}
		return n, nil
	}
	var n int64
	key := probePrefix
	for {
		r, err := cli.Get(ctx, key, clientv3.WithRange(end), clientv3.WithLimit(page))
		if err != nil {
			return 0, fmt.Errorf("memory: the probe's paginated LIST: %w", err)
		}
		for _, kv := range r.Kvs {
			n += int64(len(kv.Key) + len(kv.Value))
		}
		if !r.More || len(r.Kvs) == 0 {
			return n, nil
		}
		key = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
	}
}
