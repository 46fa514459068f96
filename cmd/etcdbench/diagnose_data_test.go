package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
	"etcdbench/internal/testutil/hostetcd"
	"etcdbench/internal/testutil/kubedata"
	"etcdbench/internal/testutil/loopmount"
)

// stoppedMember is the data dir of an embedded member filled with
// kubedata.Small and stopped.
func stoppedMember(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dataDir, _, err := kubedata.Embedded(ctx, t.TempDir(), kubedata.Small(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return dataDir
}

// dataJSON runs a `diagnose data -o json` that must succeed and returns
// its data report.
func dataJSON(t *testing.T, o runOpts, args ...string) (runResult, *result.Data) {
	t.Helper()
	r := runBin(t, o, args...)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	res, err := result.Read(strings.NewReader(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Workloads) != 1 || res.Workloads[0].Data == nil {
		t.Fatalf("no data report: %s", r.stdout)
	}
	return r, res.Workloads[0].Data
}

// TestDiagnoseData runs `diagnose data` on a stopped member's data dir
// in every format: the JSON holds the figures and the predictions on
// --dir (each saying what it comes from), the text its tables, the HTML
// its chart of bytes per resource.
func TestDiagnoseData(t *testing.T) {
	dataDir := stoppedMember(t)
	scratchDir := t.TempDir()
	r, d := dataJSON(t, runOpts{timeout: 5 * time.Minute}, "diagnose", "data", "--data-dir", dataDir, "--dir", scratchDir, "-o", "json")
	if d.Source != "data-dir" || len(d.Resources) == 0 || len(d.TopKeys) == 0 || d.DB.InUseBytes <= 0 {
		t.Fatalf("data %+v", d)
	}
	p := d.Predicted
	if p == nil || p.RestartSeconds <= 0 || p.DefragSeconds <= 0 || p.SnapshotSendSeconds <= 0 || p.RestartFrom == "" || p.DefragFrom == "" || p.SnapshotSendFrom == "" {
		t.Fatalf("predicted %+v", p)
	}
	if p.WALEntries <= 0 || p.WALBytes <= 0 {
		t.Errorf("a member's WAL since its last snapshot: %d entries, %d bytes", p.WALEntries, p.WALBytes)
	}
	// What LISTs cost its memory: the machine's limit (a stopped member
	// runs nowhere), an idle memory of at least its db, a LIST's cost per
	// resource and the LISTs at once of the largest that fit.
	m := d.Memory
	if m == nil || m.LimitBytes <= 0 || m.IdleBytes < d.DB.FileBytes || m.ConcurrentFullLists < 1 || m.PerListedByte < 1 || m.Resource == "" || m.ProbeFrom == "" {
		t.Fatalf("memory %+v", m)
	}
	for _, res := range d.Resources {
		if res.Resource == m.Resource && (res.ListMemoryBytes < res.Bytes || res.ListMemoryPagedBytes <= 0 || res.ListMemoryPagedBytes > res.ListMemoryBytes) {
			t.Errorf("%s: a full LIST costs %d bytes, a paginated one %d, of %d listed", res.Resource, res.ListMemoryBytes, res.ListMemoryPagedBytes, res.Bytes)
		}
	}
	if ents, _ := os.ReadDir(scratchDir); len(ents) > 0 {
		t.Errorf("left under --dir: %v", ents)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatal(err)
	}
	for format, want := range map[string][]string{
		"text": {"resources", "keys with the most revisions", "events", "/registry/leases/kube-node-lease/"},
		"html": {`id="c0-diagnose-data-data"`, "Resources", "Largest keys", "live (latest revision)"},
	} {
		r := runBin(t, runOpts{}, "diagnose", "data", "--data-dir", dataDir, "--predict=false", "-o", format)
		if r.code != exitOK {
			t.Fatalf("%s: exit %d: %s", format, r.code, r.stderr)
		}
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%s report lacks %q", format, w)
			}
		}
	}
}

// TestDiagnoseDataBadInput: each bad input is one line and its
// documented exit code, and nothing is written.
func TestDiagnoseDataBadInput(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("not an etcd db\n", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"no source", nil, exitUsage, "give one of --data-dir"},
		{"two sources", []string{"--data-dir", empty, "--snapshot", text}, exitUsage, "give one of --data-dir"},
		{"two endpoints", []string{"--endpoints", "a:1,b:2", "--dir", dir}, exitUsage, "one member's URL"},
		{"no --dir to predict on", []string{"--snapshot", text}, exitUsage, "--predict=false"},
		{"--dir missing", []string{"--snapshot", text, "--dir", filepath.Join(dir, "missing")}, exitUsage, "no such file or directory"},
		{"--dir a file", []string{"--snapshot", text, "--dir", text}, exitUsage, "not a directory"},
		{"not a db", []string{"--snapshot", text, "--predict=false"}, exitUsage, "not an etcd database"},
		{"no db in the data dir", []string{"--data-dir", empty, "--predict=false"}, exitUsage, "no etcd database here"},
		{"TLS without endpoints", []string{"--snapshot", text, "--predict=false", "--insecure-skip-tls-verify"}, exitUsage, "go with --endpoints"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, runOpts{}, append([]string{"diagnose", "data"}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.says) {
				t.Fatalf("exit %d, want %d; stderr %q, want %q", r.code, tc.code, r.stderr, tc.says)
			}
			checkOneErrorLine(t, r.stderr)
			if r.stdout != "" {
				t.Errorf("a bad input printed a report: %s", r.stdout)
			}
		})
	}
	if _, err := os.Stat("/usr/bin/etcd"); err != nil {
		testutil.Missing(t, "Debian's etcd (apt-get install etcd-server)")
	}
	dataDir := t.TempDir()
	e := hostetcd.Start(t, "datalocked", dataDir, "--unsafe-no-fsync")
	cli := e.Client(t)
	_, err := kubedata.Write(context.Background(), cli, kubedata.Config{ConfigMaps: 200, ValueBytes: 4096, Namespaces: 1, Seed: 4})
	cli.Close()
	if err != nil {
		t.Fatal(err)
	}
	small := loopmount.Tmpfs(t, 256<<10)
	for _, tc := range []struct {
		name string
		args []string
		code int
		says []string
	}{
		{"a running member's data dir", []string{"--data-dir", dataDir, "--predict=false"}, exitUsage, []string{"locked by a running etcd", "--endpoints", "--snapshot"}},
		{"too little space for the snapshot", []string{"--endpoints", e.Endpoint, "--dir", small, "--predict=false"}, exitRuntime, []string{"not enough free space"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, runOpts{}, append([]string{"diagnose", "data"}, tc.args...)...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, tc.code, r.stderr)
			}
			for _, s := range tc.says {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr %q lacks %q", r.stderr, s)
				}
			}
			checkOneErrorLine(t, r.stderr)
		})
	}
	if ents, _ := os.ReadDir(small); len(ents) > 0 {
		t.Errorf("written under --dir: %v", ents)
	}
}

// TestDiagnoseDataInterrupted: Ctrl-C while a live member's snapshot is
// streamed (the member frozen once the scratch directory is made)
// removes the scratch directory and exits 130.
func TestDiagnoseDataInterrupted(t *testing.T) {
	if _, err := os.Stat("/usr/bin/etcd"); err != nil {
		testutil.Missing(t, "Debian's etcd (apt-get install etcd-server)")
	}
	e := hostetcd.Start(t, "datasigint", "", "--unsafe-no-fsync")
	cli := e.Client(t)
	_, err := kubedata.Write(context.Background(), cli, kubedata.Config{ConfigMaps: 6000, ValueBytes: 8 << 10, Namespaces: 1, Seed: 6})
	cli.Close()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := start(t, runOpts{}, "diagnose", "data", "--endpoints", e.Endpoint, "--dir", dir, "--predict=false")
	// The scratch directory is made after the member's status and before
	// its snapshot: frozen then, the member holds the run in its stream.
	var scratchDir string
	testutil.WaitFor(t, time.Minute, "the scratch directory", func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, ".etcdbench-scratch-*"))
		if len(m) > 0 {
			scratchDir = m[0]
		}
		return scratchDir != "" || p.exited()
	})
	if scratchDir == "" {
		t.Fatalf("the run ended before its scratch directory was seen: %+v", p.wait(t))
	}
	if err := syscall.Kill(e.PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(e.PID(), syscall.SIGCONT) }()
	p.signal(t, syscall.SIGINT)
	r := p.wait(t)
	if r.code != exitInterrupted {
		t.Errorf("exit %d, want %d: %s", r.code, exitInterrupted, r.stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("left under --dir after Ctrl-C: %v", ents)
	}
}

// TestDiagnoseDataTLS streams the snapshot of a new embedded member (at
// revision 1, as etcd starts a store) that serves client TLS, with etcdctl's TLS flags; its quota comes from its
// /metrics over the same TLS, and -o prom carries the figures.
func TestDiagnoseDataTLS(t *testing.T) {
	dir := t.TempDir()
	pki := testutil.NewPKI(t, dir, "good")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const quota = 3 << 30
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: filepath.Join(dir, "data"), Members: 1, QuotaBackendBytes: quota, UnsafeNoFsync: true,
		ClientTLS: etcdcluster.TLSFiles{Cert: pki.ServerCert, Key: pki.ServerKey, CACert: pki.CA}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	base := []string{"diagnose", "data", "--endpoints", c.Endpoints()[0], "--dir", t.TempDir(), "--predict=false",
		"--cacert", pki.CA, "--cert", pki.ClientCert, "--key", pki.ClientKey}
	_, d := dataJSON(t, runOpts{}, append(base, "-o", "json")...)
	if d.Source != "endpoint" || !strings.HasPrefix(d.Endpoint, "https://") || d.DB.QuotaBytes != quota || d.DB.Revision != 1 {
		t.Errorf("data %+v", d)
	}
	r := runBin(t, runOpts{}, append(base, "-o", "prom")...)
	if r.code != exitOK || !strings.Contains(r.stdout, "db_in_use") || !strings.Contains(r.stdout, "quota") {
		t.Errorf("-o prom: exit %d: %s\n%s", r.code, r.stderr, r.stdout)
	}
}
