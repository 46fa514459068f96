package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/testutil"
	"etcdbench/internal/verdict"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// sample builds a fixed result, as a WAL run on a virtio disk would give.
func sample(t *testing.T) *result.Result {
	t.Helper()
	h := stats.NewLatencyHistogram()
	for i := int64(1); i <= 10000; i++ {
		stats.Record(h, time.Duration(200_000+i*30)) // 200us .. 500us
	}
	stats.Record(h, 12*time.Millisecond)
	enc, err := stats.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	ci := stats.PercentileCI(h, 0.99, float64(h.TotalCount()), 0.95)
	rot := true
	start := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	r := &result.Result{
		Schema:    result.SchemaID,
		Tool:      result.Tool{Name: "etcdbench", Version: "0.1.0-test", GoVersion: "go1.26", Args: []string{"etcdbench", "disk", "wal", "--dir=/var/lib/etcd"}},
		StartedAt: start,
		Environment: sysinfo.Facts{
			Dir:        "/var/lib/etcd",
			Filesystem: sysinfo.Filesystem{Type: "ext4", Source: "/dev/vda1", MountPoint: "/", MountOptions: "rw,relatime", MajorMinor: "254:1"},
			Device:     &sysinfo.Device{Name: "vda", Partition: "vda1", Rotational: &rot, Scheduler: "mq-deadline", WriteCache: "write back", Virtual: true, Driver: "virtio_blk"},
			Kernel:     "6.18.0", CPUs: 2, CPUModel: "Test CPU", MemTotalBytes: 24 << 30,
		},
		Workloads: []result.Workload{{
			Name: "wal", Description: "etcd WAL appends",
			Parameters: map[string]any{"block_size": 2300},
			Stop:       result.Stop{Mode: "adaptive", Reason: "verdict decided", Outcome: stats.Pass, Looks: 1},
			Ops:        10001, Bytes: 10001 * 2300, DurationNs: int64(10 * time.Second), OpsPerSec: 1000.1, BytesPerSec: 2300230,
			Latencies: []result.Latency{{
				Name: "fdatasync", Summary: stats.Summarize(h), P99CI: &ci, Histogram: enc,
				Exceedance: &result.Exceedance{ThresholdNs: int64(10 * time.Millisecond), Count: 1, Fraction: 1e-4,
					Interval: stats.Interval{Level: 0.95, Lower: 2.5e-6, Upper: 5.6e-4}, DesignEffect: 1, NEff: 10001},
			}},
			Series: []stats.SecondSample{{T: 1, Ops: 1000, P99Ns: 480000, MaxNs: 500000}},
			Verdicts: verdict.JudgeWAL(verdict.Defaults(), verdict.WALFigures{
				P50: time.Duration(h.ValueAtPercentile(50)), P99: time.Duration(h.ValueAtPercentile(99)), P99CI: ci,
				Outcome: stats.Pass, Level: 0.95, Method: "test", Bounds: "test", SyncIOPS: 1000.1, FSType: "ext4",
				Rotational: &rot, VirtualDisk: true,
			}),
			Notes: []string{"a note"},
		}},
	}
	r.Finish(start.Add(10 * time.Second))
	return r
}

// golden compares got with testdata/name, rewritten under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name), got, *update)
}

func TestTextGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, sample(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "wal.txt", b.Bytes())
	for _, want := range []string{"PASS  WAL fdatasync p99", "decided at 95 % confidence", "source: etcd FAQ", "Result: PASS", "virtual disk"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text report lacks %q", want)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	r := sample(t)
	var b bytes.Buffer
	if err := JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "wal.json", b.Bytes())
	back, err := result.Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if back.Status == nil || *back.Status != verdict.Pass || back.Workloads[0].Ops != 10001 {
		t.Fatalf("round trip lost data: %+v", back.Workloads[0])
	}
	h, err := stats.Decode(back.Workloads[0].Latencies[0].Histogram)
	if err != nil || h.TotalCount() != 10001 {
		t.Fatalf("histogram did not survive: %v", err)
	}
	// A re-read result renders the same text as the original.
	var a, c bytes.Buffer
	if err := Text(&a, r); err != nil {
		t.Fatal(err)
	}
	if err := Text(&c, back); err != nil {
		t.Fatal(err)
	}
	if a.String() != c.String() {
		t.Errorf("text of a re-read result differs:\n%s\n---\n%s", a.String(), c.String())
	}
}

func TestReadRejectsOtherFiles(t *testing.T) {
	for _, in := range []string{`{"schema":"something/v9"}`, `not json`, `{}`} {
		if _, err := result.Read(strings.NewReader(in)); err == nil {
			t.Errorf("Read(%q) accepted", in)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestWriteErrorsAreReturned(t *testing.T) {
	if err := Text(failWriter{}, sample(t)); err == nil {
		t.Error("Text hid a write error")
	}
	if err := JSON(failWriter{}, sample(t)); err == nil {
		t.Error("JSON hid a write error")
	}
}

// judgedFromFio is sample as the judge command gives it: fio's output
// names the directory and the busy device, nothing else about the machine.
func judgedFromFio(t *testing.T) *result.Result {
	r := sample(t)
	r.Environment = sysinfo.Facts{
		Dir:    "/var/lib/etcd",
		Device: &sysinfo.Device{Name: "vda"},
		Notes:  []string{"judged from fio's JSON output: fio does not record the machine, filesystem or device"},
	}
	return r
}

// Facts a result lacks read "not recorded", never as a zero measured.
func TestEnvironmentNotRecorded(t *testing.T) {
	r := judgedFromFio(t)
	var txt, page bytes.Buffer
	if err := Text(&txt, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "env-not-recorded.txt", txt.Bytes())
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	s := page.String()
	env := s[strings.Index(s, `<section id="environment">`):]
	env = env[:strings.Index(env, "</section>")+len("</section>")]
	golden(t, "env-not-recorded.html", []byte(env+"\n"))
	for name, out := range map[string]string{"text": txt.String(), "HTML": env} {
		for _, bad := range []string{"0 CPUs", "<td>0 </td>", "0 B", "unknown"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s environment shows %q for a fact not recorded", name, bad)
			}
		}
	}
	for _, want := range []string{"kernel not recorded", "CPUs not recorded", "memory not recorded", "filesystem  not recorded"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text environment lacks %q", want)
		}
	}
	for _, row := range []string{"kernel", "CPUs", "memory", "filesystem"} {
		if want := "<tr><th>" + row + "</th><td>not recorded</td></tr>"; !strings.Contains(env, want) {
			t.Errorf("HTML environment lacks %q", want)
		}
	}
}

func TestSystemOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  sysinfo.Facts
		want system
	}{
		{"all recorded", sysinfo.Facts{Kernel: "6.18.0", CPUs: 2, CPUModel: "Test CPU", MemTotalBytes: 24 << 30}, system{"6.18.0", "2 Test CPU", "24.0 GiB"}},
		{"none recorded", sysinfo.Facts{}, system{"not recorded", "not recorded", "not recorded"}},
		{"CPU model without a count", sysinfo.Facts{CPUModel: "Test CPU"}, system{"not recorded", "number not recorded (Test CPU)", "not recorded"}},
		{"count without a model", sysinfo.Facts{CPUs: 4}, system{"not recorded", "4", "not recorded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := systemOf(tc.env); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
