package netcheck

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/stats"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// Spec is one `etcdbench net --peers` run.
type Spec struct {
	Peers []string // host:port of each listener
	Token string
	// Interval is the time between heartbeat-sized messages (etcd sends
	// a heartbeat every --heartbeat-interval, 100 ms; they are sent
	// faster here so that a p99 is decided in seconds, each as small as
	// one). PingBytes is their size.
	Interval  time.Duration
	PingBytes int
	// AppendRate batches of AppendBytes are echoed beside them on a
	// connection of their own: the round trip of raft's appends under
	// a write load.
	AppendRate  float64
	AppendBytes int
	// StreamFor and StreamMax bound the snapshot-sized stream after the
	// round trips.
	StreamFor time.Duration
	StreamMax int64
	// The round trips run at least MinDuration and at most MaxDuration,
	// ending as soon as their p99 is decided against the limit at
	// Confidence.
	MinDuration, MaxDuration time.Duration
	Confidence               float64
	// Timeout bounds a dial, a hello and each message's wait: a message
	// unanswered for this long is lost.
	Timeout    time.Duration
	Thresholds verdict.NetworkThresholds
	Args       []string
}

// DefaultSpec is a check's defaults.
func DefaultSpec() Spec {
	return Spec{
		Interval: 10 * time.Millisecond, PingBytes: 128,
		AppendRate: 100, AppendBytes: 16 << 10,
		StreamFor: 3 * time.Second, StreamMax: 256 << 20,
		MinDuration: 3 * time.Second, MaxDuration: 60 * time.Second, Confidence: 0.95,
		Timeout: 2 * time.Second, Thresholds: verdict.NetworkDefaults(),
	}
}

// Validate refuses a spec that cannot run.
func (s Spec) Validate() error {
	switch {
	case len(s.Peers) == 0:
		return run.Usagef("no peers: give --peers HOST:PORT,... (each running etcdbench net --listen)")
	case s.Token == "":
		return run.Usagef("no token: give --token, the same as the listeners'")
	case s.Interval <= 0 || s.PingBytes < 16 || s.PingBytes > maxFrame:
		return run.Usagef("--interval %v, message %d bytes: want a positive interval and 16 bytes to 1 MiB", s.Interval, s.PingBytes)
	case s.AppendRate < 0 || s.AppendBytes < 16 || s.AppendBytes > maxFrame:
		return run.Usagef("append rate %v, batch %d bytes: want a rate of 0 or more and 16 bytes to 1 MiB", s.AppendRate, s.AppendBytes)
	case s.MinDuration <= 0 || s.MaxDuration < s.MinDuration:
		return run.Usagef("--max-duration %v under the minimum %v", s.MaxDuration, s.MinDuration)
	}
	for _, p := range s.Peers {
		if _, _, err := net.SplitHostPort(p); err != nil {
			return run.Usagef("--peers %q: want host:port", p)
		}
	}
	return nil
}

// Check runs the check against every peer in turn and returns one
// workload per peer. A peer that is not a listener, or refuses the
// token, ends it with a usage error; one that cannot be reached with an
// error wrapping ErrUnreachable.
func Check(ctx context.Context, s Spec) (*result.Result, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	res := run.NewResult(s.Args)
	for _, peer := range s.Peers {
		w, err := checkPeer(ctx, s, peer)
		if err != nil {
			if errors.Is(err, ErrNotListener) || errors.Is(err, ErrToken) {
				return nil, run.Usage(err)
			}
			return nil, err
		}
		res.Workloads = append(res.Workloads, w)
	}
	res.Environment = sysinfo.Collect("/", ".")
	res.Finish(time.Now().UTC())
	return res, nil
}

// stamp writes a message's sequence number and send time at its start.
func stamp(b []byte, seq uint64, at time.Time) {
	binary.BigEndian.PutUint64(b, seq)
	binary.BigEndian.PutUint64(b[8:], uint64(at.UnixNano()))
}

// echoer sends stamped messages on one connection and times their
// echoes.
type echoer struct {
	c       net.Conn
	r       *bufio.Reader
	size    int
	frame   []byte // the message being sent, its header included
	mu      sync.Mutex
	h       *hdr.Histogram
	series  *stats.Series
	limit   time.Duration
	sent    int64
	got     int64
	lastErr error
}

// send writes one stamped message as a single frame in one write (its
// buffer reused: send runs on one goroutine per connection).
func (e *echoer) send(seq uint64) error {
	if e.frame == nil {
		e.frame = make([]byte, headerLen+e.size)
		e.frame[0] = framePing
		binary.BigEndian.PutUint32(e.frame[1:], uint32(e.size))
	}
	now := time.Now()
	stamp(e.frame[headerLen:], seq, now)
	_ = e.c.SetWriteDeadline(now.Add(5 * time.Second))
	if _, err := e.c.Write(e.frame); err != nil {
		return err
	}
	e.mu.Lock()
	e.sent++
	e.mu.Unlock()
	return nil
}

// receive reads echoes until the connection ends.
func (e *echoer) receive() {
	var buf []byte
	for {
		typ, p, err := readFrame(e.r, buf)
		if err != nil {
			e.mu.Lock()
			e.lastErr = err
			e.mu.Unlock()
			return
		}
		buf = p
		if typ != framePing || len(p) < 16 {
			continue
		}
		rtt := time.Since(time.Unix(0, int64(binary.BigEndian.Uint64(p[8:]))))
		e.mu.Lock()
		stats.Record(e.h, rtt)
		if e.series != nil {
			e.series.Record(rtt, rtt >= e.limit)
		}
		e.got++
		e.mu.Unlock()
	}
}

func checkPeer(ctx context.Context, s Spec, peer string) (result.Workload, error) {
	start := time.Now()
	limit := units.FromSeconds(s.Thresholds.RTTP99.Limit)
	hb, err := newEchoer(peer, s, s.PingBytes, limit, true)
	if err != nil {
		return result.Workload{}, err
	}
	defer hb.c.Close()
	var ap *echoer
	if s.AppendRate > 0 {
		if ap, err = newEchoer(peer, s, s.AppendBytes, limit, false); err != nil {
			return result.Workload{}, err
		}
		defer ap.c.Close()
	}
	rule := stats.StopRule{Threshold: limit, Quantile: 0.99, Confidence: s.Confidence,
		MinSamples: 100, MinDuration: s.MinDuration, MaxDuration: s.MaxDuration, Interval: time.Second}
	go hb.receive()
	if ap != nil {
		go ap.receive()
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	if ap != nil {
		wg.Go(func() {
			t := time.NewTicker(time.Duration(float64(time.Second) / s.AppendRate))
			defer t.Stop()
			for seq := uint64(0); ; seq++ {
				select {
				case <-runCtx.Done():
					return
				case <-t.C:
					if ap.send(seq) != nil {
						return
					}
				}
			}
		})
	}
	tick := time.NewTicker(s.Interval)
	defer tick.Stop()
	second := time.NewTicker(time.Second)
	defer second.Stop()
	var series []stats.SecondSample
	var decision stats.Decision
	looks := 0
	var sendErr error
loop:
	for seq := uint64(0); ; seq++ {
		select {
		case <-ctx.Done():
			cancel()
			wg.Wait()
			return result.Workload{}, ctx.Err()
		case <-tick.C:
			if sendErr = hb.send(seq); sendErr != nil {
				break loop
			}
		case <-second.C:
			hb.mu.Lock()
			series = append(series, hb.series.Close(len(series)))
			n, k := hb.h.TotalCount(), exceeded(hb.h, limit)
			deff := stats.DesignEffect(hb.series.Batches())
			hb.mu.Unlock()
			elapsed := time.Since(start)
			looks++
			decision = rule.Decide(n, k, deff, elapsed)
			if decision.Outcome != stats.Undecided || elapsed >= s.MaxDuration {
				break loop
			}
		}
	}
	cancel()
	wg.Wait()
	// The messages still out get their timeout to come back.
	waitEchoes(hb, s.Timeout)
	if ap != nil {
		waitEchoes(ap, s.Timeout)
	}
	took := time.Since(start)
	var streamed int64
	var streamTook time.Duration
	var streamErr error
	if sendErr == nil {
		streamed, streamTook, streamErr = stream(peer, s)
	}
	w := workload(s, peer, hb, ap, series, rule, decision, looks, took)
	w.Verdicts = append(w.Verdicts, judgeStream(s.Thresholds, streamed, streamTook, streamErr))
	w.Figures = append(w.Figures, streamFigures(streamed, streamTook)...)
	if sendErr != nil {
		w.Notes = append(w.Notes, fmt.Sprintf("the heartbeat connection broke after %d messages: %v", hb.sent, sendErr))
	}
	return w, nil
}

func newEchoer(peer string, s Spec, size int, limit time.Duration, withSeries bool) (*echoer, error) {
	c, r, err := dial(peer, s.Token, s.Timeout)
	if err != nil {
		return nil, err
	}
	e := &echoer{c: c, r: r, size: size, h: stats.NewLatencyHistogram(), limit: limit}
	if withSeries {
		e.series = stats.NewSeries()
	}
	return e, nil
}

// exceeded counts the recorded round trips at limit or over.
func exceeded(h *hdr.Histogram, limit time.Duration) int64 {
	var k int64
	for _, b := range h.Distribution() {
		if b.From >= int64(limit) {
			k += b.Count
		}
	}
	return k
}

// waitEchoes waits up to timeout for the messages still out.
func waitEchoes(e *echoer, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		e.mu.Lock()
		done := e.got >= e.sent || e.lastErr != nil
		e.mu.Unlock()
		if done {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stream sends a snapshot-sized stream on a connection of its own, for
// StreamFor or StreamMax bytes, and times it to the listener's count.
func stream(peer string, s Spec) (int64, time.Duration, error) {
	c, r, err := dial(peer, s.Token, s.Timeout)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	buf := make([]byte, 64<<10)
	start := time.Now()
	var sent int64
	bw := bufio.NewWriterSize(c, 256<<10)
	_ = c.SetWriteDeadline(start.Add(s.StreamFor + s.Timeout))
	for sent < s.StreamMax && time.Since(start) < s.StreamFor {
		n := min(int64(len(buf)), s.StreamMax-sent)
		if err := writeFrame(bw, frameData, buf[:n]); err != nil {
			return 0, 0, err
		}
		sent += n
	}
	if err := writeFrame(bw, frameEnd, nil); err != nil {
		return 0, 0, err
	}
	if err := bw.Flush(); err != nil {
		return 0, 0, err
	}
	_ = c.SetReadDeadline(time.Now().Add(s.StreamFor + s.Timeout))
	typ, p, err := readFrame(r, nil)
	if err != nil || typ != frameAck || len(p) != 8 {
		return 0, 0, fmt.Errorf("the stream's count did not come back: %v", err)
	}
	got := int64(binary.BigEndian.Uint64(p))
	if got != sent {
		return got, time.Since(start), fmt.Errorf("the listener counted %d of the %d bytes sent", got, sent)
	}
	return got, time.Since(start), nil
}
