package etcdload

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/internal/result"
)

// eventGrace is how long a watch load waits after its last put for the
// watchers to receive every event before it counts the rest as missed.
const eventGrace = 10 * time.Second

// watchers are a watch load's Streams x WatchersPerStream watchers of the
// run's prefix. Each stream is a clientv3.Watcher of its own (one gRPC
// watch stream); the watchers of a stream share it, as in etcd's
// benchmark watch-latency.
type watchers struct {
	cancel   context.CancelFunc
	streams  []clientv3.Watcher
	chans    []clientv3.WatchChan
	received atomic.Int64
	wg       sync.WaitGroup
	once     sync.Once

	mu   sync.Mutex
	errs map[string]int64
}

// openWatchers creates every watcher and waits until etcd confirmed each
// one, so that no event of the timed load is missed.
func openWatchers(ctx context.Context, l Load, conns []*clientv3.Client) (*watchers, error) {
	wctx, cancel := context.WithCancel(ctx)
	ws := &watchers{cancel: cancel, errs: map[string]int64{}}
	for s := range l.Streams {
		w := clientv3.NewWatcher(conns[s%len(conns)])
		ws.streams = append(ws.streams, w)
		for range l.WatchersPerStream {
			ws.chans = append(ws.chans, w.Watch(wctx, l.Prefix(), clientv3.WithPrefix(), clientv3.WithCreatedNotify()))
		}
	}
	timer := time.NewTimer(cmp.Or(l.Client.DialTimeout, defaultDialTimeout) + time.Duration(len(ws.chans))*10*time.Millisecond)
	defer timer.Stop()
	for i, ch := range ws.chans {
		select {
		case resp, ok := <-ch:
			if ok && resp.Created && resp.Err() == nil {
				continue
			}
			ws.close()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			err := resp.Err()
			if err == nil {
				err = fmt.Errorf("the watch was closed")
			}
			return nil, fmt.Errorf("creating watcher %d of %d on %s: %w", i+1, len(ws.chans), l.Prefix(), err)
		case <-timer.C:
			ws.close()
			return nil, fmt.Errorf("%d of %d watchers not created in time: is the cluster overloaded? try fewer --streams or --watchers-per-stream", len(ws.chans)-i, len(ws.chans))
		case <-ctx.Done():
			ws.close()
			return nil, ctx.Err()
		}
	}
	return ws, nil
}

// start begins recording: each event's latency is from its put's due time
// (carried in the value) to its receipt.
func (ws *watchers) start(agg *aggregator, start time.Time) {
	for _, ch := range ws.chans {
		rec := newRecorder(agg, start)
		ws.wg.Go(func() {
			defer rec.flush()
			for resp := range ch {
				if err := resp.Err(); err != nil {
					ws.fail(err)
					continue
				}
				now := time.Now()
				var n int64
				for _, ev := range resp.Events {
					if ev.Type != mvccpb.PUT {
						continue
					}
					if t, ok := stamp(ev.Kv.Value); ok {
						rec.recordKind(0, t, now)
						n++
					}
				}
				ws.received.Add(n) // once per response, not per event
			}
		})
	}
}

func (ws *watchers) fail(err error) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	c := "watch " + errorClass(err)
	if _, ok := ws.errs[c]; !ok && len(ws.errs) >= maxErrorClasses {
		c = otherErrors
	}
	ws.errs[c]++
}

// finish waits, up to eventGrace, until every watcher received the event
// of each of the puts that succeeded, closes the watchers and returns
// the figures of the delivery.
func (ws *watchers) finish(ctx context.Context, puts int64) ([]result.Figure, []string) {
	n := int64(len(ws.chans))
	want := puts * n
	deadline := time.Now().Add(eventGrace)
	for ws.received.Load() < want && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	ws.close()
	got := ws.received.Load()
	missed := max(want-got, 0)
	figs := []result.Figure{
		{Name: "puts", Value: float64(puts), Unit: "count", Description: "puts that succeeded, each watched by every watcher"},
		{Name: "watchers", Value: float64(n), Unit: "count", Description: "watchers of the run's prefix (streams x watchers per stream)"},
		{Name: "events_missed", Value: float64(missed), Unit: "count", Description: "events of successful puts not received within " + eventGrace.String() + " after the last put"},
	}
	var notes []string
	if missed > 0 && ctx.Err() == nil {
		notes = append(notes, fmt.Sprintf("%d of %d events were not received within %v after the last put: the watchers fell behind or a watch was cancelled", missed, want, eventGrace))
	}
	return figs, notes
}

// errors are the watch errors seen, by class.
func (ws *watchers) errors() map[string]int64 {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.errs
}

// close cancels every watch and waits for the receivers; it can be called
// more than once.
func (ws *watchers) close() {
	ws.once.Do(func() {
		ws.cancel()
		for _, w := range ws.streams {
			w.Close()
		}
		ws.wg.Wait()
	})
}
