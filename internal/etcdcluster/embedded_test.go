package etcdcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/testutil"
)

// startCluster starts an embedded cluster in a temporary directory and
// stops it when the test ends.
func startCluster(t *testing.T, members int) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Start(ctx, Options{Dir: t.TempDir(), Members: members})
	if err != nil {
		t.Fatalf("Start(%d members): %v", members, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// newClient connects to the cluster and closes the client when the test ends.
func newClient(t *testing.T, endpoints []string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("connecting to %v: %v", endpoints, err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func TestEmbeddedSingleMemberPutGet(t *testing.T) {
	c := startCluster(t, 1)
	if n := len(c.Endpoints()); n != 1 {
		t.Fatalf("%d endpoints, want 1", n)
	}
	cli := newClient(t, c.Endpoints())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "k", "v"); err != nil {
		t.Fatalf("put: %v", err)
	}
	resp, err := cli.Get(ctx, "k")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("get k = %v, want v", resp.Kvs)
	}
	if lead, err := c.Leader(ctx); lead != 0 || err != nil {
		t.Errorf("Leader() = %d, %v; want 0", lead, err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestEmbeddedThreeMembersElectLeader: three members, each in a process
// of its own, elect one leader that they and Leader agree on, replicate a
// put, and serve /metrics of their own.
func TestEmbeddedThreeMembersElectLeader(t *testing.T) {
	c := startCluster(t, 3)
	eps := c.Endpoints()
	if len(eps) != 3 || len(c.MetricsURLs()) != 3 {
		t.Fatalf("endpoints %v, metrics %v: want 3 of each", eps, c.MetricsURLs())
	}
	pids := c.PIDs()
	if len(pids) != 3 || pids[0] == pids[1] || pids[1] == pids[2] || pids[0] == pids[2] {
		t.Fatalf("member processes %v: want 3 distinct", pids)
	}
	for _, pid := range pids {
		if pid == os.Getpid() || !memberProcessAlive(t, pid) {
			t.Fatalf("member process %d is not running beside the test (%d)", pid, os.Getpid())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lead, err := c.Leader(ctx)
	if err != nil {
		t.Fatalf("Leader: %v", err)
	}
	cli := newClient(t, eps)
	leaders := map[uint64]bool{}
	for i, ep := range eps {
		st, err := cli.Status(ctx, ep)
		if err != nil {
			t.Fatalf("status of %s: %v", ep, err)
		}
		if st.Leader == 0 {
			t.Errorf("%s knows no leader", ep)
		}
		leaders[st.Leader] = true
		if i == lead && st.Header.MemberId != st.Leader {
			t.Errorf("Leader says member%d, whose id %x is not the leader %x", lead, st.Header.MemberId, st.Leader)
		}
	}
	if len(leaders) != 1 {
		t.Errorf("members disagree on the leader: %v", leaders)
	}

	// A put through one member is read (linearizably) through another.
	if _, err := newClient(t, eps[:1]).Put(ctx, "replicated", "yes"); err != nil {
		t.Fatalf("put through %s: %v", eps[0], err)
	}
	resp, err := newClient(t, eps[2:]).Get(ctx, "replicated")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "yes" {
		t.Fatalf("get through %s: %v, %v; want yes", eps[2], resp, err)
	}

	// Each member has its own registry: exactly the leader says it leads.
	ts := observe.EmbeddedTargets(c.MetricsURLs())
	if len(ts) != 3 {
		t.Fatalf("metrics targets %+v, want 3", ts)
	}
	urls := map[string]bool{}
	for i, tg := range ts {
		if tg.Name != fmt.Sprintf("member%d", i) || !strings.Contains(tg.About, "own process") || urls[tg.URL] {
			t.Errorf("target %d: %+v (urls so far %v)", i, tg, urls)
		}
		urls[tg.URL] = true
		f, err := metrics.Scrape(ctx, nil, tg.URL)
		if err != nil {
			t.Fatalf("scraping %s: %v", tg.Name, err)
		}
		isLeader, err := metrics.ValueOf(f, "etcd_server_is_leader")
		if err != nil {
			t.Fatalf("%s: %v", tg.Name, err)
		}
		if want := map[bool]float64{true: 1, false: 0}[i == lead]; isLeader != want {
			t.Errorf("%s: etcd_server_is_leader %v, want %v (member%d leads)", tg.Name, isLeader, want, lead)
		}
	}

	// Close stops the processes, and again does nothing.
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	waitGone(t, pids)
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := c.Leader(ctx); err == nil {
		t.Error("Leader after Close: no error")
	}
}

// TestEmbeddedThreeMembersOptions: the options reach the member
// processes: a bad one fails with the end of etcd's log, good ones show in
// the members' own metrics and settings.
func TestEmbeddedThreeMembersOptions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Over etcd's 50 s maximum: refused by etcd itself in the member
	// processes (Options.Validate leaves that limit to etcd).
	_, err := Start(ctx, Options{Dir: t.TempDir(), Members: 3, ElectionTimeout: 60 * time.Second})
	if err == nil {
		t.Fatal("an election timeout over etcd's maximum accepted")
	}
	// etcd's own log lines name their member.
	if !strings.Contains(err.Error(), "election-timeout") || !strings.Contains(err.Error(), `etcd log:`) || !strings.Contains(err.Error(), `{"member": "member`) {
		t.Errorf("error %q does not carry etcd's log", err)
	}
	t.Log(err)
}

func TestEmbeddedBadMembers(t *testing.T) {
	c, err := Start(context.Background(), Options{Dir: t.TempDir(), Members: 2})
	if err == nil {
		t.Fatal("2 members accepted, want an error")
	}
	if err := c.Close(); err != nil { // the nil Cluster of a failed start
		t.Errorf("Close after a failed start: %v", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name string
		o    Options
		want string // "" : valid
	}{
		{"defaults", Options{}, ""},
		{"exactly five heartbeats", Options{HeartbeatInterval: 200 * time.Millisecond, ElectionTimeout: time.Second}, ""},
		{"election under five heartbeats", Options{HeartbeatInterval: 100 * time.Millisecond, ElectionTimeout: 300 * time.Millisecond}, "election-timeout 300 ms < 5 x heartbeat-interval 100 ms"},
		{"heartbeat against etcd's default election", Options{HeartbeatInterval: 300 * time.Millisecond}, "election-timeout 1000 ms (etcd's default) < 5 x heartbeat-interval 300 ms"},
		{"two members", Options{Members: 2}, "2 members"},
		{"members apart", Options{Members: 3, PeerRTT: 50 * time.Millisecond, PeerJitter: 5 * time.Millisecond}, ""},
		{"one member apart", Options{PeerRTT: 50 * time.Millisecond}, "give 3 members"},
		{"a negative round trip", Options{Members: 3, PeerRTT: -time.Millisecond}, "want positive durations"},
		{"jitter over the round trip", Options{Members: 3, PeerRTT: time.Millisecond, PeerJitter: 2 * time.Millisecond}, "at most the round trip"},
		{"links", Options{Members: 3, Links: true}, ""},
		{"links of one member", Options{Links: true}, "need 3 members"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v, want nil", err)
			case tc.want != "" && (!errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate: %v, want ErrBadOptions saying %q", err, tc.want)
			}
		})
	}
}

// TestCloseWithSilentClient: a client that connects to the client port
// and never sends a request makes etcd's own Close wait forever (its
// connection multiplexer waits for the first bytes of every connection).
// Cluster.Close must still return, with the member's server stopped.
func TestCloseWithSilentClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Start(ctx, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	c.stopGrace = time.Second
	conn, err := net.Dial("tcp", strings.TrimPrefix(c.Endpoints()[0], "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// etcd accepts connections in the order they came: once a request on
	// a later one is answered, the silent one has been accepted and
	// waits in etcd's connection multiplexer (Close right after the dial
	// could find it still in the kernel's queue, where it holds nothing).
	if _, err := metrics.Scrape(ctx, nil, c.MetricsURLs()[0]); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("Close still waiting a minute after it was called")
	}
	if err == nil || !strings.Contains(err.Error(), "did not stop within") {
		t.Errorf("Close: %v, want an error saying member0 did not stop in time", err)
	}
	select {
	case <-c.members[0].Server.StopNotify():
	default:
		t.Error("member0's server is still running after Close")
	}
}

// TestEmbeddedOwnProcess: one member with OwnProcess runs in a child
// process (PIDs names it), serves clients and its own /metrics, and is
// gone after Close.
func TestEmbeddedOwnProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Start(ctx, Options{Dir: t.TempDir(), OwnProcess: true})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	pids := c.PIDs()
	if len(pids) != 1 || pids[0] == os.Getpid() || !memberProcessAlive(t, pids[0]) {
		t.Fatalf("member pids %v (this process %d): want one child process", pids, os.Getpid())
	}
	if len(c.members) != 0 {
		t.Errorf("%d members run in this process, want none", len(c.members))
	}
	cli := newClient(t, c.Endpoints())
	if _, err := cli.Put(ctx, "k", "v"); err != nil {
		t.Fatalf("put: %v", err)
	}
	if _, err := metrics.Scrape(ctx, nil, c.MetricsURLs()[0]); err != nil {
		t.Errorf("member0's /metrics: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	testutil.WaitFor(t, 10*time.Second, fmt.Sprintf("member process %d to end after Close", pids[0]), func() bool { return !memberProcessAlive(t, pids[0]) })
}

func TestIsAddrInUse(t *testing.T) {
	if !isAddrInUse(fmt.Errorf("listen: %w", syscall.EADDRINUSE)) || !isAddrInUse(errors.New("listen tcp 127.0.0.1:5: bind: address already in use")) || isAddrInUse(errors.New("permission denied")) {
		t.Error("isAddrInUse misjudges")
	}
}

// A member started with UnsafeNoFsync (capacity's CPU side) takes puts
// without fsyncing its WAL for them: etcd's own WAL fsync histogram does
// not grow (the syncs of the WAL's creation come before the option
// applies), while a member without it counts a sync per put.
func TestEmbeddedUnsafeNoFsync(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, noFsync := range []bool{true, false} {
		c, err := Start(ctx, Options{Dir: t.TempDir(), UnsafeNoFsync: noFsync})
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		syncs := func() float64 {
			f, err := metrics.Scrape(ctx, nil, c.MetricsURLs()[0])
			if err != nil {
				t.Fatal(err)
			}
			h, err := metrics.HistogramOf(f, "etcd_disk_wal_fsync_duration_seconds")
			if err != nil {
				t.Fatal(err)
			}
			return h.Count
		}
		before := syncs()
		cli := newClient(t, c.Endpoints())
		for i := range 20 {
			if _, err := cli.Put(ctx, fmt.Sprintf("/k%d", i), "v"); err != nil {
				t.Fatal(err)
			}
		}
		if n := syncs() - before; noFsync && n != 0 || !noFsync && n < 20 {
			t.Errorf("UnsafeNoFsync %v: %v WAL fsyncs for 20 puts", noFsync, n)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// Members PeerRTT apart: a put waits for a quorum, so for a round trip
// from the leader to a follower; etcd's own prober sees the round trip
// once it has observed one.
func TestEmbeddedMembersApart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const rtt = 40 * time.Millisecond
	c, err := Start(ctx, Options{Dir: t.TempDir(), Members: 3, PeerRTT: rtt})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if len(c.links) != 3 {
		t.Fatalf("%d peer links, want 3", len(c.links))
	}
	leader, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cli := newClient(t, c.Endpoints()[leader:leader+1])
	var took []time.Duration
	for i := range 10 {
		t0 := time.Now()
		if _, err := cli.Put(ctx, fmt.Sprintf("/apart/%d", i), "v"); err != nil {
			t.Fatal(err)
		}
		took = append(took, time.Since(t0))
	}
	for _, d := range took {
		if d < rtt {
			t.Errorf("a put took %v with members %v apart: want at least a round trip (%v)", d, rtt, took)
			break
		}
	}
	// etcd observes the round trip 5 s after a peer becomes active, then
	// every 30 s.
	var seen float64
	if !testutil.Poll(20*time.Second, func() bool {
		fams, err := metrics.Scrape(ctx, nil, c.MetricsURLs()[leader])
		if err != nil {
			return false
		}
		h, err := metrics.HistogramOf(fams, observe.PeerRTTMetric)
		seen = metrics.Quantile(0.5, h)
		return err == nil && h.Count > 0
	}) {
		t.Fatalf("the leader's prober observed no round trip")
	}
	if seen < rtt.Seconds()*0.8 || seen > 4*rtt.Seconds() {
		t.Errorf("etcd's prober p50 %.3fs, want about %v (its buckets double)", seen, rtt)
	}
}

// One member far from the others (MemberRTT): the IDs the links tell
// senders by are the members' own, a leader with a near member commits
// without waiting for the far one, and a far leader waits its round trip
// for every put.
func TestEmbeddedMemberFar(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const far = 60 * time.Millisecond
	c, err := Start(ctx, Options{Dir: t.TempDir(), Members: 3, MemberRTT: []time.Duration{0, 0, far}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var advertised []string
	for _, l := range c.links {
		advertised = append(advertised, l.Addr())
	}
	ids, err := memberIDs(advertised)
	if err != nil {
		t.Fatal(err)
	}
	cli := newClient(t, c.Endpoints())
	ml, err := cli.MemberList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]uint64{}
	for _, m := range ml.Members {
		byName[m.Name] = m.ID
	}
	for id, i := range ids {
		if got := fmt.Sprintf("%x", byName[memberName(i)]); got != id {
			t.Errorf("%s: computed ID %s, the member's own %s", memberName(i), id, got)
		}
	}
	// puts is the median of 9 puts at member i, made the leader.
	puts := func(i int) time.Duration {
		t.Helper()
		leader, err := c.Leader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if leader != i {
			lc := newClient(t, c.Endpoints()[leader:leader+1])
			if _, err := lc.MoveLeader(ctx, byName[memberName(i)]); err != nil {
				t.Fatalf("moving the leader to %s: %v", memberName(i), err)
			}
		}
		mc := newClient(t, c.Endpoints()[i:i+1])
		var took []time.Duration
		for k := range 9 {
			t0 := time.Now()
			if _, err := mc.Put(ctx, fmt.Sprintf("/far/%d/%d", i, k), "v"); err != nil {
				t.Fatal(err)
			}
			took = append(took, time.Since(t0))
		}
		slices.Sort(took)
		return took[len(took)/2]
	}
	if d := puts(0); d >= far/2 {
		t.Errorf("a put at a near leader took %v at the median: want under %v (its near follower is its quorum)", d, far/2)
	}
	if d := puts(2); d < far {
		t.Errorf("a put at the far leader took %v at the median: want at least its round trip %v", d, far)
	}
}

// Killing the leader: another member leads within the election timeout
// and its randomized extra (etcd's [1, 2) x --election-timeout) plus the
// vote, and Close does not count the killed member a failure.
func TestKillLeader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Start(ctx, Options{Dir: t.TempDir(), Members: 3, HeartbeatInterval: 50 * time.Millisecond, ElectionTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.KillLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a new leader %v after killing member%d", f.Took, f.Killed)
	if f.Took < 400*time.Millisecond || f.Took > 5*time.Second {
		t.Errorf("a new leader %v after the kill: want about the 500ms election timeout to twice it", f.Took)
	}
	if lead, err := c.Leader(ctx); err == nil {
		t.Errorf("Leader after a kill: %d, want the killed member's exit named", lead)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close after a kill: %v", err)
	}
}
