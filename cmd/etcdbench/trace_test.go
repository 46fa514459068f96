package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
	"etcdbench/internal/verdict"
)

// TestTraceEtcdProcess traces a real etcd process while etcdbench loads
// it, and checks the report.
func TestTraceEtcdProcess(t *testing.T) {
	s := startEtcdServer(t, etcdServerOpts{})
	pid := strconv.Itoa(s.cmd.Process.Pid)
	load := start(t, runOpts{}, "etcd", "put", "--endpoints", s.Endpoint, "--yes", "--duration", "6s", "--clients", "4", "--val-size", "256", "--no-progress")
	waitPuts(t, 1, s.Endpoint)
	res := runBin(t, runOpts{}, "trace", "--pid", pid, "--duration", "3s", "-o", "json")
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
		{"unbounded duration", []string{"trace", "--pid", "1", "--duration", "25h"}, "up to 24h"},
		{"bad output", []string{"trace", "--pid", "1", "-o", "xml"}, "--output"},
		{"argument", []string{"trace", "1234"}, "unexpected argument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runBin(t, runOpts{}, tc.args...)
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
			held := attachedBPF(t, p)
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
			checkDetached(t, held)
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
	res := runBin(t, runOpts{cred: &syscall.Credential{Uid: 65534, Gid: 65534}}, "trace", "--pid", strconv.Itoa(cmd.Process.Pid), "--duration", "1s")
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

// TestTraceProcessExits traces a process that exits (and that its parent
// does not reap, so it stays a zombie) before the duration: the trace
// ends with it, says so, and does not pass a WAL it never saw (WARN, not
// judged; exit 0); nothing stays attached.
func TestTraceProcessExits(t *testing.T) {
	cmd := exec.Command("sleep", "2")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait() // reaped only at the end: a zombie meanwhile
	begin := time.Now()
	p := start(t, runOpts{}, "trace", "--pid", strconv.Itoa(cmd.Process.Pid), "--duration", "60s", "-o", "json")
	held := attachedBPF(t, p)
	res := p.wait(t)
	if res.code != exitOK {
		t.Fatalf("exit %d, want %d (WARN); stderr:\n%s", res.code, exitOK, res.stderr)
	}
	if d := time.Since(begin); d > 30*time.Second {
		t.Errorf("the trace took %v: it did not end with the process", d)
	}
	r, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatalf("stdout is not a result: %v\n%s", err, res.stdout)
	}
	w := r.Workloads[0]
	if !strings.Contains(w.Stop.Reason, "exited") || r.Status == nil || *r.Status != verdict.Warn ||
		len(w.Verdicts) != 1 || w.Verdicts[0].Confidence == nil || w.Verdicts[0].Confidence.Decided {
		t.Errorf("stop %q, status %v, verdicts %+v: want an ended trace, WARN, not decided", w.Stop.Reason, r.Status, w.Verdicts)
	}
	checkDetached(t, held)
}

// bpfIDs are the BPF programs and links a process holds.
type bpfIDs struct{ progs, links []uint32 }

// attachedBPF waits until the etcdbench trace process p holds its BPF
// programs and links (read from the "prog_id:" and "link_id:" lines of
// /proc/PID/fdinfo) and returns their IDs; the test is skipped when the
// tracer cannot run here.
func attachedBPF(t *testing.T, p *process) bpfIDs {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fdinfo", p.cmd.Process.Pid)
	var ids bpfIDs
	testutil.WaitFor(t, 20*time.Second, "the trace process's BPF programs, each attached by its link", func() bool {
		if p.exited() {
			res := p.wait(t)
			if strings.Contains(res.stderr, "not allowed to load BPF") || strings.Contains(res.stderr, "kernel cannot run the tracer") {
				t.Skipf("the BPF tracer cannot run here: %s", res.stderr)
			}
			t.Fatalf("the trace ended before attaching: exit %d, stderr:\n%s", res.code, res.stderr)
		}
		progs, links := map[uint32]bool{}, map[uint32]bool{}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				k, v, ok := strings.Cut(line, ":")
				n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
				if !ok || err != nil {
					continue
				}
				switch k {
				case "prog_id": // of a program, and of the program a link holds
					progs[uint32(n)] = true
				case "link_id":
					links[uint32(n)] = true
				}
			}
		}
		// Every program attached: each has its link. A signal from
		// here on ends the trace with its (interrupted) result: the
		// tracer reads its events once attached, and stops at the
		// signal wherever it is.
		if len(links) == 0 || len(links) < len(progs) {
			return false
		}
		for id := range progs {
			ids.progs = append(ids.progs, id)
		}
		for id := range links {
			ids.links = append(ids.links, id)
		}
		return true
	})
	return ids
}

// checkDetached waits (the kernel frees a program after its last
// reference is dropped, not at once) until none of the programs and links
// of ids exists any more: nothing the trace attached is left in the kernel.
func checkDetached(t *testing.T, ids bpfIDs) {
	t.Helper()
	left := func() []string {
		var out []string
		for _, id := range ids.progs {
			if prog, err := ebpf.NewProgramFromID(ebpf.ProgramID(id)); err == nil {
				prog.Close()
				out = append(out, fmt.Sprintf("program %d", id))
			}
		}
		for _, id := range ids.links {
			if l, err := link.NewFromID(link.ID(id)); err == nil {
				l.Close()
				out = append(out, fmt.Sprintf("link %d", id))
			}
		}
		return out
	}
	var still []string
	if testutil.Poll(10*time.Second, func() bool { still = left(); return len(still) == 0 }) {
		return
	}
	t.Errorf("still in the kernel after the trace ended: %v (of %d programs, %d links)", still, len(ids.progs), len(ids.links))
}
