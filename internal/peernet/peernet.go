// Package peernet puts a network between etcd members that share one
// machine: a TCP proxy in front of each member's peer port that holds
// every byte for a one-way delay (and a jitter) before it passes it on,
// in both directions, and can drop or hold a link's traffic (for failure
// drills).
//
// Each chunk read is stamped with its arrival and written once its delay
// from that arrival has passed, while the next chunks are read: a stream
// of raft appends sees the delay, not a multiple of it. etcd's own
// fault-injection proxy (go.etcd.io/etcd/pkg/v3/proxy) sleeps for the
// delay between reading a chunk and writing it, in one loop per
// direction, so that bytes arriving during the sleep wait for it to end
// and then for a delay of their own: under a steady stream a message
// waits between one and two delays (see TestDelayUnderAStream), which
// would make members R apart look up to 2R apart once they are written.
package peernet

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Link is one member's side of the network: it listens on 127.0.0.1 and
// forwards each connection to the member's own peer address, each byte
// held for the link's one-way delay in each direction. Members that
// dial each other through both their links see a round trip of the two
// links' delays, twice (RoundTrip).
type Link struct {
	ln     net.Listener
	to     string
	delay  atomic.Int64 // one-way, ns
	jitter atomic.Int64 // ns: each chunk's delay is uniform in delay ± jitter
	// held holds the link's traffic, undelivered, until released;
	// heldFrom holds only the connections the members it names opened
	// (HoldFrom). release is closed and replaced when either ends.
	held     atomic.Bool
	heldFrom map[string]bool
	release  chan struct{}
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	// from, when set, gives a connection the one-way delay of the member
	// that opened it (SetFrom).
	from   func(sender string) (time.Duration, bool)
	wg     sync.WaitGroup
	closed chan struct{}
	once   sync.Once
}

// Listen starts a link to the member at to ("127.0.0.1:port") whose
// one-way delay is oneWay and jitter jitter (each within [0, oneWay]).
func Listen(to string, oneWay, jitter time.Duration) (*Link, error) {
	if oneWay < 0 || jitter < 0 || jitter > oneWay {
		return nil, fmt.Errorf("peer link delay %v, jitter %v: want 0 <= jitter <= delay", oneWay, jitter)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &Link{ln: ln, to: to, conns: map[net.Conn]struct{}{}, closed: make(chan struct{}), release: make(chan struct{})}
	l.delay.Store(int64(oneWay))
	l.jitter.Store(int64(jitter))
	l.wg.Go(l.serve)
	return l, nil
}

// Addr is the address the link listens on: the member's advertised peer
// address.
func (l *Link) Addr() string { return l.ln.Addr().String() }

// OneWay is the link's one-way delay.
func (l *Link) OneWay() time.Duration { return time.Duration(l.delay.Load()) }

// SetDelay changes the one-way delay and jitter of bytes read from now
// on.
func (l *Link) SetDelay(oneWay, jitter time.Duration) {
	l.delay.Store(int64(oneWay))
	l.jitter.Store(int64(min(jitter, oneWay)))
}

// SetFrom makes each connection's delay the one to the member that
// opened it: sender is the X-Server-From header of the connection's first
// request, which etcd's rafthttp sets on every stream and message it
// opens (its member ID in hex), and oneWay the delay for that pair; a
// connection whose first request does not say (etcd's prober's) or whose
// sender f does not know keeps the link's own delay. Set before members
// dial the link.
func (l *Link) SetFrom(f func(sender string) (oneWay time.Duration, ok bool)) {
	l.mu.Lock()
	l.from = f
	l.mu.Unlock()
}

// Hold holds (true) the link's traffic undelivered, or delivers what it
// held and passes again (false). Held bytes are neither dropped nor
// refused: the connections stay open, their senders' writes back up, as
// over a network that loses every packet until it heals.
func (l *Link) Hold(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if on == l.held.Load() {
		return
	}
	l.held.Store(on)
	if !on {
		l.releaseHeld()
	}
}

// HoldFrom holds (true) or releases (false) the traffic, both ways, of
// the connections the member sender opened (its X-Server-From, as
// SetFrom reads it; new connections too), so that one member is cut off
// from the member behind this link while the others still reach it.
// It needs SetFrom.
func (l *Link) HoldFrom(sender string, on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.heldFrom[sender] == on {
		return
	}
	if on {
		if l.heldFrom == nil {
			l.heldFrom = map[string]bool{}
		}
		l.heldFrom[sender] = true
		return
	}
	delete(l.heldFrom, sender)
	l.releaseHeld()
}

// releaseHeld wakes every held write to look again (l.mu held).
func (l *Link) releaseHeld() {
	close(l.release)
	l.release = make(chan struct{})
}

// Close stops listening and closes every connection.
func (l *Link) Close() error {
	var err error
	l.once.Do(func() {
		close(l.closed)
		err = l.ln.Close()
		l.mu.Lock()
		for c := range l.conns {
			c.Close()
		}
		l.mu.Unlock()
		l.Hold(false)
		l.wg.Wait()
	})
	return err
}

func (l *Link) serve() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.wg.Go(func() { l.forward(c) })
	}
}

// track adds c to the open connections (false once the link closed).
func (l *Link) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.closed:
		c.Close()
		return false
	default:
	}
	l.conns[c] = struct{}{}
	return true
}

func (l *Link) untrack(c net.Conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
	c.Close()
}

func (l *Link) forward(in net.Conn) {
	if !l.track(in) {
		return
	}
	defer l.untrack(in)
	d := net.Dialer{Timeout: 5 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-l.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	src, sender, oneWay := l.sender(in)
	out, err := d.DialContext(ctx, "tcp", l.to)
	if err != nil || !l.track(out) {
		return
	}
	defer l.untrack(out)
	var wg sync.WaitGroup
	wg.Go(func() { l.pipe(out, src, sender, oneWay); closeWrite(out) })
	wg.Go(func() { l.pipe(in, out, sender, oneWay); closeWrite(in) })
	wg.Wait()
}

// headerLimit is the most of a connection's first bytes read for its
// request's headers.
const headerLimit = 16 << 10

// sender is what to read in from (its first bytes peeked, not consumed),
// the member that opened the connection ("": not known) and the
// connection's one-way delay by it (-1: the link's own), when SetFrom is
// set.
func (l *Link) sender(in net.Conn) (io.Reader, string, time.Duration) {
	l.mu.Lock()
	f := l.from
	l.mu.Unlock()
	if f == nil {
		return in, "", -1
	}
	br := bufio.NewReaderSize(in, headerLimit)
	// An HTTP request's headers arrive at once; a connection that sends
	// none within a second keeps the link's delay.
	_ = in.SetReadDeadline(time.Now().Add(time.Second))
	// What was peeked goes first, then the connection itself: not the
	// buffer, which would keep a deadline's error.
	rest := func() io.Reader {
		_ = in.SetReadDeadline(time.Time{})
		b, _ := br.Peek(br.Buffered())
		return io.MultiReader(bytes.NewReader(append([]byte(nil), b...)), in)
	}
	for k := 1; k <= headerLimit; k = br.Buffered() + 1 {
		// Peek(k) waits for one byte more than is buffered, and reads
		// what has arrived.
		_, err := br.Peek(k)
		b, _ := br.Peek(br.Buffered())
		if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
			if req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b[:i+4]))); err == nil {
				from := req.Header.Get("X-Server-From")
				if d, ok := f(from); ok {
					return rest(), from, d
				}
				return rest(), from, -1
			}
			return rest(), "", -1
		}
		if err != nil {
			break
		}
	}
	return rest(), "", -1
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// chunk is bytes read and when they are due.
type chunk struct {
	b   []byte
	due time.Time
}

// pipe copies src to dst, each chunk written at its arrival plus the
// link's delay (in order: a chunk is never due before the one ahead of
// it), while the next chunks are read.
//
// oneWay, when not negative, is the connection's own delay (SetFrom),
// with the link's jitter; sender is the member that opened it (HoldFrom).
func (l *Link) pipe(dst io.Writer, src io.Reader, sender string, oneWay time.Duration) {
	q := make(chan chunk, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range q {
			if wait := time.Until(c.due); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-l.closed:
					t.Stop()
					return
				}
			}
			l.wait(sender)
			if _, err := dst.Write(c.b); err != nil {
				return
			}
		}
	}()
	defer func() { close(q); <-done }()
	var last time.Time
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			due := time.Now().Add(l.sample(oneWay))
			if due.Before(last) {
				due = last
			}
			last = due
			select {
			case q <- chunk{b: append([]byte(nil), buf[:n]...), due: due}:
			case <-done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// wait blocks while the link, or the connections of sender, are held.
func (l *Link) wait(sender string) {
	for {
		l.mu.Lock()
		held, rel := l.held.Load() || (sender != "" && l.heldFrom[sender]), l.release
		l.mu.Unlock()
		if !held {
			return
		}
		select {
		case <-rel:
		case <-l.closed:
			return
		}
	}
}

// sample is one chunk's delay: uniform in delay ± jitter, delay the
// connection's own (oneWay, when not negative) or the link's.
func (l *Link) sample(oneWay time.Duration) time.Duration {
	d, j := l.delay.Load(), l.jitter.Load()
	if oneWay >= 0 {
		d, j = int64(oneWay), min(j, int64(oneWay))
	}
	if j > 0 {
		d += rand.Int64N(2*j+1) - j
	}
	return time.Duration(max(d, 0))
}
