package disk

import (
	"sync"
	"sync/atomic"
	"time"
)

// groupCommit emulates raft's batching of concurrent proposals into one WAL
// write: clients each propose one entry and wait until an fdatasync that
// included it returns; the WAL writer takes every entry proposed since its
// last write as one batch. This is how etcd's WAL write size and sync rate
// follow the number of concurrent clients. The synchronisation happens
// outside the timed write and fdatasync.
type groupCommit struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending int   // entries proposed and not yet taken by the writer
	started int64 // batches the writer has taken
	synced  int64 // batches whose fdatasync returned
	closed  bool
	wg      sync.WaitGroup
}

// startGroupCommit starts clients closed-loop proposers.
func startGroupCommit(clients int) *groupCommit {
	g := &groupCommit{}
	g.cond = sync.NewCond(&g.mu)
	for range clients {
		g.wg.Add(1)
		go g.client()
	}
	return g
}

func (g *groupCommit) client() {
	defer g.wg.Done()
	g.mu.Lock()
	defer g.mu.Unlock()
	for !g.closed {
		g.pending++
		mine := g.started + 1 // the next batch the writer takes includes this entry
		g.cond.Broadcast()
		for g.synced < mine && !g.closed {
			g.cond.Wait()
		}
	}
}

// take waits for at least one proposed entry and returns how many the next
// batch holds; 0 when stop is set or the group is closed.
func (g *groupCommit) take(stop *atomic.Bool) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.pending == 0 && !g.closed && !stop.Load() {
		g.cond.Wait()
	}
	if g.closed || stop.Load() {
		return 0
	}
	n := g.pending
	g.pending = 0
	g.started++
	return n
}

// done marks the batch taken last as durable and wakes its clients.
func (g *groupCommit) done(time.Time) {
	g.mu.Lock()
	g.synced++
	g.cond.Broadcast()
	g.mu.Unlock()
}

// close stops the clients and waits for them.
func (g *groupCommit) close() {
	g.mu.Lock()
	g.closed = true
	g.cond.Broadcast()
	g.mu.Unlock()
	g.wg.Wait()
}
