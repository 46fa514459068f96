package peernet

import (
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"slices"
	"testing"
	"time"

	"go.etcd.io/etcd/pkg/v3/proxy"
	"go.uber.org/zap"
)

// echo serves an echo on 127.0.0.1 and returns its address.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// roundTrips sends n 64-byte messages through addr on one connection,
// one every gap, each stamped with its send time, and returns the round
// trip of each echo, sorted.
func roundTrips(t *testing.T, addr string, n int, gap time.Duration) []time.Duration {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	base := time.Now()
	go func() {
		msg := make([]byte, 64)
		for range n {
			binary.LittleEndian.PutUint64(msg, uint64(time.Since(base)))
			if _, err := c.Write(msg); err != nil {
				return
			}
			time.Sleep(gap)
		}
	}()
	var rtts []time.Duration
	msg := make([]byte, 64)
	c.SetReadDeadline(time.Now().Add(time.Duration(n)*gap + 10*time.Second))
	for range n {
		if _, err := io.ReadFull(c, msg); err != nil {
			t.Fatalf("after %d echoes: %v", len(rtts), err)
		}
		rtts = append(rtts, time.Since(base)-time.Duration(binary.LittleEndian.Uint64(msg)))
	}
	slices.Sort(rtts)
	return rtts
}

func quantile(d []time.Duration, q float64) time.Duration { return d[int(q*float64(len(d)-1))] }

// Under a steady stream (a message every 2 ms on one connection, as raft
// appends at 500/s) a link of 25 ms each way holds each message 50 ms
// round trip; etcd's proxy with the same delays holds them between one
// and two delays each way, which is why this package has its own.
func TestDelayUnderAStream(t *testing.T) {
	to := echo(t)
	l, err := Listen(to, 25*time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rtts := roundTrips(t, l.Addr(), 300, 2*time.Millisecond)
	p50, p99 := quantile(rtts, 0.5), quantile(rtts, 0.99)
	t.Logf("link 25 ms each way: round trip p50 %v, p99 %v", p50, p99)
	if p50 < 50*time.Millisecond || p50 > 53*time.Millisecond || p99 > 60*time.Millisecond {
		t.Errorf("round trip p50 %v, p99 %v through a 25 ms link: want 50 ms (p50 within 3 ms, p99 within 10)", p50, p99)
	}

	from, _ := url.Parse("tcp://127.0.0.1:0")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	from.Host = ln.Addr().String()
	ln.Close()
	dst, _ := url.Parse("tcp://" + to)
	p := proxy.NewServer(proxy.ServerConfig{Logger: zap.NewNop(), From: *from, To: *dst})
	<-p.Ready()
	defer p.Close()
	p.DelayTx(25*time.Millisecond, 0)
	p.DelayRx(25*time.Millisecond, 0)
	theirs := roundTrips(t, from.Host, 300, 2*time.Millisecond)
	t.Logf("etcd's proxy 25 ms each way: round trip p50 %v, p99 %v", quantile(theirs, 0.5), quantile(theirs, 0.99))
	if q := quantile(theirs, 0.5); q < p50+5*time.Millisecond {
		t.Errorf("etcd's proxy held a stream's messages %v round trip (this link %v): it no longer adds to its delay, and may serve as the link (update the package's doc)", q, p50)
	}
}

// A held link delivers nothing until released, then everything, in
// order; the jitter keeps each delay within delay ± jitter and the
// stream in order.
func TestHoldAndJitter(t *testing.T) {
	l, err := Listen(echo(t), 5*time.Millisecond, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rtts := roundTrips(t, l.Addr(), 200, time.Millisecond)
	if lo, hi := rtts[0], rtts[len(rtts)-1]; lo < 0 || hi > 40*time.Millisecond {
		t.Errorf("round trips %v-%v through 5 ± 5 ms each way: want 0-20 ms (and some slack)", lo, hi)
	}
	c, err := net.Dial("tcp", l.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l.Hold(true)
	if _, err := c.Write([]byte("held")); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, err := c.Read(make([]byte, 4)); err == nil {
		t.Fatalf("a held link delivered %d bytes", n)
	}
	l.Hold(false)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "held" {
		t.Fatalf("after the release: %q, %v", got, err)
	}
}

func TestListenBadDelay(t *testing.T) {
	for _, d := range [][2]time.Duration{{-time.Millisecond, 0}, {time.Millisecond, 2 * time.Millisecond}} {
		if l, err := Listen("127.0.0.1:1", d[0], d[1]); err == nil {
			l.Close()
			t.Errorf("Listen(%v, jitter %v) took it", d[0], d[1])
		}
	}
}

// A connection whose first request names its sender (etcd's
// X-Server-From) gets that pair's delay; one that names none, or one the
// link does not know, keeps the link's own; the request's bytes pass
// whole.
func TestDelayBySender(t *testing.T) {
	l, err := Listen(echo(t), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.SetFrom(func(sender string) (time.Duration, bool) { return 40 * time.Millisecond, sender == "8e9e05c52164694d" })
	// first sends a request with header h and times its echo.
	first := func(h string) time.Duration {
		t.Helper()
		c, err := net.Dial("tcp", l.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		req := "GET /raft/stream/msgapp/1 HTTP/1.1\r\nHost: x\r\n" + h + "\r\n"
		t0 := time.Now()
		if _, err := c.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(req))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(c, got); err != nil || string(got) != req {
			t.Fatalf("echo %q, %v; want the request back whole", got, err)
		}
		return time.Since(t0)
	}
	if d := first("X-Server-From: 8e9e05c52164694d\r\n"); d < 80*time.Millisecond || d > 500*time.Millisecond {
		t.Errorf("a known sender's request came back in %v: want its pair's 80ms round trip", d)
	}
	for _, h := range []string{"", "X-Server-From: 1\r\n"} {
		if d := first(h); d >= 40*time.Millisecond {
			t.Errorf("header %q: came back in %v, want the link's own 0 delay", h, d)
		}
	}
}

// HoldFrom holds both ways of the connections one member opened, new
// ones too, while another member's pass; the release delivers what was
// held.
func TestHoldFrom(t *testing.T) {
	l, err := Listen(echo(t), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.SetFrom(func(string) (time.Duration, bool) { return 0, false })
	open := func(from string) (net.Conn, string) {
		t.Helper()
		c, err := net.Dial("tcp", l.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		req := "GET /raft/stream/message/1 HTTP/1.1\r\nHost: x\r\nX-Server-From: " + from + "\r\n\r\n"
		if _, err := c.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		return c, req
	}
	read := func(c net.Conn, n int, within time.Duration) (string, error) {
		got := make([]byte, n)
		c.SetReadDeadline(time.Now().Add(within))
		_, err := io.ReadFull(c, got)
		return string(got), err
	}
	a, reqA := open("a")
	if got, err := read(a, len(reqA), 5*time.Second); err != nil || got != reqA {
		t.Fatalf("before the hold: %q, %v", got, err)
	}
	l.HoldFrom("a", true)
	if _, err := a.Write([]byte("late")); err != nil {
		t.Fatal(err)
	}
	a2, reqA2 := open("a") // a connection opened while held
	b, reqB := open("b")
	if got, err := read(b, len(reqB), 5*time.Second); err != nil || got != reqB {
		t.Errorf("another member's connection while a's were held: %q, %v", got, err)
	}
	for _, c := range []net.Conn{a, a2} {
		if got, err := read(c, 1, 200*time.Millisecond); err == nil {
			t.Errorf("a held member's connection delivered %q", got)
		}
	}
	l.HoldFrom("a", false)
	if got, err := read(a, 4, 5*time.Second); err != nil || got != "late" {
		t.Errorf("after the release: %q, %v; want what was held", got, err)
	}
	if got, err := read(a2, len(reqA2), 5*time.Second); err != nil || got != reqA2 {
		t.Errorf("the connection opened while held, after the release: %q, %v", got, err)
	}
}
