package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
	"etcdbench/internal/testutil/fusedelay"
	"etcdbench/internal/verdict"
)

// capture is a file of internal/diagnose/testdata (real etcds' metrics
// and logs, see its README).
func capture(name string) string {
	return filepath.Join("..", "..", "internal", "diagnose", "testdata", name)
}

// diagnosis parses a JSON diagnosis and returns its one workload.
func diagnosis(t *testing.T, stdout string) result.Workload {
	t.Helper()
	r, err := result.Read(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if len(r.Workloads) != 1 || len(r.Workloads[0].Verdicts) == 0 {
		t.Fatalf("want one workload with verdicts: %s", stdout)
	}
	return r.Workloads[0]
}

// copyCapture copies a capture into dir with the modification time at.
func copyCapture(t *testing.T, dir, name string, at time.Time) string {
	t.Helper()
	b, err := os.ReadFile(capture(name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDiagnoseMetricsFromFiles(t *testing.T) {
	at := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		files []string
		apart time.Duration // between the files' modification times
		extra []string
		code  int
		top   string
		note  string
	}{
		{"slow disk", []string{"etcd37-slowdisk-before.txt", "etcd37-slowdisk-after.txt"}, 4 * time.Second, nil, exitFail, "slow-disk-wal", "4s apart by their files' modification times"},
		{"same file times: --window", []string{"etcd37-slowdisk-before.txt", "etcd37-slowdisk-after.txt"}, 0, []string{"--window", "5s"}, exitFail, "slow-disk-wal", "taken to be 5s apart (--window)"},
		{"healthy", []string{"etcd37-before.txt", "etcd37-after.txt"}, 4 * time.Second, nil, exitOK, "healthy", ""},
		{"one file: since start", []string{"etcd34-after.txt"}, 0, nil, exitOK, "healthy", "since each process started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"diagnose", "metrics", "-o", "json"}, tc.extra...)
			for i, f := range tc.files {
				args = append(args, "--from", copyCapture(t, dir, f, at.Add(time.Duration(i)*tc.apart)))
			}
			r := runBin(t, runOpts{}, args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %s", r.code, tc.code, r.stderr)
			}
			w := diagnosis(t, r.stdout)
			if w.Verdicts[0].Check != tc.top {
				t.Errorf("top verdict %s (%s), want %s", w.Verdicts[0].Check, w.Verdicts[0].Detail, tc.top)
			}
			if w.Figure("member0_wal_fsync_p99") == nil {
				t.Errorf("no WAL fsync figure in %v", w.Figures)
			}
			if tc.note != "" && !strings.Contains(strings.Join(w.Notes, "\n"), tc.note) {
				t.Errorf("notes %q lack %q", w.Notes, tc.note)
			}
		})
	}
}

// TestDiagnoseMetricsFromFilesOfThreeMembers reads the three members of a
// real cluster whose leader was stopped 3 s (see the captures' README).
func TestDiagnoseMetricsFromFilesOfThreeMembers(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	var before, after []string
	for i := range 3 {
		before = append(before, copyCapture(t, dir, fmt.Sprintf("etcd34-3m-before-m%d.txt", i), at))
		after = append(after, copyCapture(t, dir, fmt.Sprintf("etcd34-3m-after-m%d.txt", i), at.Add(7*time.Second)))
	}
	r := runBin(t, runOpts{}, "diagnose", "metrics", "-o", "json", "--from", strings.Join(before, ","), "--from", strings.Join(after, ","))
	if r.code != exitFail {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	w := diagnosis(t, r.stdout)
	for i := range 3 {
		if w.Figure(fmt.Sprintf("member%d_leader_changes", i)) == nil {
			t.Errorf("no figures of member%d", i)
		}
	}
	if !strings.HasSuffix(w.Verdicts[0].Title, "(member2)") {
		t.Errorf("top finding %q, want one on the stopped member2", w.Verdicts[0].Title)
	}
	r = runBin(t, runOpts{}, "diagnose", "metrics", "--from", strings.Join(before, ","), "--from", after[0])
	if r.code != exitUsage || !strings.Contains(r.stderr, "3 files before and 1 after") {
		t.Errorf("mismatched members: exit %d, %q", r.code, r.stderr)
	}
}

func TestDiagnoseMetricsTextNamesTheCause(t *testing.T) {
	r := runBin(t, runOpts{}, "diagnose", "metrics", "--from", capture("etcd37-slowdisk-before.txt"), "--from", capture("etcd37-slowdisk-after.txt"))
	if r.code != exitFail {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"FAIL  #1 slow disk: WAL fdatasync is slow (member0)", "What to do: move the data dir", "Result: FAIL"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestDiagnoseMetricsErrors(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "garbage")
	if err := os.WriteFile(garbage, []byte("this is { not metrics"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"nothing", []string{}, exitUsage, "nothing to diagnose"},
		{"two sources", []string{"--endpoints", "127.0.0.1:1", "--from", garbage}, exitUsage, "alternatives"},
		{"three files", []string{"--from", garbage, "--from", garbage, "--from", garbage}, exitUsage, "--from 3 times"},
		{"missing file", []string{"--from", garbage + ".nope"}, exitUsage, "no such file"},
		{"not metrics", []string{"--from", garbage}, exitUsage, "not a /metrics scrape"},
		{"bad window", []string{"--endpoints", "127.0.0.1:1", "--window", "soon"}, exitUsage, "--window"},
		{"bad output", []string{"--from", garbage, "-o", "xml"}, exitUsage, "--output"},
		{"TLS on http", []string{"--endpoints", "http://127.0.0.1:1", "--insecure-skip-tls-verify"}, exitUsage, "plain HTTP"},
		{"unreachable", []string{"--endpoints", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--window", "1s"}, exitRuntime, "cannot read /metrics of member0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, runOpts{}, append([]string{"diagnose", "metrics"}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tc.code, tc.want)
			}
			checkOneErrorLine(t, r.stderr)
		})
	}
}

// diagEtcd starts Debian's etcd with its data in dataDir and returns its
// client URL; it is stopped when t ends. It skips t without etcd.
func diagEtcd(t *testing.T, dataDir string) string {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		t.Skip("etcd is not on PATH (Debian: apt-get install etcd-server): skipping the end-to-end diagnosis")
	}
	client := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	peer := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	cmd := exec.Command(bin, "--name", "d0", "--data-dir", dataDir, "--logger", "zap", "--log-outputs", "stderr",
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "d0="+peer)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETCD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	log, err := os.Create(filepath.Join(t.TempDir(), "etcd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	// Registered after the FUSE mount's cleanup, so etcd stops first.
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		log.Close()
	})
	testutil.WaitFor(t, 30*time.Second, "etcd to be healthy", func() bool {
		select {
		case <-done:
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("etcd exited at start:\n%s", b)
		default:
		}
		resp, err := http.Get(client + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return client
}

// memBacking is a directory in memory (/dev/shm), so that only the
// injected delay makes the disk slow; a temporary directory without it.
func memBacking(t *testing.T) string { return testutil.MemDir(t, "etcdbench-diagnose-") }

// TestDiagnoseMetricsEndToEnd runs Debian's etcd with its data dir on a
// FUSE passthrough, loads it with etcdbench etcd put and diagnoses it
// over a 5 s window: with 30 ms fsyncs the slow disk is the top cause
// (exit 1), without a delay it is healthy (exit 0). The two run side by
// side.
func TestDiagnoseMetricsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the end-to-end diagnosis of a real etcd")
	}
	for _, tc := range []struct {
		name  string
		delay time.Duration
		load  []string
		code  int
		top   string
	}{
		{"30 ms fsyncs: slow disk", 30 * time.Millisecond, []string{"--clients", "8", "--conns", "2"}, exitFail, "slow-disk-wal"},
		{"no delay: healthy", 0, []string{"--clients", "2", "--rate", "200"}, exitOK, "healthy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // side by side: the slow case waits on its syncs
			m := fusedelay.Mount(t, memBacking(t), tc.delay)
			ep := diagEtcd(t, filepath.Join(m.Dir, "data"))
			load := start(t, runOpts{}, append([]string{"etcd", "put", "--endpoints", ep, "--yes", "--duration", "9s", "-o", "json", "--no-progress"}, tc.load...)...)
			// The load is under way, past its first second (200 puts at
			// the healthy case's 200/s): its start, the first commits
			// that grow etcd's db, is not in the window.
			waitPuts(t, 200, ep)
			r := runBin(t, runOpts{}, "diagnose", "metrics", "--endpoints", ep, "--window", "5s", "-o", "json")
			lr := load.wait(t)
			if lr.code != exitOK && lr.code != exitFail {
				t.Fatalf("etcd put: exit %d: %s", lr.code, lr.stderr)
			}
			if r.code != tc.code {
				t.Fatalf("diagnose: exit %d, want %d; stderr %s\n%s", r.code, tc.code, r.stderr, r.stdout)
			}
			w := diagnosis(t, r.stdout)
			v := w.Verdicts[0]
			if v.Check != tc.top {
				t.Fatalf("top verdict %s %s (%s), want %s", v.Check, v.Status, v.Detail, tc.top)
			}
			p99 := w.Figure("member0_wal_fsync_p99")
			if p99 == nil {
				t.Fatalf("no WAL fsync p99: %+v", w.Figures)
			}
			// With the delay, no sync can be faster than it; the
			// interpolated p99 lies in the bucket above 30 ms.
			if tc.delay > 0 && (p99.Value < tc.delay.Seconds() || v.Status != verdict.Fail) {
				t.Errorf("WAL fsync p99 %gs with a %v delay, verdict %s", p99.Value, tc.delay, v.Status)
			}
			if m.Syncs() == 0 {
				t.Error("etcd's syncs did not go through the FUSE passthrough")
			}
		})
	}
}

// TestDiagnoseMetricsTLS reads a TLS etcd's /metrics with etcdctl's flags
// (a client certificate required), and fails in one line without them.
func TestDiagnoseMetricsTLS(t *testing.T) {
	s := startEtcdServer(t, etcdServerOpts{TLS: true})
	ep := strings.TrimPrefix(s.Endpoint, "https://") // no scheme: TLS flags make it https
	r := runBin(t, runOpts{}, "diagnose", "metrics", "--endpoints", ep, "--window", "1s", "-o", "json",
		"--cacert", s.PKI.CA, "--cert", s.PKI.ClientCert, "--key", s.PKI.ClientKey)
	if r.code != exitOK && r.code != exitFail {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	w := diagnosis(t, r.stdout)
	if w.Figure("member0_has_leader") == nil {
		t.Errorf("no figures of the member: %+v", w.Figures)
	}
	r = runBin(t, runOpts{}, "diagnose", "metrics", "--endpoints", s.Endpoint, "--window", "1s")
	if r.code != exitRuntime || !strings.Contains(r.stderr, "x509") {
		t.Errorf("without the CA: exit %d, stderr %q; want exit 3 and an x509 error", r.code, r.stderr)
	}
	checkOneErrorLine(t, r.stderr)
}
