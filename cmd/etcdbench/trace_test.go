package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/result"
)

// TestTraceEtcdProcess traces a real etcd process while etcdbench loads
// it, and checks the report.
func TestTraceEtcdProcess(t *testing.T) {
	s := startEtcdServer(t, etcdServerOpts{})
	pid := strconv.Itoa(s.cmd.Process.Pid)
	load := start(t, runOpts{}, "etcd", "put", "--endpoints", s.Endpoint, "--yes", "--duration", "6s", "--clients", "4", "--val-size", "256", "--no-progress")
	time.Sleep(time.Second)
	res := run(t, runOpts{}, "trace", "--pid", pid, "--duration", "3s", "-o", "json")
	load.wait(t)
	if strings.Contains(res.stderr, "not allowed to load BPF") || strings.Contains(res.stderr, "kernel cannot run the tracer") {
		t.Skipf("the BPF tracer cannot run here: %s", res.stderr)
	}
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit %d; stderr:\n%s", res.code, res.stderr)
	}
	r, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatalf("stdout is not a result: %v\n%s", err, res.stdout)
	}
	w := r.Workloads[0]
	if w.Name != "trace" || w.Latency("wal sync") == nil || w.Ops == 0 {
		t.Fatalf("workload %s, %d WAL syncs, latencies %+v", w.Name, w.Ops, w.Latencies)
	}
	bs := w.Figure("recommended_bs")
	if bs == nil || bs.Value < 256 || bs.Value > 64<<10 {
		t.Errorf("recommended --bs %+v: want about one 256-byte put's WAL frames", bs)
	}
	if !strings.HasPrefix(r.Environment.Dir, s.DataDir) {
		t.Errorf("environment of %q, want the WAL's directory under %s", r.Environment.Dir, s.DataDir)
	}
}

func TestTraceBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no such process", []string{"trace", "--pid", "1073741824"}, "no such process"},
		{"bad pid", []string{"trace", "--pid", "-3"}, "--pid"},
		{"bad duration", []string{"trace", "--pid", "1", "--duration", "soon"}, "--duration"},
		{"bad output", []string{"trace", "--pid", "1", "-o", "xml"}, "--output"},
		{"argument", []string{"trace", "1234"}, "unexpected argument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, runOpts{}, tc.args...)
			if res.code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", res.code, exitUsage, res.stderr)
			}
			checkOneErrorLine(t, res.stderr)
			if !strings.Contains(res.stderr, tc.want) {
				t.Errorf("stderr %q does not mention %q", res.stderr, tc.want)
			}
		})
	}
}

// TestTraceInterrupted stops a trace with SIGINT and SIGTERM: the exit
// code says so and the report of what was seen is still printed.
func TestTraceInterrupted(t *testing.T) {
	s := startEtcdServer(t, etcdServerOpts{})
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			p := start(t, runOpts{}, "trace", "--pid", strconv.Itoa(s.cmd.Process.Pid), "--duration", "60s", "-o", "json")
			time.Sleep(1500 * time.Millisecond)
			p.signal(t, sig)
			res := p.wait(t)
			if strings.Contains(res.stderr, "not allowed to load BPF") {
				t.Skipf("the BPF tracer cannot run here: %s", res.stderr)
			}
			if want := 128 + int(sig); res.code != want {
				t.Fatalf("exit %d, want %d; stderr:\n%s", res.code, want, res.stderr)
			}
			r, err := result.Read(strings.NewReader(res.stdout))
			if err != nil || !r.Interrupted {
				t.Errorf("no interrupted result on stdout (%v): %s", err, res.stdout)
			}
		})
	}
}

// TestTraceUnprivileged runs the tracer as an unprivileged user: one line
// that says what is missing and names the strace fallback, exit 3.
func TestTraceUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: running as another user needs root")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	res := run(t, runOpts{cred: &syscall.Credential{Uid: 65534, Gid: 65534}}, "trace", "--pid", strconv.Itoa(cmd.Process.Pid), "--duration", "1s")
	if res.code != exitRuntime {
		t.Fatalf("exit %d, want %d; stderr:\n%s", res.code, exitRuntime, res.stderr)
	}
	checkOneErrorLine(t, res.stderr)
	for _, want := range []string{"not allowed to load BPF", "diagnose wal --pid"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr %q does not say %q", res.stderr, want)
		}
	}
}
