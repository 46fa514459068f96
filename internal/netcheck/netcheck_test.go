package netcheck

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/peernet"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/verdict"
)

// listen serves a listener with token on 127.0.0.1 until the test ends
// and returns its address and what it served, once it ended.
func listen(t *testing.T, token string) (string, <-chan Served) {
	t.Helper()
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Served, 1)
	go func() {
		s, _ := Serve(ctx, ln, token, DefaultLimits())
		done <- s
	}()
	t.Cleanup(cancel)
	stops[t.Name()] = append(stops[t.Name()], cancel)
	return ln.Addr().String(), done
}

// stops are each test's listeners' cancels.
var stops = map[string][]context.CancelFunc{}

func stopListeners(t *testing.T) {
	for _, c := range stops[t.Name()] {
		c()
	}
}

func quick(peer string) Spec {
	s := DefaultSpec()
	s.Peers, s.Token = []string{peer}, "secret"
	s.MinDuration, s.MaxDuration = time.Second, 15*time.Second
	s.StreamFor, s.StreamMax = 500*time.Millisecond, 32<<20
	return s
}

func figure(w result.Workload, name string) float64 {
	for _, f := range w.Figures {
		if f.Name == name {
			return f.Value
		}
	}
	return -1
}

// Through a link of 10 ms each way the check measures a 20 ms round
// trip (within 10 % or 1 ms), passes it against OpenShift's 50 ms,
// recommends etcd's default timeouts, streams, and the listener never
// sent more than it received.
func TestCheckThroughALink(t *testing.T) {
	addr, served := listen(t, "secret")
	l, err := peernet.Listen(addr, 10*time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start := time.Now()
	res, err := Check(context.Background(), quick(l.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	w := res.Workloads[0]
	p50, p99 := figure(w, "rtt_p50"), figure(w, "rtt_p99")
	t.Logf("round trip p50 %.2f ms, p99 %.2f ms, stream %.0f MB/s, in %v (%s)", 1e3*p50, 1e3*p99, figure(w, "stream_bytes_per_sec")/1e6, took, w.Stop.Reason)
	if d := p50 - 0.020; d < -0.001 || d > max(0.002, 0.1*0.020) {
		t.Errorf("round trip p50 %.4f s through a 20 ms link: want 20 ms within 10 %% or 1 ms (and a little for this machine)", p50)
	}
	if w.Verdicts[0].Status != verdict.Pass || !w.Verdicts[0].Confidence.Decided {
		t.Errorf("round trip verdict %+v: want a decided PASS", w.Verdicts[0])
	}
	if figure(w, "heartbeat_interval") != 0.1 || figure(w, "election_timeout") != 1 {
		t.Errorf("timeouts %v/%v, want etcd's defaults", figure(w, "heartbeat_interval"), figure(w, "election_timeout"))
	}
	if figure(w, "stream_bytes_per_sec") <= 0 || figure(w, "append_rtt_p99") < 0.019 {
		t.Errorf("stream %v B/s, append p99 %v", figure(w, "stream_bytes_per_sec"), figure(w, "append_rtt_p99"))
	}
	l.Close()
	if s := <-servedAfter(t, served); s.BytesOut > s.BytesIn || s.Conns < 3 {
		t.Errorf("the listener served %+v: want three connections and no more sent than read", s)
	}
}

// servedAfter ends the test's listener and gives what it served.
func servedAfter(t *testing.T, served <-chan Served) <-chan Served {
	t.Helper()
	stopListeners(t)
	return served
}

// Bad peers: a closed port is unreachable (exit 3); something that is
// not a listener, or a wrong token, is bad input (exit 2), each in one
// line; the listener refuses a wrong token and sends nothing beyond what
// it read.
func TestCheckBadPeers(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	// A server that is not a listener: it reads and says nothing.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	addr, _ := listen(t, "secret")
	for _, tc := range []struct {
		name, peer, token string
		want              error
		usage             bool
	}{
		{"closed port", closedAddr, "secret", ErrUnreachable, false},
		{"not a listener", mute.Addr().String(), "secret", ErrNotListener, true},
		{"wrong token", addr, "guess", ErrToken, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := quick(tc.peer)
			s.Token, s.Timeout = tc.token, 500*time.Millisecond
			_, err := Check(context.Background(), s)
			if !errors.Is(err, tc.want) || run.IsUsage(err) != tc.usage {
				t.Errorf("err %v: want %v, usage %v", err, tc.want, tc.usage)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("err %q spans lines", err)
			}
		})
	}
}

// The listener: a hello that is not one, and a wrong proof, end the
// connection with no more sent than read; a port in use is refused.
func TestServeBounds(t *testing.T) {
	addr, served := listen(t, "secret")
	for _, first := range []string{"GET / HTTP/1.1\r\n\r\n", "EBNET1 " + strings.Repeat("0", 32) + "\nnot-the-proof\n"} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(c, first)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, _ := io.ReadAll(bufio.NewReader(c))
		c.Close()
		if len(got) > len(first) {
			t.Errorf("for %q the listener sent %d bytes: %q", first, len(got), got)
		}
		if strings.Contains(string(got), "OK") {
			t.Errorf("for %q the listener said OK", first)
		}
	}
	if _, err := Listen(addr); err == nil {
		t.Errorf("Listen on a port in use took it")
	}
	if _, err := Listen(":0"); err == nil {
		t.Errorf("Listen on every interface took it")
	}
	stopListeners(t)
	if s := <-served; s.BadHellos != 1 || s.BadTokens != 1 || s.BytesOut > s.BytesIn {
		t.Errorf("served %+v: want one bad hello, one bad token, no more sent than read", s)
	}
}

// A net result gives the members' network: the worst peer's round trip
// p50, with the jitter that puts its p99 where it was.
func TestPeerNetwork(t *testing.T) {
	w := func(peer string, p50, p99 float64) result.Workload {
		return result.Workload{Name: "net", Parameters: map[string]any{"peer": peer},
			Figures: []result.Figure{{Name: "rtt_p50", Value: p50}, {Name: "rtt_p99", Value: p99}}}
	}
	r := &result.Result{Workloads: []result.Workload{w("a:1", 0.002, 0.003), w("b:1", 0.040, 0.046)}}
	rtt, jitter, from, err := PeerNetwork(r)
	if err != nil || rtt != 40*time.Millisecond || jitter != 12*time.Millisecond || from != "b:1" {
		t.Errorf("PeerNetwork = %v, %v, %q, %v; want 40ms, 12ms, b:1", rtt, jitter, from, err)
	}
	if _, _, _, err := PeerNetwork(&result.Result{Workloads: []result.Workload{{Name: "wal"}}}); !errors.Is(err, ErrNoNet) {
		t.Errorf("a result without net: %v", err)
	}
}
