package report

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"etcdbench/internal/result"
)

// promtool checks the exposition like Prometheus' own linter does.
func promtool(t *testing.T, text []byte) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian package prometheus)")
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("promtool check metrics: %v\n%s\n--- input\n%s", err, out, text)
	}
}

func TestPromPassesPromtool(t *testing.T) {
	cases := map[string][]*result.Result{
		"sample":          {sample(t)},
		"disk all":        {readFixture(t, "disk-all-quick.json")},
		"etcd put":        {readFixture(t, "etcd-put.json")},
		"several results": {readFixture(t, "disk-wal.json"), readFixture(t, "etcd-put.json"), readFixture(t, "disk-all-quick.json")},
	}
	for name, rs := range cases {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Prom(&b, rs...); err != nil {
				t.Fatal(err)
			}
			promtool(t, b.Bytes())
		})
	}
}

func TestPromGolden(t *testing.T) {
	var b bytes.Buffer
	r := sample(t)
	r.Tool.Args = []string{"etcdbench disk wal", "--dir=/var/lib/etcd"} // as commandLine records it
	if err := Prom(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "wal.prom", b.Bytes())
	// client_golang writes the labels in name order.
	for _, want := range []string{
		`etcdbench_latency_seconds{command="disk wal",dir="/var/lib/etcd",operation="fdatasync",workload="wal",quantile="0.99"}`,
		`etcdbench_verdict{check="wal_fsync_p99",command="disk wal",dir="/var/lib/etcd",status="pass",workload="wal"} 1`,
		`etcdbench_verdict{check="wal_fsync_p99",command="disk wal",dir="/var/lib/etcd",status="fail",workload="wal"} 0`,
		`etcdbench_status{command="disk wal",dir="/var/lib/etcd",status="pass"} 1`,
		`etcdbench_latency_threshold_seconds{command="disk wal",dir="/var/lib/etcd",operation="fdatasync",workload="wal"} 0.01`,
		`etcdbench_last_run_timestamp_seconds{command="disk wal",dir="/var/lib/etcd"} 1.79530921e+09`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("exposition lacks %s", want)
		}
	}
}

func TestPromRejectsDuplicateSeries(t *testing.T) {
	if err := Prom(&bytes.Buffer{}, sample(t), sample(t)); err == nil {
		t.Fatal("two results of the same command gave duplicate series without an error")
	}
	// The same command on another disk is another set of series, in
	// another file.
	a, b := sample(t), sample(t)
	b.Environment.Dir = "/mnt/other disk"
	var out bytes.Buffer
	if err := Prom(&out, a, b); err != nil {
		t.Fatal(err)
	}
	promtool(t, out.Bytes())
	if PromFileName(a) == PromFileName(b) || PromFileName(b) != "etcdbench_default_mnt_other_disk.prom" {
		t.Errorf("file names %s and %s", PromFileName(a), PromFileName(b))
	}
}

func TestWriteTextfileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	r := readFixture(t, "etcd-put.json")
	path, err := WriteTextfile(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "etcdbench_etcd_put_tmp_fx.prom" {
		t.Errorf("file %s", path)
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 {
		t.Fatalf("directory holds %v (%v): a temporary file was left", ents, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	promtool(t, b)
	// Rewriting replaces the file.
	if _, err := WriteTextfile(dir, r); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("after a rewrite the directory holds %d files", len(ents))
	}
	if _, err := WriteTextfile(filepath.Join(dir, "missing"), r); err == nil {
		t.Fatal("wrote into a missing directory")
	}
}

func TestPromCommandLabel(t *testing.T) {
	for args, want := range map[string]string{
		"etcdbench disk wal": "disk wal", "etcdbench": "default", "etcdbench etcd put": "etcd put", "/usr/bin/etcdbench judge": "judge",
	} {
		r := &result.Result{Tool: result.Tool{Args: []string{args, "--x=1"}}}
		if got := promCommand(r); got != want {
			t.Errorf("%q: %q, want %q", args, got, want)
		}
	}
}
