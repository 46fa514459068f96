package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/netcheck"
	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
)

// TestNet runs the listener and a check against it as two processes, as
// on two nodes: the check passes loopback's round trip, names the
// timeouts, and the listener reports what it served when stopped; then
// every bad input is one line with its exit code.
func TestNet(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	l := start(t, runOpts{env: []string{netcheck.TokenEnv + "=secret"}}, "net", "--listen", addr, "--for", "2m")
	if !testutil.Poll(10*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}) {
		t.Fatalf("the listener did not listen: %s", l.stderr.String())
	}
	res := runBin(t, runOpts{}, "net", "--peers", addr, "--token", "secret", "--stream-for", "500ms", "-o", "json")
	if res.code != exitOK {
		t.Fatalf("net --peers: exit %d\n%s", res.code, res.stderr)
	}
	var r result.Result
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil || len(r.Workloads) != 1 {
		t.Fatalf("result: %v\n%s", err, res.stdout)
	}
	w := r.Workloads[0]
	figs := map[string]float64{}
	for _, f := range w.Figures {
		figs[f.Name] = f.Value
	}
	if figs["rtt_p99"] <= 0 || figs["rtt_p99"] >= 0.05 || figs["heartbeat_interval"] != 0.1 || figs["election_timeout"] != 1 || figs["stream_bytes_per_sec"] <= 0 {
		t.Errorf("figures %v: want a round trip under 50 ms, etcd's default timeouts, a stream", figs)
	}
	if w.Stop.Outcome != "pass" {
		t.Errorf("stop %+v: want decided", w.Stop)
	}
	// The check's result puts embedded members as far apart.
	saved := filepath.Join(t.TempDir(), "net.json")
	if err := os.WriteFile(saved, []byte(res.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, runOpts{}, "etcd", "put", "--dir", t.TempDir(), "--members", "3", "--peer-rtt-from", saved, "--total", "20", "--no-progress"); r.code != exitOK && r.code != exitFail {
		t.Errorf("etcd put --peer-rtt-from: exit %d\n%s", r.code, r.stderr)
	}
	notNet := filepath.Join(t.TempDir(), "other.json")
	if err := os.WriteFile(notNet, []byte(`{"schema":"`+result.SchemaID+`","workloads":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, runOpts{}, "etcd", "put", "--dir", t.TempDir(), "--members", "3", "--peer-rtt-from", notNet); r.code != exitUsage || !strings.Contains(r.stderr, "no `etcdbench net` check") {
		t.Errorf("--peer-rtt-from a result without net: exit %d, %s", r.code, r.stderr)
	}

	closed := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"wrong token", []string{"net", "--peers", addr, "--token", "guess"}, exitUsage, "refused the token"},
		{"closed port", []string{"net", "--peers", closed, "--token", "secret"}, exitRuntime, "cannot reach"},
		{"port in use", []string{"net", "--listen", addr, "--token", "secret"}, exitUsage, "in use"},
		{"every interface", []string{"net", "--listen", ":2390", "--token", "secret"}, exitUsage, "not every interface"},
		{"neither", []string{"net", "--token", "secret"}, exitUsage, "one of the two"},
		{"both", []string{"net", "--listen", addr, "--peers", addr, "--token", "secret"}, exitUsage, "one of the two"},
		{"no token", []string{"net", "--peers", addr}, exitUsage, "no token"},
		{"bad peer", []string{"net", "--peers", "nowhere", "--token", "secret"}, exitUsage, "host:port"},
		{"bad interval", []string{"net", "--peers", addr, "--token", "secret", "--interval", "0"}, exitUsage, "--interval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, runOpts{}, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, tc.code, r.stderr)
			}
			checkOneErrorLine(t, r.stderr)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q does not say %q", r.stderr, tc.want)
			}
		})
	}
	l.signal(t, syscall.SIGTERM)
	lr := l.wait(t)
	if !strings.Contains(lr.stderr, "1 with a wrong token") {
		t.Errorf("the listener's account: %s", lr.stderr)
	}
}
