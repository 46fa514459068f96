// Package hostetcd runs Debian's etcd (etcd-server) as a process of its
// own for tests: one member (or a cluster of several, StartCluster) on
// free 127.0.0.1 ports with its data in a temporary directory, as a
// static pod's etcd runs on a node, with what the tests do to it (puts,
// its own WAL fsync count, a restart). A test without etcd on PATH is
// skipped.
package hostetcd

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/peernet"
	"etcdbench/internal/testutil"
)

// Etcd is one etcd server process.
type Etcd struct {
	Name, DataDir, Endpoint string
	bin, log, peer          string
	// advertised is the peer URL the others reach it at ("": peer).
	advertised string
	args       []string
	// initial is --initial-cluster, state --initial-cluster-state.
	initial, state string
	// learner: a learner rejects linearizable reads, so waiting for it
	// reads serializably.
	learner bool
	cmd     *exec.Cmd
	done    chan struct{}
}

// FreePort returns a TCP port free on 127.0.0.1 now.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Start starts etcd named name with its data in dataDir ("": a new
// temporary directory) and its further flags args, and waits until it
// answers; it is stopped when t ends.
func Start(t *testing.T, name, dataDir string, args ...string) *Etcd {
	t.Helper()
	e := newEtcd(t, name, dataDir, args)
	e.initial = e.Name + "=" + e.peer
	e.Restart(t)
	return e
}

// StartCluster starts a cluster of one member per data dir (etcd0,
// etcd1...; "": a new temporary directory), each a process of its own
// with its further flags args, and waits until every one answers; they
// are stopped when t ends.
func StartCluster(t *testing.T, dataDirs []string, args ...string) []*Etcd {
	t.Helper()
	return StartClusterApart(t, dataDirs, 0, args...)
}

// StartClusterApart is StartCluster with every two members rtt apart
// (0: none): each member's peers reach it through a peernet link of this
// process that holds every byte for rtt/2 each way (closed when t ends).
func StartClusterApart(t *testing.T, dataDirs []string, rtt time.Duration, args ...string) []*Etcd {
	t.Helper()
	es := make([]*Etcd, len(dataDirs))
	var initial []string
	for i := range es {
		es[i] = newEtcd(t, fmt.Sprintf("etcd%d", i), dataDirs[i], args)
		if rtt > 0 {
			l, err := peernet.Listen(strings.TrimPrefix(es[i].peer, "http://"), rtt/2, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			es[i].advertised = "http://" + l.Addr()
		}
		initial = append(initial, es[i].Name+"="+cmp.Or(es[i].advertised, es[i].peer))
	}
	for _, e := range es {
		e.initial = strings.Join(initial, ",")
		e.spawn(t)
	}
	for _, e := range es {
		e.wait(t)
	}
	return es
}

// JoinLearner adds a member to the cluster of es as a learner (etcd0...
// etcdN by place), starts it with its data in dataDir ("": a new
// temporary directory) and its further flags args, and waits until it
// answers; it is stopped when t ends.
func JoinLearner(t *testing.T, es []*Etcd, dataDir string, args ...string) *Etcd {
	t.Helper()
	e := newEtcd(t, fmt.Sprintf("etcd%d", len(es)), dataDir, args)
	e.state, e.learner = "existing", true
	cli := es[0].Client(t)
	defer cli.Close()
	// etcd refuses a new member until every member has been connected
	// for its health interval (5 s, "unhealthy cluster").
	var err error
	if !testutil.Poll(30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = cli.MemberAddAsLearner(ctx, []string{e.peer})
		return err == nil
	}) {
		t.Fatalf("adding a learner: %v", err)
	}
	var initial []string
	for _, m := range append(append([]*Etcd(nil), es...), e) {
		initial = append(initial, m.Name+"="+m.peer)
	}
	e.initial = strings.Join(initial, ",")
	e.spawn(t)
	e.wait(t)
	return e
}

func newEtcd(t *testing.T, name, dataDir string, args []string) *Etcd {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		t.Skip("etcd is not on PATH (Debian: apt-get install etcd-server): skipping the test with a real etcd")
	}
	dir := t.TempDir()
	if dataDir == "" {
		dataDir = filepath.Join(dir, "data")
	}
	e := &Etcd{Name: name, DataDir: dataDir, bin: bin, log: filepath.Join(dir, "etcd.log"), args: args, state: "new"}
	e.Endpoint = fmt.Sprintf("http://127.0.0.1:%d", FreePort(t))
	e.peer = fmt.Sprintf("http://127.0.0.1:%d", FreePort(t))
	t.Cleanup(e.Stop)
	return e
}

// Restart runs etcd (again, on the same data dir and ports) and waits
// until it answers.
func (e *Etcd) Restart(t *testing.T) {
	t.Helper()
	e.spawn(t)
	e.wait(t)
}

// spawn runs the etcd process.
func (e *Etcd) spawn(t *testing.T) {
	t.Helper()
	logf, err := os.OpenFile(e.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	e.cmd = exec.Command(e.bin, append([]string{"--name", e.Name, "--data-dir", e.DataDir,
		"--listen-client-urls", e.Endpoint, "--advertise-client-urls", e.Endpoint,
		"--listen-peer-urls", e.peer, "--initial-advertise-peer-urls", cmp.Or(e.advertised, e.peer),
		"--initial-cluster", e.initial, "--initial-cluster-state", e.state}, e.args...)...)
	e.cmd.Stdout, e.cmd.Stderr = logf, logf
	for _, kv := range os.Environ() { // etcd reads ETCD_* as flags
		if !strings.HasPrefix(kv, "ETCD_") {
			e.cmd.Env = append(e.cmd.Env, kv)
		}
	}
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	e.done = done
	go func() { _ = e.cmd.Wait(); close(done) }()
}

// wait waits until etcd answers a read.
func (e *Etcd) wait(t *testing.T) {
	t.Helper()
	cli := e.Client(t)
	defer cli.Close()
	var err error
	if testutil.Poll(30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if e.learner {
			_, err = cli.Get(ctx, "probe", clientv3.WithSerializable())
		} else {
			_, err = cli.Get(ctx, "probe")
		}
		select {
		case <-e.done:
			t.Fatalf("etcd exited: %v\n%s", e.cmd.ProcessState, e.LogTail())
		default:
		}
		return err == nil
	}) {
		return
	}
	t.Fatalf("etcd did not answer in 30 s: %v\n%s", err, e.LogTail())
}

// PID is the running process's id.
func (e *Etcd) PID() int { return e.cmd.Process.Pid }

// Stop ends etcd with SIGTERM (SIGKILL after 10 s) and waits for it.
func (e *Etcd) Stop() {
	if e.cmd == nil || e.cmd.Process == nil {
		return
	}
	select {
	case <-e.done:
		return
	default:
	}
	// A member a test froze (SIGSTOP) must run again to end.
	_ = e.cmd.Process.Signal(syscall.SIGCONT)
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.done:
	case <-time.After(10 * time.Second):
		_ = e.cmd.Process.Kill()
		<-e.done
	}
}

// Client is a client of the member; the caller closes it.
func (e *Etcd) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{e.Endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	return cli
}

// Put writes n keys of 256-byte values from clients concurrent clients
// (1: one at a time, each a WAL fdatasync).
func (e *Etcd) Put(t testing.TB, n, clients int) {
	t.Helper()
	cli := e.Client(t)
	defer cli.Close()
	errs := make(chan error, clients)
	val := strings.Repeat("v", 256)
	for c := range clients {
		go func() {
			var err error
			for i := c; i < n && err == nil; i += clients {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err = cli.Put(ctx, fmt.Sprintf("/k/%d", i), val)
				cancel()
			}
			errs <- err
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Fatalf("put: %v", err)
		}
	}
}

// WALFsyncs is etcd's own count of WAL fsyncs
// (etcd_disk_wal_fsync_duration_seconds_count).
func (e *Etcd) WALFsyncs(t testing.TB) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, err := metrics.Scrape(ctx, &http.Client{Transport: metrics.NoKeepAlive()}, e.Endpoint+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	h, err := metrics.HistogramOf(f, "etcd_disk_wal_fsync_duration_seconds")
	if err != nil {
		t.Fatal(err)
	}
	return h.Count
}

// LogTail is the end of etcd's log, for a failure's message.
func (e *Etcd) LogTail() string { return Tail(e.log) }

// Tail is the last 3,000 bytes of the file at path.
func Tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}
