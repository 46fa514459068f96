package report

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"etcdbench/internal/result"
)

// TestWorkloadSummaryCounts holds each workload's summary line, in text and
// HTML, to what its ops are: an etcd load's requests (its syncs are etcd's,
// in its figures), a WAL test's write+fdatasync cycles, other operations.
func TestWorkloadSummaryCounts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wl      result.Workload
		want    string
		notWant string
	}{
		{"closed-loop etcd range (its rate parameter is 0)",
			result.Workload{Name: "etcd-range", Parameters: map[string]any{"rate": 0.0, "loop": "closed"}, Ops: 13952, DurationNs: 2e9, OpsPerSec: 6976},
			"13952 requests in 2s: 6976 requests/s", "fdatasync"},
		{"open-loop etcd put",
			result.Workload{Name: "etcd-put", Parameters: map[string]any{"rate": 500.0, "loop": "open"}, Ops: 1000, Bytes: 1 << 20, DurationNs: 2e9, OpsPerSec: 500, BytesPerSec: 1 << 19},
			"1000 requests, 1.0 MiB in 2s: 500 requests/s, 512.0 KiB/s", "syncs/s"},
		{"etcd check perf load",
			result.Workload{Name: "etcd-check-m", Parameters: map[string]any{"rate": 1000.0}, Ops: 3000, Bytes: 3000, DurationNs: 3e9, OpsPerSec: 1000, BytesPerSec: 1000},
			"3000 requests, 2.9 KiB in 3s: 1000 requests/s", "cycles"},
		{"open-loop disk WAL",
			result.Workload{Name: "wal", Parameters: map[string]any{"rate": 200.0, "block_size": 2300}, Ops: 400, Bytes: 920000, DurationNs: 2e9, OpsPerSec: 200, BytesPerSec: 460000},
			"400 write+fdatasync cycles, 898.4 KiB in 2s: 200 syncs/s", "requests"},
		{"closed-loop disk WAL",
			result.Workload{Name: "wal", Parameters: map[string]any{"block_size": 2300}, Ops: 1000, Bytes: 2300000, DurationNs: 1e9, OpsPerSec: 1000, BytesPerSec: 2300000},
			"1000 write+fdatasync cycles of 2300 bytes (2.2 MiB) in 1s: 1000 IOPS", "requests"},
		{"WAL under load",
			result.Workload{Name: "wal-under-load", Parameters: map[string]any{"block_size": 370}, Ops: 100, Bytes: 37000, DurationNs: 1e9, OpsPerSec: 100, BytesPerSec: 37000},
			"100 write+fdatasync cycles, 36.1 KiB in 1s: 100 syncs/s", "requests"},
		{"backend commits",
			result.Workload{Name: "backend", Parameters: map[string]any{}, Ops: 50, Bytes: 4096, DurationNs: 1e9, OpsPerSec: 50, BytesPerSec: 4096},
			"50 operations, 4.0 KiB in 1s: 50 ops/s", "fdatasync"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sample(t)
			r.Workloads = []result.Workload{tc.wl}
			var txt, page bytes.Buffer
			if err := Text(&txt, r); err != nil {
				t.Fatal(err)
			}
			if err := HTML(&page, r); err != nil {
				t.Fatal(err)
			}
			for format, out := range map[string]string{"text": txt.String(), "html": html.UnescapeString(page.String())} {
				summary := summaryLineIn(out, tc.want)
				if summary == "" {
					t.Errorf("%s: no summary %q in the report", format, tc.want)
					continue
				}
				if strings.Contains(summary, tc.notWant) {
					t.Errorf("%s: summary %q says %q", format, summary, tc.notWant)
				}
			}
		})
	}
}

// summaryLineIn is the line of out holding want, "" when none does.
func summaryLineIn(out, want string) string {
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, want) {
			return line
		}
	}
	return ""
}
