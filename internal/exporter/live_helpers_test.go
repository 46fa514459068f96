package exporter

// Real parts for the end-to-end tests: a Debian etcd-server process, this
// package's exporter serving on a free 127.0.0.1 port, and a Prometheus
// server (Debian's prometheus package) scraping it every second with a
// temporary config. Each skips the test when its program is missing.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/testutil"
	"etcdbench/internal/testutil/hostetcd"
)

// freePort returns a TCP port free on 127.0.0.1 now.
func freePort(t *testing.T) int { return hostetcd.FreePort(t) }

// startEtcd starts Debian's etcd named name with its data in a new
// temporary directory; it is stopped when t ends. It skips t without
// etcd.
func startEtcd(t *testing.T, name string) *hostetcd.Etcd {
	t.Helper()
	return startEtcdIn(t, name, "")
}

// startEtcdIn starts etcd with its data dir in dataDir ("": a new
// temporary directory). A snapshot every 1,000 entries: the loads make a
// few, whose syncs the exporter counts under file="snap".
func startEtcdIn(t *testing.T, name, dataDir string) *hostetcd.Etcd {
	t.Helper()
	return hostetcd.Start(t, name, dataDir, "--snapshot-count", "1000")
}

func tail(path string) string { return hostetcd.Tail(path) }

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
