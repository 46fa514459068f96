package etcdload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/inproc"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/units"
)

// ErrPrefixNotEmpty is returned by Run when keys already exist under the
// run's prefix: etcdbench would delete them afterwards, so it refuses.
var ErrPrefixNotEmpty = errors.New("keys already exist under the run's prefix")

// ErrUnreachable is returned by Run when the cluster does not answer the
// first request within the dial timeout.
var ErrUnreachable = errors.New("etcd does not answer")

// Defaults for Load fields left zero.
const (
	defaultDialTimeout    = 5 * time.Second
	defaultCleanupTimeout = 30 * time.Second
)

// lateSendGrace is how far behind its due time an open loop may send a
// request after the run's duration is over.
const lateSendGrace = time.Second

// lateWriteGrace is how long an interrupted run waits before deleting its
// prefix a second time, for puts that were in flight.
const lateWriteGrace = 200 * time.Millisecond

// Outcome is what a load run measured.
type Outcome struct {
	// Ops, DurationNs, latencies "request" (successful requests, from
	// their due time in an open loop), per-second series, errors as Notes
	// and the figure "failed_requests". Verdicts is empty: request latency
	// has no documented threshold; the disk metrics carry the verdicts.
	Workload result.Workload
	// Errors counts failed requests by class (gRPC code and message).
	Errors map[string]int64
	// Prefix is where the run wrote; it was deleted before Run returned
	// unless Run's error says otherwise.
	Prefix string
	// Start and End bound the timed load.
	Start, End time.Time
	// Host is how busy this machine was during the timed load; nil when
	// /proc/stat could not be read.
	Host *observe.Host
	// Members are the members as Bench observed them around the load;
	// none without targets or when their /metrics could not be read.
	Members []observe.Member
	// Request is the latency of the successful requests (the workload's
	// latency "request"), typed; nil for a load without one (a watch
	// load's first latency is its events').
	Request *stats.Summary
	// Deleted is how many of the run's keys its cleanup deleted.
	Deleted int64
}

// Failed is the number of requests that returned an error.
func (o *Outcome) Failed() int64 {
	var n int64
	for _, c := range o.Errors {
		n += c
	}
	return n
}

// Run checks that the run's prefix is empty, runs the load, and deletes
// the prefix at the end, on errors and when ctx is cancelled (with a fresh
// context bounded by CleanupTimeout). An interrupted run returns its
// partial Outcome with ctx's error.
func Run(ctx context.Context, l Load) (out *Outcome, err error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if l.RunID == "" {
		l.RunID = NewRunID()
	}
	if l.Client.DialTimeout == 0 {
		l.Client.DialTimeout = defaultDialTimeout
	}
	if l.Client.Logger == nil {
		l.Client.Logger = zap.NewNop()
	}
	if err := checkTLS(ctx, l.Client.Endpoints, l.Client.TLS); err != nil {
		return nil, err
	}
	assign, targetNote, err := assignEndpoints(ctx, l)
	if err != nil {
		return nil, err
	}
	conns, err := dial(l, assign)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	prefix := l.Prefix()
	if err := checkEmpty(ctx, conns[0], prefix, l.Client.DialTimeout); err != nil {
		return nil, err
	}
	defer func() {
		timeout := cmp.Or(l.CleanupTimeout, defaultCleanupTimeout)
		c := conns[0]
		if ctx.Err() != nil {
			// An interrupted load closed its connections (requestContext):
			// clean up over a new one.
			fresh, derr := dial(Load{Conns: 1, Client: l.Client}, assign[:1])
			if derr != nil {
				err = errors.Join(err, fmt.Errorf("deleting the run's keys (etcdctl del --prefix %s removes them): %w", prefix, derr))
				return
			}
			defer fresh[0].Close()
			c = fresh[0]
		}
		deleted, cerr := deletePrefix(c, prefix, timeout)
		if cerr == nil && ctx.Err() != nil {
			// A put cancelled in flight may still reach the server and be
			// applied after the first delete: delete once more after it had
			// time to land.
			time.Sleep(lateWriteGrace)
			var more int64
			more, cerr = deletePrefix(c, prefix, timeout)
			deleted += more
		}
		if out != nil {
			out.Deleted = deleted
		}
		if cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	if KindOf(l.Op).preload {
		if err := populate(ctx, l, conns); err != nil {
			return nil, err
		}
	}
	if l.ready != nil {
		if err := l.ready(ctx); err != nil {
			return nil, err
		}
	}
	out, err = drive(ctx, l, conns)
	if l.finished != nil {
		l.finished(err)
	}
	if out != nil {
		out.Workload.Notes = append(out.Workload.Notes, targetNote)
	}
	return out, err
}

// dial opens l.Conns connections, connection i to the endpoints
// assign[i mod len(assign)].
func dial(l Load, assign [][]string) ([]*clientv3.Client, error) {
	var conns []*clientv3.Client
	for i := range l.Conns {
		cfg := l.Client
		cfg.Endpoints = assign[i%len(assign)]
		c, err := clientv3.New(cfg)
		if err != nil {
			for _, c := range conns {
				c.Close()
			}
			if isAuthFailure(err) {
				return nil, fmt.Errorf("%w: user %q at %s: %w; check --user and the password", ErrAuth, l.Client.Username, strings.Join(l.Client.Endpoints, ","), err)
			}
			return nil, fmt.Errorf("connecting to %s: %w", strings.Join(l.Client.Endpoints, ","), err)
		}
		conns = append(conns, c)
	}
	return conns, nil
}

// checkEmpty fails with ErrPrefixNotEmpty when keys exist under prefix.
func checkEmpty(ctx context.Context, c *clientv3.Client, prefix string, timeout time.Duration) error {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := c.Get(cctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w within %v at %s: is it running, and are the endpoints right?", ErrUnreachable, timeout, strings.Join(c.Endpoints(), ","))
	case err != nil && isAuthFailure(err):
		return fmt.Errorf("%w at %s: %w; check --user and the password", ErrAuth, strings.Join(c.Endpoints(), ","), err)
	case err != nil && isAuthNeeded(err):
		return fmt.Errorf("%w at %s: %w; give --user, for a user whose roles may write under %s", ErrAuth, strings.Join(c.Endpoints(), ","), err, PrefixRoot)
	case err != nil:
		return fmt.Errorf("counting keys under %s: %w", prefix, err)
	case resp.Count > 0:
		return fmt.Errorf("%w: %d keys under %s; choose another run id or delete them (etcdctl del --prefix %s)", ErrPrefixNotEmpty, resp.Count, prefix, prefix)
	}
	return nil
}

// deletePrefix removes every key of the run, on a context of its own so
// that it also runs after an interrupt.
func deletePrefix(c *clientv3.Client, prefix string, timeout time.Duration) (deleted int64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := c.Delete(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("deleting the run's keys (etcdctl del --prefix %s removes them): %w", prefix, err)
	}
	return resp.Deleted, nil
}

// populate writes every key of the key space before the clock starts, so
// that ranges find them.
func populate(ctx context.Context, l Load, conns []*clientv3.Client) error {
	val := value(l.ValSize)
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for i := range l.Clients {
		c := conns[i%len(conns)]
		kb := newKeyBuf(l.Prefix(), l.KeySize)
		g.Go(func() error {
			for {
				n := next.Add(1) - 1
				if n >= int64(l.KeySpaceSize) {
					return nil
				}
				if _, err := c.Put(gctx, kb.key(int(n)), val); err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					if ferr := isFatal(err); ferr != nil {
						return ferr
					}
					return fmt.Errorf("writing the keys to range over: %w", err)
				}
			}
		})
	}
	return g.Wait()
}

// value returns the value every put writes.
func value(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return string(b)
}

// loadGCPercent is the GOGC of the timed load. gRPC and clientv3 make a
// few KiB of garbage per request while the live heap stays small (about
// 20 MB at 1000 clients), so at the default 100 the collector runs every
// ~1000 requests and, with the stacks of all clients to scan, took about
// 16 % of the client's CPU in a 100-connection, 1000-client put load
// (etcd's benchmark tool, whose live heap is larger, about 5 %). The
// client shares the CPUs with the server under test in small setups, so
// its GC shows up as lost throughput. 400 lets the heap grow to about
// five times the live data instead of twice.
const loadGCPercent = 400

// raiseGC sets the GC percent to loadGCPercent, unless the user set GOGC
// or it is already higher or off, and returns the function that restores
// it.
func raiseGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(loadGCPercent)
	if old < 0 || old >= loadGCPercent {
		debug.SetGCPercent(old)
		return func() {}
	}
	return func() { debug.SetGCPercent(old) }
}

// narrowProcs lowers GOMAXPROCS, for the timed load, to the number of
// goroutines that can have work at once: the clients (and, for a watch
// load, the watch streams). With more Ps than that, each response wakes
// a parked thread to run its client (a futex wake-up and a context
// switch per request); on one P the thread that reads the response runs
// the client too. One client spends about a quarter less CPU per request
// and its latencies lose that hand-off (bench/put-vs-etcd-benchmark).
// Nothing is changed while an etcd member runs in this process (it needs
// the Ps), nor when the user set GOMAXPROCS. It returns the Ps set (0:
// unchanged) and the function that restores them.
func narrowProcs(l Load) (procs int, restore func()) {
	if os.Getenv("GOMAXPROCS") != "" || inproc.EtcdMembers.Load() > 0 {
		return 0, func() {}
	}
	need := max(l.Clients, 1)
	if KindOf(l.Op).watched {
		need += l.Streams
	}
	old := runtime.GOMAXPROCS(0)
	if need >= old {
		return 0, func() {}
	}
	runtime.GOMAXPROCS(need)
	return need, func() { runtime.GOMAXPROCS(old) }
}

// drive runs the timed load: every client sends requests until the total
// or the duration is reached, in a closed loop or at the open loop's
// rate; a watch load's watchers record the events of those requests.
func drive(ctx context.Context, l Load, conns []*clientv3.Client) (*Outcome, error) {
	defer raiseGC()()
	procs, restoreProcs := narrowProcs(l)
	defer restoreProcs()
	kind := KindOf(l.Op)
	agg := newAggregator(kind.rollup, kind.Histograms...)
	var ws *watchers
	if kind.watched {
		var err error
		if ws, err = openWatchers(ctx, l, conns); err != nil {
			return nil, err
		}
		defer ws.close()
	}
	recs := make([]*recorder, l.Clients)
	cpu := observe.StartCPU("/")
	start := time.Now()
	end := start.Add(l.Duration)
	if ws != nil {
		ws.start(agg, start)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var halt stopper // the first fatal error (NOSPACE) ends every client
	reqCtx, stopReqs := requestContext(ctx, conns)
	defer stopReqs()
	for i := range l.Clients {
		rec := newRecorder(agg, start)
		recs[i] = rec
		send := newSender(l, conns[i%len(conns)], uint64(start.UnixNano()), uint64(i))
		wg.Go(func() {
			defer rec.flush()
			timer := time.NewTimer(time.Hour)
			defer timer.Stop()
			for {
				if halt.stopped() {
					return
				}
				n := next.Add(1) - 1
				if l.Total > 0 && n >= l.Total {
					return
				}
				due := time.Now()
				if l.Rate > 0 {
					due = start.Add(units.FromSeconds(float64(n) / l.Rate))
				}
				if l.Duration > 0 && !due.Before(end) {
					return
				}
				if d := time.Until(due); d > 0 {
					timer.Reset(d)
					select {
					case <-timer.C:
					case <-ctx.Done():
						return
					}
				} else if l.Duration > 0 && -d > lateSendGrace && time.Now().After(end) {
					// An open loop that fell behind stops at the end of its
					// time (and a grace) instead of sending its backlog for
					// minutes; the requests left are counted as unsent.
					return
				}
				var kind int
				var err error
				if l.RequestTimeout > 0 {
					rctx, cancel := context.WithTimeout(reqCtx, l.RequestTimeout)
					kind, err = send(rctx, n, due)
					cancel()
				} else {
					kind, err = send(reqCtx, n, due)
				}
				done := time.Now()
				if l.OnRequest != nil {
					l.OnRequest(due, done, err)
				}
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					rec.fail(err)
					if halt.fatal(err) {
						return
					}
					continue
				}
				rec.recordKind(kind, due, done)
			}
		})
	}
	stopTicker := tick(l, start, &next)
	wg.Wait()
	proc, host := cpu.Stop()
	stopTicker()
	var figures []result.Figure
	var notes []string
	if ws != nil {
		puts := agg.count(1)
		figures, notes = ws.finish(ctx, puts)
	}
	out := &Outcome{Prefix: l.Prefix(), Start: start, End: time.Now(), Errors: mergeErrors(recs), Host: host}
	if ws != nil {
		out.Errors = mergeErrorMaps(out.Errors, ws.errors())
	}
	wl, err := buildWorkload(l, agg, out, ctx.Err() != nil)
	if err != nil {
		return nil, err
	}
	wl.Figures = append(wl.Figures, figures...)
	wl.Figures = append(wl.Figures, observe.HostFigures(host)...)
	wl.Process = proc
	wl.Notes = append(wl.Notes, notes...)
	if procs > 0 {
		wl.Notes = append(wl.Notes, fmt.Sprintf("the load ran on %d of this process's %d Go threads (GOMAXPROCS), one per goroutine that can have work at once, which spares a thread wake-up per request; GOMAXPROCS in the environment overrides this", procs, runtime.NumCPU()))
	}
	out.Workload = wl
	if ferr := halt.Err(); ferr != nil {
		out.Workload.Stop.Reason = fmt.Sprintf("stopped at etcd's first refusal that no retry can overcome, after %d requests: %v", wl.Ops, ferr)
		return out, ferr
	}
	return out, ctx.Err()
}

// requestContext returns the context the clients send their requests
// with: ctx's values, never cancelled. An interruption (ctx cancelled)
// ends the requests in flight by closing the load's connections instead;
// release stops watching ctx, after the closing if it began.
//
// gRPC derives a cancellable context from the one each request is sent
// with, and when that one can be cancelled too, it registers the child
// with the parent, under the parent's lock, and removes it when the
// request ends. With the run's context shared by all clients, that was
// a lock and two changes of one map per request that the two CPUs passed
// back and forth (perf, 100 connections and 1000 clients: 3 % of the
// load generator's CPU in context.propagateCancel and removeChild, and
// more in (*cancelCtx).Done; etcd's benchmark tool sends with
// context.Background). A context of each client's own was no cheaper:
// its lock and map were out of the cache at every request.
func requestContext(ctx context.Context, conns []*clientv3.Client) (reqCtx context.Context, release func()) {
	closed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(closed)
		for _, c := range conns {
			c.Close()
		}
	})
	return context.WithoutCancel(ctx), func() {
		if !stop() {
			<-closed
		}
	}
}

// tick calls l.OnSecond once a second until the returned function is
// called.
func tick(l Load, start time.Time, next *atomic.Int64) (stop func()) {
	if l.OnSecond == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				sent := next.Load()
				if l.Total > 0 {
					sent = min(sent, l.Total)
				}
				l.OnSecond(now.Sub(start), sent)
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}
