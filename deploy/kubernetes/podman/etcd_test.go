package podman

import (
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
)

// hostEtcd is Debian's etcd running on the host as a process of its own,
// with its data in a temporary directory: what a static pod's etcd is to
// the exporter's pod.
type hostEtcd struct {
	DataDir, Endpoint, log string
	cmd                    *exec.Cmd
	done                   chan struct{}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startEtcd starts etcd and waits until it answers; it is stopped when t
// ends. It skips t without etcd.
func startEtcd(t *testing.T) *hostEtcd {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		t.Skip("etcd is not on PATH (Debian: apt-get install etcd-server): no etcd for the exporter to trace")
	}
	dir := t.TempDir()
	e := &hostEtcd{DataDir: filepath.Join(dir, "data"), log: filepath.Join(dir, "etcd.log"), done: make(chan struct{})}
	e.Endpoint = fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	peer := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	logf, err := os.Create(e.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	e.cmd = exec.Command(bin, "--name", "podman-test", "--data-dir", e.DataDir,
		"--listen-client-urls", e.Endpoint, "--advertise-client-urls", e.Endpoint,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "podman-test="+peer, "--initial-cluster-state", "new")
	e.cmd.Stdout, e.cmd.Stderr = logf, logf
	for _, kv := range os.Environ() { // etcd reads ETCD_* as flags
		if !strings.HasPrefix(kv, "ETCD_") {
			e.cmd.Env = append(e.cmd.Env, kv)
		}
	}
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = e.cmd.Wait(); close(e.done) }()
	t.Cleanup(e.stop)
	cli := e.client(t)
	defer cli.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := cli.Get(ctx, "probe")
		cancel()
		if err == nil {
			return e
		}
		select {
		case <-e.done:
			b, _ := os.ReadFile(e.log)
			t.Fatalf("etcd exited: %v\n%s", e.cmd.ProcessState, b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd did not answer in 30 s: %v", err)
		}
	}
}

// stop ends etcd with SIGTERM (SIGKILL after 10 s) and waits for it.
func (e *hostEtcd) stop() {
	select {
	case <-e.done:
		return
	default:
	}
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.done:
	case <-time.After(10 * time.Second):
		_ = e.cmd.Process.Kill()
		<-e.done
	}
}

func (e *hostEtcd) client(t *testing.T) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{e.Endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	return cli
}

// put writes n keys, one at a time: each a WAL fdatasync.
func (e *hostEtcd) put(t *testing.T, n int) {
	t.Helper()
	cli := e.client(t)
	defer cli.Close()
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := cli.Put(ctx, fmt.Sprintf("/k/%d", i), strings.Repeat("v", 256))
		cancel()
		if err != nil {
			t.Fatalf("put: %v", err)
		}
	}
}

// walFsyncs is etcd's own count of WAL syncs.
func (e *hostEtcd) walFsyncs(t *testing.T) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, err := metrics.Scrape(ctx, &http.Client{Transport: metrics.NoKeepAlive()}, e.Endpoint+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	v, ok := value(f, "etcd_disk_wal_fsync_duration_seconds", nil)
	if !ok {
		t.Fatal("etcd's /metrics has no etcd_disk_wal_fsync_duration_seconds")
	}
	return v
}

// value sums the samples of family name whose labels include want: a
// counter's or gauge's value, a histogram's count.
func value(f metrics.Families, name string, want map[string]string) (float64, bool) {
	fam, ok := f[name]
	if !ok {
		return 0, false
	}
	var sum float64
	found := false
	for _, m := range fam.GetMetric() {
		labels := labelsOf(m)
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum, found
}
