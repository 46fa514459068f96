package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/testutil"
)

// get returns the body of url, or "" when it does not answer.
func get(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestExporterBadInput: each mistake ends with one line and its
// documented exit code: a --pid that is not etcd, a malformed --listen
// or an --etcd-metrics-url that is not plain HTTP is a usage error (2); a port in use or no privilege to load BPF
// programs is 3.
func TestExporterBadInput(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the exporter probes the BPF tracer before it listens")
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name string
		o    runOpts
		args []string
		code int
		want string
	}{
		{"pid not etcd", runOpts{}, []string{"--pid", strconv.Itoa(os.Getpid())}, exitUsage, "not an etcd process"},
		{"pid missing", runOpts{}, []string{"--pid", "999999999"}, exitUsage, "does not exist"},
		{"malformed listen", runOpts{}, []string{"--listen", "nonsense"}, exitUsage, "--listen"},
		{"bad interval", runOpts{}, []string{"--interval", "1ms"}, exitUsage, "--interval"},
		{"a report file", runOpts{}, []string{"--textfile", os.TempDir()}, exitUsage, "does not apply"},
		{"web config missing", runOpts{}, []string{"--web.config.file", "/nonexistent/web.yml"}, exitUsage, "--web.config.file"},
		{"metrics URL not HTTP", runOpts{}, []string{"--etcd-metrics-url", "https://127.0.0.1:2379/metrics"}, exitUsage, "--etcd-metrics-url"},
		{"metrics URL twice", runOpts{}, []string{"--etcd-metrics-url", "a=http://127.0.0.1:1/metrics", "--etcd-metrics-url", "a=http://127.0.0.1:2/metrics"}, exitUsage, "has a URL already"},
		{"port in use", runOpts{}, []string{"--listen", busy.Addr().String()}, exitRuntime, "in use"},
		{"no privilege", runOpts{dir: os.TempDir(), cred: &syscall.Credential{Uid: 65534, Gid: 65534}}, []string{"--listen", "127.0.0.1:0"}, exitRuntime, "CAP_BPF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runBin(t, tt.o, append([]string{"exporter"}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tt.code, tt.want)
			}
			checkOneErrorLine(t, r.stderr)
		})
	}
}

// TestExporterWaitsForEtcd: with no etcd to trace (none has the data dir
// asked for) the exporter serves, says it waits on its status page and
// in etcdbench_waiting_for_etcd, and ends on SIGTERM with 143 and one
// line.
func TestExporterWaitsForEtcd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the exporter probes the BPF tracer before it listens")
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p := start(t, runOpts{}, "exporter", "--listen", addr, "--data-dir", t.TempDir(), "--interval", "200ms")
	testutil.WaitFor(t, 30*time.Second, "the status page", func() bool {
		return p.exited() || strings.Contains(get("http://"+addr+"/"), "No etcd process found")
	})
	if p.exited() {
		t.Fatalf("the exporter exited: %+v", p.res)
	}
	if m := get("http://" + addr + "/metrics"); !strings.Contains(m, "etcdbench_waiting_for_etcd 1") || !strings.Contains(m, "process_cpu_seconds_total") {
		t.Errorf("/metrics does not say it waits, or lacks its own CPU:\n%s", m)
	}
	p.signal(t, syscall.SIGTERM)
	r := p.wait(t)
	if r.code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d after SIGTERM, want 143; stderr:\n%s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if last := lines[len(lines)-1]; last != "etcdbench: exporter stopped; every tracer detached" {
		t.Errorf("last line %q", last)
	}
}

// TestExporterWebConfig: with --web.config.file, the exporter serves
// /metrics over TLS to the basic auth user only (a real Prometheus
// scraping it so: internal/exporter TestServeTLSBasicAuth).
func TestExporterWebConfig(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the exporter probes the BPF tracer before it listens")
	}
	w := testutil.NewWebTLS(t, "prometheus", "test-password")
	pem, err := os.ReadFile(w.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p := start(t, runOpts{}, "exporter", "--listen", addr, "--web.config.file", w.Config, "--data-dir", t.TempDir(), "--interval", "200ms")
	status := func(user, pass string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/metrics", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	testutil.WaitFor(t, 30*time.Second, "the metrics over TLS", func() bool {
		code, body := status(w.User, w.Password)
		return p.exited() || code == http.StatusOK && strings.Contains(body, "etcdbench_waiting_for_etcd 1")
	})
	if p.exited() {
		t.Fatalf("the exporter exited: %+v", p.res)
	}
	if code, body := status("", ""); code != http.StatusUnauthorized {
		t.Errorf("without credentials: status %d, want 401; body %.200s", code, body)
	}
	if body := get("http://" + addr + "/metrics"); strings.Contains(body, "etcdbench_") {
		t.Errorf("plain HTTP served the metrics:\n%.200s", body)
	}
	p.signal(t, syscall.SIGTERM)
	if r := p.wait(t); r.code != 128+int(syscall.SIGTERM) || !strings.Contains(r.stderr, "TLS, basic auth") {
		t.Errorf("exit %d, want 143 and the log line saying TLS; stderr:\n%s", r.code, r.stderr)
	}
}

// TestExporterCapabilities runs the exporter as root with only the
// capabilities deploy/kubernetes/exporter gives it, against a real etcd
// running as root with every capability: without CAP_SYS_PTRACE the
// kernel hides etcd's open files (/proc/PID/fd), so the exporter says
// so and the member is down, instead of tracing it blind; with it, the
// member is traced.
func TestExporterCapabilities(t *testing.T) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and setpriv (util-linux) to drop capabilities")
	}
	srv := startEtcdServer(t, etcdServerOpts{})
	for _, tt := range []struct {
		caps string
		up   string
	}{
		{"-all,+bpf,+perfmon,+sys_resource", "0"},
		{"-all,+bpf,+perfmon,+sys_resource,+sys_ptrace", "1"},
	} {
		t.Run(tt.caps, func(t *testing.T) {
			addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, setpriv, "--bounding-set="+tt.caps, binPath, "exporter", "--listen", addr, "--data-dir", srv.DataDir, "--interval", "200ms")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("etcdbench_target_up{data_dir=%q,member=\"m0\"} %s", srv.DataDir, tt.up)
			testutil.WaitFor(t, 30*time.Second, want, func() bool { return strings.Contains(get("http://"+addr+"/metrics"), want) })
			m := get("http://" + addr + "/metrics")
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait() // stderr is complete from here
			if tt.up == "0" {
				if !strings.Contains(stderr.String(), "CAP_SYS_PTRACE") {
					t.Errorf("the exporter did not name the missing capability:\n%s", stderr.String())
				}
				if !strings.Contains(m, "etcdbench_waiting_for_etcd 0") || !strings.Contains(m, "etcdbench_trace_failures_total{") {
					t.Errorf("an etcd that cannot be traced: want waiting_for_etcd 0 and a failure counted:\n%s", m)
				}
			}
		})
	}
}
