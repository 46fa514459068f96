package netcheck

import (
	"bufio"
	"context"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Limits bound what a listener gives.
type Limits struct {
	// MaxConns is the most connections served at once; more are closed
	// at once.
	MaxConns int
	// MaxBytes is the most bytes read from one connection.
	MaxBytes int64
	// Idle closes a connection that sends nothing for this long.
	Idle time.Duration
	// For ends the listener after this long (0: when ctx ends).
	For time.Duration
}

// DefaultLimits are a listener's bounds unless told otherwise: a check
// opens two connections and streams at most 256 MiB by default.
func DefaultLimits() Limits {
	return Limits{MaxConns: 8, MaxBytes: 1 << 30, Idle: 30 * time.Second, For: 10 * time.Minute}
}

// Served is what a listener did, for its report.
type Served struct {
	Conns, Refused, BadHellos, BadTokens int64
	BytesIn, BytesOut                    int64
}

// Listen binds addr (host:port) and only it.
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: want host:port, e.g. 10.0.0.5:2390", addr)
	}
	if host == "" {
		return nil, fmt.Errorf("--listen %q: give the address to bind (e.g. this node's peer address), not every interface", addr)
	}
	return net.Listen("tcp", addr)
}

// Serve answers checks on ln until ctx ends, lim.For passes or ln is
// closed; the token is what peers must prove they hold.
func Serve(ctx context.Context, ln net.Listener, token string, lim Limits) (Served, error) {
	if token == "" {
		return Served{}, errors.New("no token: give --token, the same on both sides")
	}
	if lim.For > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lim.For)
		defer cancel()
	}
	var s struct {
		conns, refused, badHellos, badTokens, in, out atomic.Int64
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	var mu sync.Mutex
	open := map[net.Conn]struct{}{}
	defer func() {
		mu.Lock()
		for c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				err = nil
			}
			wg.Wait()
			return Served{Conns: s.conns.Load(), Refused: s.refused.Load(), BadHellos: s.badHellos.Load(), BadTokens: s.badTokens.Load(), BytesIn: s.in.Load(), BytesOut: s.out.Load()}, err
		}
		mu.Lock()
		if len(open) >= lim.MaxConns {
			mu.Unlock()
			s.refused.Add(1)
			c.Close()
			continue
		}
		open[c] = struct{}{}
		mu.Unlock()
		s.conns.Add(1)
		wg.Go(func() {
			defer func() {
				mu.Lock()
				delete(open, c)
				mu.Unlock()
				c.Close()
			}()
			in, out, why := serveConn(c, token, lim)
			s.in.Add(in)
			s.out.Add(out)
			switch why {
			case errHello:
				s.badHellos.Add(1)
			case errBadToken:
				s.badTokens.Add(1)
			}
		})
	}
}

var (
	errHello    = errors.New("not a hello")
	errBadToken = errors.New("wrong token")
)

// counted counts the bytes read through it and stops at max.
type counted struct {
	r   io.Reader
	n   int64
	max int64
}

func (c *counted) Read(p []byte) (int, error) {
	if c.n >= c.max {
		return 0, fmt.Errorf("read the most bytes a connection may send (%d)", c.max)
	}
	if rest := c.max - c.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// serveConn serves one connection: the hello and the token, then frames,
// never writing more than it has read. It returns the bytes read and
// written and why it ended early.
func serveConn(c net.Conn, token string, lim Limits) (in, out int64, why error) {
	cr := &counted{r: c, max: lim.MaxBytes}
	r := bufio.NewReader(cr)
	w := bufio.NewWriter(c)
	defer func() { in = cr.n }()
	deadline := func() { _ = c.SetDeadline(time.Now().Add(lim.Idle)) }
	deadline()
	// write sends b only while what was read covers it.
	write := func(b []byte) error {
		if out+int64(len(b)) > cr.n {
			return fmt.Errorf("would send %d bytes for %d read", out+int64(len(b)), cr.n)
		}
		out += int64(len(b))
		_, err := w.Write(b)
		return err
	}
	line, err := readLine(r, 64)
	theirs := helloNonce(line)
	if err != nil || theirs == "" {
		return 0, out, errHello
	}
	mine := nonce()
	if write([]byte(magic+" "+mine+"\n")) != nil || w.Flush() != nil {
		return 0, out, nil
	}
	line, err = readLine(r, 80)
	if err != nil || subtle.ConstantTimeCompare([]byte(line), []byte(proof(token, mine, theirs))) != 1 {
		return 0, out, errBadToken
	}
	if write([]byte("OK\n")) != nil || w.Flush() != nil {
		return 0, out, nil
	}
	var buf []byte
	var streamed int64
	for {
		deadline()
		typ, payload, err := readFrame(r, buf)
		if err != nil {
			return 0, out, nil
		}
		buf = payload
		switch typ {
		case framePing:
			var h [headerLen]byte
			h[0] = framePing
			binary.BigEndian.PutUint32(h[1:], uint32(len(payload)))
			if write(h[:]) != nil || write(payload) != nil {
				return 0, out, nil
			}
			if r.Buffered() == 0 && w.Flush() != nil {
				return 0, out, nil
			}
		case frameData:
			streamed += int64(len(payload))
		case frameEnd:
			var b [headerLen + 8]byte
			b[0] = frameAck
			binary.BigEndian.PutUint32(b[1:], 8)
			binary.BigEndian.PutUint64(b[headerLen:], uint64(streamed))
			streamed = 0
			if write(b[:]) != nil || w.Flush() != nil {
				return 0, out, nil
			}
		default:
			return 0, out, nil
		}
	}
}
