package trace

import (
	"context"
	"strings"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
)

// Follower is one eBPF trace of a member's WAL syncs kept attached over
// many windows (the steps of a capacity sweep), each window's syncs
// counted on their own: attaching and detaching the tracer for each step
// cost a step about 0.7 s on the development VM, and missed the syncs of
// its first few hundred milliseconds, while the programs were loading.
// One window is open at a time.
type Follower struct {
	cancel  context.CancelFunc
	done    chan struct{}
	flushed chan struct{}
	why     string // why there is no trace ("": attached)

	mu    sync.Mutex
	flush func() error // the ring buffer's, once attached
	win   *window      // the open window, or nil
	err   error        // how the trace ended, once done
}

// window is one window's WAL syncs.
type window struct {
	all, own *hdr.Histogram
	n        int64
}

// Follow attaches the tracer to the process pid and returns once its
// programs are attached (or could not be: Why then says why). Close
// detaches it.
func Follow(ctx context.Context, pid int) *Follower {
	tctx, cancel := context.WithCancel(ctx)
	f := &Follower{cancel: cancel, done: make(chan struct{}), flushed: make(chan struct{}, 1)}
	attached := make(chan struct{})
	var once sync.Once
	go func() {
		defer close(f.done)
		_, err := Run(tctx, Options{PID: pid, Observer: (*followObserver)(f),
			Attached: func() { once.Do(func() { close(attached) }) },
			flusher: func(flush func() error) {
				f.mu.Lock()
				f.flush = flush
				f.mu.Unlock()
			},
			flushed: func() {
				select {
				case f.flushed <- struct{}{}:
				default:
				}
			},
		})
		f.mu.Lock()
		f.err = err
		f.mu.Unlock()
	}()
	select {
	case <-attached:
	case <-f.done:
		f.why = "not traced"
		if f.err != nil {
			f.why = "not traced (" + strings.Join(strings.Fields(f.err.Error()), " ") + ")"
		}
	}
	return f
}

// Why says why the process is not traced, or "" when it is.
func (f *Follower) Why() string { return f.why }

// Err is the error that kept the tracer from attaching (ErrPermission,
// ErrUnsupported, ...), or nil when it attached.
func (f *Follower) Err() error {
	if f.why == "" {
		return nil
	}
	return f.err
}

// Close detaches the tracer.
func (f *Follower) Close() {
	f.cancel()
	<-f.done
}

// Window opens a window: the syncs that end from now until the returned
// function is called are its own. That function gives them, or nil and
// why there are none.
func (f *Follower) Window() func() (*WALSyncs, string) {
	if f.why != "" {
		why := f.why
		return func() (*WALSyncs, string) { return nil, why }
	}
	f.catchUp() // what ended before the window is not its own
	f.mu.Lock()
	f.win = &window{all: stats.NewLatencyHistogram(), own: stats.NewLatencyHistogram()}
	f.mu.Unlock()
	return func() (*WALSyncs, string) {
		f.catchUp()
		f.mu.Lock()
		w, err := f.win, f.err
		f.win = nil
		f.mu.Unlock()
		switch {
		case w == nil || w.n == 0 && err != nil && !isCancel(err):
			return nil, "the trace ended: " + strings.Join(strings.Fields(errString(err)), " ")
		case w.n == 0:
			return nil, "the eBPF trace saw no WAL fdatasync"
		}
		all, err := stats.Encode(w.all)
		if err != nil {
			return nil, "the trace could not be read: " + err.Error()
		}
		own, err := stats.Encode(w.own)
		if err != nil {
			return nil, "the trace could not be read: " + err.Error()
		}
		return &WALSyncs{
			All:            result.Latency{Summary: stats.Summarize(w.all), Histogram: all},
			WithoutCPUWait: result.Latency{Summary: stats.Summarize(w.own), Histogram: own},
		}, ""
	}
}

// catchUpWait bounds a wait for the reader to read what the ring buffer
// holds: it reads in batches every pollInterval, and a flush ends its
// wait at once.
const catchUpWait = 2 * pollInterval

// catchUp returns once the events in the ring buffer now have been read
// (or the trace ended, or catchUpWait passed).
func (f *Follower) catchUp() {
	f.mu.Lock()
	flush := f.flush
	f.mu.Unlock()
	if flush == nil {
		return
	}
	select {
	case <-f.flushed: // an earlier flush's
	default:
	}
	if flush() != nil {
		return
	}
	select {
	case <-f.flushed:
	case <-f.done:
	case <-time.After(catchUpWait):
	}
}

func isCancel(err error) bool { return err == context.Canceled || err == context.DeadlineExceeded }

func errString(err error) string {
	if err == nil {
		return "the process exited"
	}
	return err.Error()
}

// followObserver is the Follower as the trace's Observer.
type followObserver Follower

func (o *followObserver) Attached()  {}
func (o *followObserver) Lost(int64) {}

// Observe counts a WAL sync in the open window.
func (o *followObserver) Observe(ob Observed) {
	if ob.Class != ClassWAL || !ob.Sync || ob.Failed {
		return
	}
	f := (*Follower)(o)
	f.mu.Lock()
	defer f.mu.Unlock()
	if w := f.win; w != nil {
		stats.Record(w.all, ob.Latency)
		stats.Record(w.own, ob.Latency-ob.CPUWait)
		w.n++
	}
}
