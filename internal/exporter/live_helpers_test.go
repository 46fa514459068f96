package exporter

// Real parts for the end-to-end tests: a Debian etcd-server process, this
// package's exporter serving on a free 127.0.0.1 port, and a Prometheus
// server (Debian's prometheus package) scraping it every second with a
// temporary config. Each skips the test when its program is missing.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"etcdbench/internal/testutil"
)

// freePort returns a TCP port free on 127.0.0.1 now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// etcdProc is an etcd server process.
type etcdProc struct {
	Name, DataDir, Endpoint string
	bin, log, peer          string
	cmd                     *exec.Cmd
	done                    chan struct{}
}

// startEtcd starts etcd named name with its data in a new temporary
// directory; it is stopped when t ends. It skips t without etcd.
func startEtcd(t *testing.T, name string) *etcdProc {
	t.Helper()
	return startEtcdIn(t, name, "")
}

// startEtcdIn starts etcd with its data dir in dataDir ("": a new
// temporary directory).
func startEtcdIn(t *testing.T, name, dataDir string) *etcdProc {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		t.Skip("etcd is not on PATH (Debian: apt-get install etcd-server): skipping the end-to-end test")
	}
	dir := t.TempDir()
	if dataDir == "" {
		dataDir = filepath.Join(dir, "data")
	}
	e := &etcdProc{Name: name, DataDir: dataDir, bin: bin, log: filepath.Join(dir, "etcd.log")}
	e.Endpoint = fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	e.peer = fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	t.Cleanup(e.stop)
	e.start(t)
	return e
}

// start runs etcd (again, on the same data dir and ports) and waits
// until it answers.
func (e *etcdProc) start(t *testing.T) {
	t.Helper()
	logf, err := os.OpenFile(e.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	e.cmd = exec.Command(e.bin, "--name", e.Name, "--data-dir", e.DataDir,
		"--listen-client-urls", e.Endpoint, "--advertise-client-urls", e.Endpoint,
		"--listen-peer-urls", e.peer, "--initial-advertise-peer-urls", e.peer,
		"--initial-cluster", e.Name+"="+e.peer, "--initial-cluster-state", "new",
		// A snapshot every 1,000 entries: the loads make a few, whose
		// syncs the exporter counts under file="snap".
		"--snapshot-count", "1000")
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
	cli := e.client(t)
	defer cli.Close()
	if testutil.Poll(30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err = cli.Get(ctx, "probe")
		select {
		case <-done:
			t.Fatalf("etcd exited: %v\n%s", e.cmd.ProcessState, tail(e.log))
		default:
		}
		return err == nil
	}) {
		return
	}
	t.Fatalf("etcd did not answer in 30 s: %v\n%s", err, tail(e.log))
}

// PID is the running process's id.
func (e *etcdProc) PID() int { return e.cmd.Process.Pid }

// stop ends etcd with SIGTERM (SIGKILL after 10 s) and waits for it.
func (e *etcdProc) stop() {
	if e.cmd == nil || e.cmd.Process == nil {
		return
	}
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

func (e *etcdProc) client(t *testing.T) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{e.Endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	return cli
}

// put writes n keys from clients concurrent clients.
func (e *etcdProc) put(t *testing.T, n, clients int) {
	t.Helper()
	cli := e.client(t)
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

// walFsyncs is etcd's own count of WAL fsyncs (etcd_disk_wal_fsync_duration_seconds_count).
func (e *etcdProc) walFsyncs(t *testing.T) float64 {
	t.Helper()
	resp, err := http.Get(e.Endpoint + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "etcd_disk_wal_fsync_duration_seconds_count "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatal("etcd's /metrics has no etcd_disk_wal_fsync_duration_seconds_count")
	return 0
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// promServer is a Prometheus server scraping one target every second.
type promServer struct {
	URL string
	log string
}

// startPrometheus starts Prometheus scraping target (host:port) every
// second as job etcdbench, with the extra flags given, and stops it when
// t ends. It skips t without prometheus.
func startPrometheus(t *testing.T, target string, flags ...string) *promServer {
	t.Helper()
	return startPrometheusWith(t, fmt.Sprintf("  - job_name: etcdbench\n    static_configs:\n      - targets: [%q]\n", target), flags...)
}

// startPrometheusWith starts Prometheus with scrapeConfigs (the YAML list
// items under scrape_configs, indented by two spaces), scraping every
// second.
func startPrometheusWith(t *testing.T, scrapeConfigs string, flags ...string) *promServer {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus is not on PATH (Debian: apt-get install prometheus): skipping the test with a real Prometheus")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n" + scrapeConfigs
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &promServer{log: filepath.Join(dir, "prometheus.log")}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p.URL = "http://" + addr
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	args := append([]string{"--config.file", cfg, "--storage.tsdb.path", filepath.Join(dir, "tsdb"), "--web.listen-address", addr}, flags...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	if testutil.Poll(30*time.Second, func() bool {
		var resp *http.Response
		if resp, err = http.Get(p.URL + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		select {
		case <-done:
			t.Fatalf("prometheus exited\n%s", tail(p.log))
		default:
		}
		return false
	}) {
		return p
	}
	t.Fatalf("prometheus not ready in 30 s: %v\n%s", err, tail(p.log))
	return nil
}

// query evaluates expr at time at and returns the values of the result
// vector (empty when it has none).
func (p *promServer) query(t *testing.T, expr string, at time.Time) []float64 {
	t.Helper()
	q := url.Values{"query": {expr}, "time": {strconv.FormatFloat(float64(at.UnixNano())/1e9, 'f', 3, 64)}}
	resp, err := http.Get(p.URL + "/api/v1/query?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status, Error string
		Data          struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("query %s: %v", expr, err)
	}
	if r.Status != "success" {
		t.Fatalf("query %s: %s", expr, r.Error)
	}
	var out []float64
	for _, s := range r.Data.Result {
		str, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			t.Fatalf("query %s: value %v", expr, s.Value[1])
		}
		out = append(out, v)
	}
	return out
}

// waitScrapes waits until Prometheus has scraped the exporter n times
// after now (the timestamps of its up series).
func (p *promServer) waitScrapes(t *testing.T, n int) {
	t.Helper()
	after := float64(time.Now().UnixNano()) / 1e9
	for i := range n {
		testutil.WaitFor(t, 30*time.Second, fmt.Sprintf("scrape %d of %d of the exporter", i+1, n), func() bool {
			v := p.query(t, `timestamp(up{job="etcdbench"})`, time.Now())
			if len(v) == 0 || v[0] <= after {
				return false
			}
			after = v[0]
			return true
		})
	}
}

// waitFor queries expr until its first value satisfies ok, for at most d.
func (p *promServer) waitFor(t *testing.T, what, expr string, ok func(float64) bool, d time.Duration) float64 {
	t.Helper()
	var last []float64
	if testutil.Poll(d, func() bool { last = p.query(t, expr, time.Now()); return len(last) > 0 && ok(last[0]) }) {
		return last[0]
	}
	t.Fatalf("%s: %s was %v for %v\n%s", what, expr, last, d, tail(p.log))
	return 0
}
