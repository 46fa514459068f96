package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/etcdproc"
	"etcdbench/internal/result"
	"etcdbench/internal/scratch"
	"etcdbench/internal/strace"
	"etcdbench/internal/testutil"
	"etcdbench/internal/trace"
	"etcdbench/internal/walfile"
)

func TestDiagnoseWALUsage(t *testing.T) {
	empty := t.TempDir()
	// A process that is not etcd and whose descriptors this test may
	// read (the kernel may refuse even root the descriptors of pid 1).
	notEtcd := exec.Command("sleep", "60")
	if err := notEtcd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = notEtcd.Process.Kill(); _ = notEtcd.Wait() }()
	notEtcdPID := strconv.Itoa(notEtcd.Process.Pid)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"both sources", []string{"diagnose", "wal", "--data-dir", empty, "--pid", "1"}, exitUsage, "alternatives"},
		{"no WAL in the dir", []string{"diagnose", "wal", "--data-dir", empty}, exitUsage, "no *.wal files"},
		{"missing dir", []string{"diagnose", "wal", "--data-dir", empty + "/nope"}, exitUsage, "nope: file does not exist; give etcd's data dir"},
		{"--yes with --data-dir", []string{"diagnose", "wal", "--data-dir", empty, "--yes"}, exitUsage, "go with tracing"},
		{"bad duration", []string{"diagnose", "wal", "--pid", "1", "--duration", "-3s"}, exitUsage, "--duration"},
		{"bad output", []string{"diagnose", "wal", "--data-dir", empty, "-o", "xml"}, exitUsage, "--output"},
		{"not etcd", []string{"diagnose", "wal", "--pid", notEtcdPID}, exitRuntime, "no WAL segment"},
		{"--bs auto without a source", []string{"disk", "wal", "--dir", empty, "--bs", "auto"}, exitUsage, "--from-data-dir DIR"},
		{"--from-pid without --bs auto", []string{"disk", "wal", "--dir", empty, "--from-pid", "1"}, exitUsage, "go with --bs auto"},
		{"--bs auto from an empty dir", []string{"disk", "wal", "--dir", empty, "--bs", "auto", "--from-data-dir", empty}, exitUsage, "no *.wal files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, runOpts{}, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tc.code, tc.want)
			}
			checkOneErrorLine(t, r.stderr)
			checkNoScratch(t, empty)
		})
	}
}

// putLoad writes keys of keyBytes and values of valBytes from a few
// clients until stop is called; it returns how many puts succeeded.
func putLoad(t *testing.T, s *etcdServer, clients, valBytes int) (stop func() int64) {
	t.Helper()
	cli := s.client(t, "", "")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var n atomic.Int64
	val := strings.Repeat("v", valBytes)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				if _, err := cli.Put(ctx, fmt.Sprintf("/diag-wal/%02d/%08d", c, i), val); err == nil {
					n.Add(1)
				}
			}
		}()
	}
	return func() int64 {
		cancel()
		wg.Wait()
		cli.Close()
		return n.Load()
	}
}

func decodeResult(t *testing.T, stdout string) *result.Result {
	t.Helper()
	r, err := result.Read(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(r.Workloads) != 1 || r.Workloads[0].Name != walfile.WorkloadName {
		t.Fatalf("workloads %+v", r.Workloads)
	}
	return r
}

// tracerPid is the process tracing pid (ptrace), 0 for none.
func tracerPid(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "TracerPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	t.Fatalf("no TracerPid in /proc/%d/status", pid)
	return 0
}

func figure(t *testing.T, wl *result.Workload, name string) float64 {
	t.Helper()
	f := wl.Figure(name)
	if f == nil {
		t.Fatalf("no figure %s in %+v", name, wl.Figures)
	}
	return f.Value
}

// TestDiagnoseWALDebianEtcd traces Debian's etcd 3.4 under a put load,
// then reads its WAL offline after stopping it.
func TestDiagnoseWALDebianEtcd(t *testing.T) {
	if _, err := strace.Find(context.Background()); err != nil {
		t.Skipf("skipping the trace of a real etcd: %v", err)
	}
	s := startEtcdServer(t, etcdServerOpts{})
	pid := s.cmd.Process.Pid
	const valBytes = 300
	stop := putLoad(t, s, 4, valBytes)
	defer stop()

	t.Run("refuses without --yes", func(t *testing.T) {
		r := runBin(t, runOpts{}, "diagnose", "wal", "--pid", strconv.Itoa(pid), "--duration", "1s")
		if r.code != exitUsage || !strings.Contains(r.stderr, "--yes") || !strings.Contains(r.stderr, "--data-dir "+s.DataDir) {
			t.Errorf("exit %d, stderr %q; want a refusal naming --yes and the offline way", r.code, r.stderr)
		}
		checkOneErrorLine(t, r.stderr)
	})

	t.Run("without strace", func(t *testing.T) {
		r := runBin(t, runOpts{env: []string{"PATH=" + t.TempDir()}}, "diagnose", "wal", "--pid", strconv.Itoa(pid), "--yes")
		if r.code != exitRuntime || !strings.Contains(r.stderr, "strace is not installed") || !strings.Contains(r.stderr, "--data-dir") {
			t.Errorf("exit %d, stderr %q; want one line saying strace is missing", r.code, r.stderr)
		}
		checkOneErrorLine(t, r.stderr)
	})

	r := runBin(t, runOpts{}, "diagnose", "wal", "--pid", strconv.Itoa(pid), "--duration", "3s", "--yes", "-o", "json")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s\n%s", r.code, r.stderr, s.logTail())
	}
	res := decodeResult(t, r.stdout)
	wl := &res.Workloads[0]
	sync := wl.Latency("wal fdatasync")
	if sync == nil || sync.Count == 0 {
		t.Fatalf("no WAL fdatasync traced: %+v", wl)
	}
	// each put is one entry of at least its value; batches of a few
	// clients' puts stay far below a segment
	wp50, bps50 := figure(t, wl, "wal_write_bytes_p50"), figure(t, wl, "wal_bytes_per_sync_p50")
	if wp50 < valBytes || wp50 > 64<<10 || bps50 < valBytes || bps50 > 256<<10 {
		t.Errorf("WAL write p50 %v bytes, bytes per sync p50 %v: implausible for %d-byte values", wp50, bps50, valBytes)
	}
	bs := figure(t, wl, "recommended_bs")
	if bs < valBytes || !strings.Contains(strings.Join(wl.Notes, "\n"), "etcdbench disk wal --dir "+s.DataDir+" --bs ") {
		t.Errorf("recommended --bs %v, notes %q", bs, wl.Notes)
	}
	if figure(t, wl, "db_syncs") == 0 {
		t.Logf("no backend commit seen in 3 s (etcd commits every 100 ms under load): %v", wl.Figures)
	}
	t.Logf("traced %d WAL fdatasyncs: p50 %d ns; write p50 %v B, bytes/sync p50 %v B, --bs %v", sync.Count, sync.Percentiles[0].ValueNs, wp50, bps50, bs)

	// etcdbench stopped or killed while tracing: strace must detach, and
	// its output's directory (in $TMPDIR) go: at once on SIGTERM, by
	// `etcdbench clean` after SIGKILL.
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run("detaches on "+sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			p := start(t, runOpts{env: []string{"TMPDIR=" + tmp}}, "diagnose", "wal", "--pid", strconv.Itoa(pid), "--duration", "60s", "--yes")
			testutil.WaitFor(t, 20*time.Second, "strace attached to etcd", func() bool { return tracerPid(t, pid) != 0 })
			if left := entries(t, tmp); len(left) != 1 || !strings.HasPrefix(left[0], scratch.Prefix) {
				t.Fatalf("while tracing, $TMPDIR holds %q; want one scratch directory", left)
			}
			p.signal(t, sig)
			r := p.wait(t)
			if want := 128 + int(sig); sig == syscall.SIGTERM && r.code != want {
				t.Errorf("exit %d, want %d; stderr %q", r.code, want, r.stderr)
			}
			testutil.WaitFor(t, 20*time.Second, "strace detached from etcd", func() bool { return tracerPid(t, pid) == 0 })
			if sig == syscall.SIGKILL {
				if c := runBin(t, runOpts{}, "clean", "--dir", tmp); c.code != 0 {
					t.Fatalf("clean: exit %d, stderr %q", c.code, c.stderr)
				}
			}
			if left := entries(t, tmp); len(left) != 0 {
				t.Errorf("after %v, $TMPDIR holds %q", sig, left)
			}
		})
	}

	t.Run("finds the only etcd", func(t *testing.T) {
		ps, err := etcdproc.Find("/proc")
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range ps {
			found = found || p.PID == pid
		}
		if !found {
			t.Fatalf("etcdproc.Find does not list etcd's pid %d: %+v", pid, ps)
		}
		r := runBin(t, runOpts{}, "diagnose", "wal", "--duration", "1s", "--yes", "-o", "json")
		if len(ps) > 1 {
			// other etcd processes run on this machine (other tests):
			// the auto-discovery must refuse and list them, ours included
			if r.code != exitUsage || !strings.Contains(r.stderr, strconv.Itoa(pid)+" (") || !strings.Contains(r.stderr, "--pid") {
				t.Errorf("%d etcd processes: exit %d, stderr %q; want a usage error listing them", len(ps), r.code, r.stderr)
			}
			checkOneErrorLine(t, r.stderr)
			t.Skipf("%d etcd processes run on this machine: checked the refusal, not the pick", len(ps))
		}
		if r.code != exitOK {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		res := decodeResult(t, r.stdout)
		if got := res.Workloads[0].Parameters["pid"]; got != float64(pid) {
			t.Errorf("traced pid %v, want %d", got, pid)
		}
	})

	t.Run("disk wal --bs auto --from-pid", func(t *testing.T) {
		dir := t.TempDir()
		r := runBin(t, runOpts{}, "disk", "wal", "--dir", dir, "--bs", "auto", "--from-pid", strconv.Itoa(pid), "--count", "20", "-o", "json")
		if r.code != exitOK && r.code != exitFail {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "--bs auto = ") {
			t.Errorf("stderr does not say what --bs auto chose: %q", r.stderr)
		}
		// Where eBPF works, the live etcd's WAL is traced; elsewhere its
		// segment files are decoded.
		_, terr := trace.Run(context.Background(), trace.Options{PID: os.Getpid(), Duration: 100 * time.Millisecond})
		want := "traced by eBPF"
		if errors.Is(terr, trace.ErrPermission) || errors.Is(terr, trace.ErrUnsupported) {
			want = "write+fdatasync in"
		}
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q does not say %q", r.stderr, want)
		}
		checkNoScratch(t, dir)
	})

	puts := stop()
	s.stop()
	if puts == 0 {
		t.Fatal("no put succeeded")
	}

	before := snapshot(t, s.DataDir)
	r = runBin(t, runOpts{}, "diagnose", "wal", "--data-dir", s.DataDir, "-o", "json")
	if r.code != exitOK {
		t.Fatalf("diagnose wal --data-dir: exit %d: %s", r.code, r.stderr)
	}
	checkSnapshot(t, s.DataDir, before) // read-only: nothing written, nothing left
	wl = &decodeResult(t, r.stdout).Workloads[0]
	if e := figure(t, wl, "entry_records"); e < float64(puts) {
		t.Errorf("%v entries in the WAL, fewer than the %d puts", e, puts)
	}
	if p50 := figure(t, wl, "entry_data_bytes_p50"); p50 < valBytes || p50 > valBytes+200 {
		t.Errorf("entry payload p50 %v bytes for %d-byte values", p50, valBytes)
	}
	offline := figure(t, wl, "recommended_bs")
	if offline < valBytes || figure(t, wl, "syncs_inferred") == 0 {
		t.Errorf("offline: --bs %v, %v syncs", offline, figure(t, wl, "syncs_inferred"))
	}
	t.Logf("offline: %v entries of %d puts, --bs %v (traced: %v)", figure(t, wl, "entry_records"), puts, offline, bs)

	dir := t.TempDir()
	r = runBin(t, runOpts{}, "disk", "wal", "--dir", dir, "--bs", "auto", "--from-data-dir", s.DataDir, "--count", "20", "-o", "json")
	if r.code != exitOK && r.code != exitFail {
		t.Fatalf("disk wal --bs auto: exit %d: %s", r.code, r.stderr)
	}
	var got struct {
		Workloads []struct {
			Parameters map[string]any `json:"parameters"`
		} `json:"workloads"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.Workloads) != 1 {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if b := got.Workloads[0].Parameters["block_size"]; b != offline {
		t.Errorf("disk wal --bs auto used block_size %v, diagnose wal recommends %v", b, offline)
	}
}

// entries are the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
