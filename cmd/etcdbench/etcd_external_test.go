package main

// etcdbench etcd put|range against a separately started etcd process
// (etcdserver_test.go): TLS with client certificates, the disk metrics
// read from the member's own /metrics, refusals, interrupts, a full
// quota, an unreachable server and auth.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
)

// checkLoadResult checks a finished load's JSON result: the exit code of
// a completed run, ops requests and none failed, and the member's disk
// figures read from metricsURL. It returns the workload.
func checkLoadResult(t *testing.T, res runResult, name string, ops int64, metricsURL string) result.Workload {
	t.Helper()
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit %d, want 0 or 1; stderr:\n%s", res.code, res.stderr)
	}
	r, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatalf("stdout is not a result: %v\n%s", err, res.stdout)
	}
	w := r.Workloads[0]
	if w.Name != name || w.Ops != ops {
		t.Errorf("workload %s with %d ops, want %s with %d", w.Name, w.Ops, name, ops)
	}
	if f := w.Figure("failed_requests"); f == nil || f.Value != 0 {
		t.Errorf("failed_requests %+v, want 0; notes %q", f, w.Notes)
	}
	// The external member's WAL fsyncs during the load, from its own
	// /metrics over TLS: a put load writes, so it fsyncs at least once.
	for _, fig := range []string{"member0_wal_fsyncs", "member0_backend_commits"} {
		f := w.Figure(fig)
		if f == nil {
			t.Errorf("no %s: the member's /metrics were not read; notes %q", fig, w.Notes)
			continue
		}
		if name == "etcd-put" && f.Value < 1 {
			t.Errorf("%s = %v during %d puts, want at least 1", fig, f.Value, ops)
		}
	}
	if !slices.ContainsFunc(w.Notes, func(n string) bool { return strings.Contains(n, "("+metricsURL+")") }) {
		t.Errorf("no note says the disk metrics came from %s: %q", metricsURL, w.Notes)
	}
	return w
}

// walFsyncsTotal reads etcd_disk_wal_fsync_duration_seconds_count from a
// plain-HTTP /metrics URL.
func walFsyncsTotal(t *testing.T, url string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "etcd_disk_wal_fsync_duration_seconds_count "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", url, line, err)
			}
			return n
		}
	}
	t.Fatalf("%s has no etcd_disk_wal_fsync_duration_seconds_count", url)
	return 0
}

// revision returns the server's current revision.
func revision(t *testing.T, s *etcdServer) int64 {
	t.Helper()
	cli := s.client(t, "", "")
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, etcdload.PrefixRoot, clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// checkErrorRun checks a run that must end with one error line saying
// every one of want, and exit code.
func checkErrorRun(t *testing.T, res runResult, code int, want ...string) {
	t.Helper()
	if res.code != code {
		t.Errorf("exit %d, want %d; stderr:\n%s", res.code, code, res.stderr)
	}
	checkOneErrorLine(t, res.stderr)
	t.Log(strings.TrimSpace(res.stderr))
	for _, w := range want {
		if !strings.Contains(res.stderr, w) {
			t.Errorf("stderr %q does not say %q", res.stderr, w)
		}
	}
}

// TestEtcdExternalProcess drives one etcd process that serves clients over
// TLS with client certificates, in order: put, range, a refusal without
// --yes, a wrong CA, SIGINT and SIGTERM during a load, a stopped
// (SIGSTOP) server, auth with the right and wrong passwords, and the
// server gone.
func TestEtcdExternalProcess(t *testing.T) {
	s := startEtcdServer(t, etcdServerOpts{TLS: true, Metrics: true})
	tlsArgs := s.tlsArgs()
	load := func(op string, extra ...string) []string {
		return append(append([]string{"etcd", op, "--endpoints", s.Endpoint}, tlsArgs...), extra...)
	}
	checkNoKeys := func(t *testing.T, user, password string) {
		t.Helper()
		if n := s.countKeys(t, etcdload.PrefixRoot, user, password); n != 0 {
			t.Errorf("%d keys left under %s", n, etcdload.PrefixRoot)
		}
	}

	t.Run("put over TLS", func(t *testing.T) {
		res := runBin(t, runOpts{}, load("put", "--yes", "-o", "json", "--total", "500", "--clients", "4")...)
		w := checkLoadResult(t, res, "etcd-put", 500, s.Endpoint+"/metrics")
		// The load's fsyncs, read over TLS from the client port, are part
		// of the member's total, read from its plain metrics port.
		total := walFsyncsTotal(t, s.MetricsURL)
		if f := w.Figure("member0_wal_fsyncs"); f != nil {
			t.Logf("%d puts: member0_wal_fsyncs %v of the member's %v", w.Ops, f.Value, total)
		}
		if f := w.Figure("member0_wal_fsyncs"); f != nil && f.Value > total {
			t.Errorf("member0_wal_fsyncs %v, more than the member's %v since it started", f.Value, total)
		}
		checkNoKeys(t, "", "")
	})
	t.Run("range over TLS", func(t *testing.T) {
		res := runBin(t, runOpts{}, load("range", "--yes", "-o", "json", "--total", "500", "--clients", "4", "--key-space-size", "20")...)
		checkLoadResult(t, res, "etcd-range", 500, s.Endpoint+"/metrics")
		checkNoKeys(t, "", "")
	})
	t.Run("capacity of a member on this machine", func(t *testing.T) {
		// The endpoint is served by a process here: its members share this
		// machine's CPUs (a saturated machine is named cpu, not client), and
		// its one member's WAL syncs are traced where eBPF is allowed.
		res := runBin(t, runOpts{}, load("capacity", "--yes", "-o", "json", "--start", "20", "--max-rate", "20", "--step", "1s", "--no-progress")...)
		if res.code != exitOK && res.code != exitFail {
			t.Fatalf("exit %d, want 0 or 1; stderr:\n%s", res.code, res.stderr)
		}
		r, err := result.Read(strings.NewReader(res.stdout))
		if err != nil {
			t.Fatal(err)
		}
		w := r.Workloads[0]
		here := fmt.Sprintf("external cluster on this machine: every endpoint is served by a process here (PIDs [%d])", s.cmd.Process.Pid)
		if !slices.ContainsFunc(w.Notes, func(n string) bool { return strings.HasPrefix(n, here) }) {
			t.Errorf("notes %q: want %q", w.Notes, here)
		}
		notTraced := slices.ContainsFunc(w.Notes, func(n string) bool { return strings.Contains(n, "not traced") })
		traced := w.Capacity != nil && slices.ContainsFunc(w.Capacity.Steps, func(st result.CapacityStep) bool {
			return slices.ContainsFunc(st.Extra, func(f result.Figure) bool { return f.Name == "traced_wal_sync_p99" })
		})
		if traced == notTraced {
			t.Errorf("traced steps %v, yet a note says not traced %v: %q", traced, notTraced, w.Notes)
		}
		checkNoKeys(t, "", "")
	})
	t.Run("without --yes", func(t *testing.T) {
		before := revision(t, s)
		res := runBin(t, runOpts{}, load("put", "--total", "100")...)
		checkErrorRun(t, res, exitUsage, "without --yes", s.Endpoint, "100 requests", etcdload.PrefixRoot)
		if after := revision(t, s); after != before {
			t.Errorf("the revision moved from %d to %d: something was written", before, after)
		}
	})
	t.Run("wrong CA", func(t *testing.T) {
		wrong := testutil.NewPKI(t, t.TempDir(), "wrong")
		res := runBin(t, runOpts{}, "etcd", "put", "--endpoints", s.Endpoint, "--yes", "--total", "10",
			"--cacert", wrong.CA, "--cert", s.PKI.ClientCert, "--key", s.PKI.ClientKey)
		checkErrorRun(t, res, exitRuntime, s.Endpoint, "x509", "--cacert")
	})
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("interrupted by "+sig.String(), func(t *testing.T) {
			cli := s.client(t, "", "")
			defer cli.Close()
			p := start(t, runOpts{}, load("put", "--yes", "--duration", "60s", "--clients", "8", "--no-progress")...)
			testutil.WaitFor(t, 60*time.Second, "keys under "+etcdload.PrefixRoot, func() bool {
				if p.exited() {
					t.Fatalf("etcdbench exited before writing: %+v", p.res)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				resp, err := cli.Get(ctx, etcdload.PrefixRoot, clientv3.WithPrefix(), clientv3.WithCountOnly())
				return err == nil && resp.Count > 0
			})
			p.signal(t, sig)
			res := p.wait(t)
			checkErrorRun(t, res, 128+int(sig), "interrupted")
			checkNoKeys(t, "", "")
		})
	}
	t.Run("server stopped with SIGSTOP", func(t *testing.T) {
		s.signal(t, syscall.SIGSTOP)
		defer s.signal(t, syscall.SIGCONT)
		res := runBin(t, runOpts{}, load("put", "--yes", "--total", "10")...)
		checkErrorRun(t, res, exitRuntime, s.Endpoint, "does not answer", "stopped or overloaded")
	})

	// Auth: user root with the root role, then auth on.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tcfg := tcfgFor(t, etcdload.TLSFiles{CACert: s.PKI.CA, Cert: s.PKI.ClientCert, Key: s.PKI.ClientKey})
	enableAuth(t, ctx, []string{s.Endpoint}, tcfg, "pw-s3cret")
	t.Run("auth with the right password", func(t *testing.T) {
		res := runBin(t, runOpts{}, load("put", "--yes", "-o", "json", "--total", "200", "--clients", "2", "--user", "root:pw-s3cret")...)
		checkLoadResult(t, res, "etcd-put", 200, s.Endpoint+"/metrics")
		if strings.Contains(res.stdout, "pw-s3cret") {
			t.Errorf("the result contains the password")
		}
		checkNoKeys(t, "root", "pw-s3cret")
	})
	t.Run("auth with a wrong password", func(t *testing.T) {
		res := runBin(t, runOpts{}, load("put", "--yes", "--total", "10", "--user", "root:nope-wrong")...)
		checkErrorRun(t, res, exitRuntime, "authentication failed", "--user")
		if strings.Contains(res.stderr, "nope-wrong") {
			t.Errorf("stderr shows the password: %q", res.stderr)
		}
	})
	t.Run("auth without a user", func(t *testing.T) {
		res := runBin(t, runOpts{}, load("put", "--yes", "--total", "10")...)
		checkErrorRun(t, res, exitRuntime, "--user")
	})
	t.Run("auth as a user who may only read", func(t *testing.T) {
		root := s.client(t, "root", "pw-s3cret")
		defer root.Close()
		steps := []struct {
			what string
			do   func() error
		}{
			{"role add reader", func() error { _, err := root.RoleAdd(ctx, "reader"); return err }},
			{"grant read on the prefix", func() error {
				_, err := root.RoleGrantPermission(ctx, "reader", etcdload.PrefixRoot, clientv3.GetPrefixRangeEnd(etcdload.PrefixRoot), clientv3.PermissionType(clientv3.PermRead))
				return err
			}},
			{"user add reader", func() error { _, err := root.UserAdd(ctx, "reader", "pw-reader"); return err }},
			{"grant reader to reader", func() error { _, err := root.UserGrantRole(ctx, "reader", "reader"); return err }},
		}
		for _, st := range steps {
			if err := st.do(); err != nil {
				t.Fatalf("%s: %v", st.what, err)
			}
		}
		// Every put is refused: the run stops at the first refusal
		// instead of failing puts for a minute.
		res := runBin(t, runOpts{}, load("put", "--yes", "--duration", "60s", "--clients", "4", "--user", "reader:pw-reader")...)
		checkErrorRun(t, res, exitRuntime, "permission denied", "--user", etcdload.PrefixRoot)
	})
	checkNoKeys(t, "root", "pw-s3cret")

	s.stop()
	t.Run("server gone", func(t *testing.T) {
		res := runBin(t, runOpts{}, load("put", "--yes", "--total", "10")...)
		checkErrorRun(t, res, exitRuntime, s.Endpoint, "does not answer", "connection refused")
	})
}

// noSpaceWants is what the one error line of a run that filled etcd's
// space quota must say: the cause and etcd's recovery.
var noSpaceWants = []string{"database space exceeded", "NOSPACE", "etcdctl compact", "etcdctl defrag", "etcdctl alarm disarm"}

// fillArgs make a put load that fills a 16 MiB quota within about 64
// requests; --duration only bounds a run that would not stop.
var fillArgs = []string{"--yes", "--val-size", "262144", "--key-space-size", "4", "--clients", "4", "--duration", "60s", "--no-progress", "-o", "json"}

// TestEtcdNoSpace fills an etcd process's 16 MiB quota with a put load:
// the run stops at etcd's first "database space exceeded", says what to
// do in one line, exits 3, and its keys are deleted under the NOSPACE
// alarm. A second put load and a range load on the full etcd stop the
// same way.
func TestEtcdNoSpace(t *testing.T) {
	s := startEtcdServer(t, etcdServerOpts{QuotaBackendBytes: 16 << 20})
	res := runBin(t, runOpts{}, append([]string{"etcd", "put", "--endpoints", s.Endpoint}, fillArgs...)...)
	checkErrorRun(t, res, exitRuntime, noSpaceWants...)
	cli := s.client(t, "", "")
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	alarms, err := cli.AlarmList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(alarms.Alarms) == 0 {
		t.Fatalf("etcd raised no alarm: the run did not fill its quota")
	}
	t.Logf("alarms after the run: %v", alarms.Alarms)
	// The run's keys were written and then deleted while the alarm was
	// on: none now, some one revision before the delete.
	now, err := cli.Get(ctx, etcdload.PrefixRoot, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if now.Count != 0 {
		t.Errorf("%d keys left under %s", now.Count, etcdload.PrefixRoot)
	}
	before, err := cli.Get(ctx, etcdload.PrefixRoot, clientv3.WithPrefix(), clientv3.WithCountOnly(), clientv3.WithRev(now.Header.Revision-1))
	if err != nil {
		t.Fatal(err)
	}
	if before.Count == 0 {
		t.Errorf("no keys under %s one revision (%d) before the last: the last write was not the run's delete", etcdload.PrefixRoot, now.Header.Revision-1)
	}
	// A fresh etcd is at revision 1; each put and the delete add one.
	t.Logf("%d puts of 256 KiB succeeded before etcd refused one", now.Header.Revision-2)

	for _, tc := range []struct {
		op    string
		wants []string
	}{
		{"put", noSpaceWants},
		// A range load's puts of its keys come before the timed load
		// (populate); they stop at etcd's refusal the same way.
		{"range", noSpaceWants},
	} {
		t.Run(tc.op+" on the full etcd", func(t *testing.T) {
			res := runBin(t, runOpts{}, "etcd", tc.op, "--endpoints", s.Endpoint, "--yes", "--total", "100", "--no-progress")
			checkErrorRun(t, res, exitRuntime, tc.wants...)
			if n := s.countKeys(t, etcdload.PrefixRoot, "", ""); n != 0 {
				t.Errorf("%d keys left under %s", n, etcdload.PrefixRoot)
			}
		})
	}
}

// TestEtcdNoSpaceEmbedded fills the embedded etcd's --quota-backend-bytes:
// the same one line and exit code, and no scratch directory left.
func TestEtcdNoSpaceEmbedded(t *testing.T) {
	dir := t.TempDir()
	res := runBin(t, runOpts{}, append([]string{"etcd", "put", "--dir", dir, "--quota-backend-bytes", "16m"}, fillArgs[1:]...)...)
	checkErrorRun(t, res, exitRuntime, noSpaceWants...)
	// The report of what was done before the refusal is still printed.
	if !strings.Contains(res.stdout, "stopped at etcd's first refusal") {
		t.Errorf("no report of the puts before the refusal on stdout:\n%s", res.stdout)
	}
	checkNoScratch(t, dir)
}
