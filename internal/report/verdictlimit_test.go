package report

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

// TestVerdictLinesShowTheLimitCrossed holds the verdict lines of text
// (the workload's and the table's) and HTML to the limit that made the
// status: a WARN's warn limit, a FAIL's fail limit.
func TestVerdictLinesShowTheLimitCrossed(t *testing.T) {
	warnAt := 500.0
	iops := func(status verdict.Status, value float64) verdict.Verdict {
		return verdict.Verdict{Check: "sync_iops_min", Title: "sequential synced IOPS", Status: status, Value: value, Unit: "ops/s",
			Limit: 50, WarnLimit: &warnAt, Comparison: ">=", Source: "s", Detail: "d"}
	}
	for _, c := range []struct {
		name            string
		v               verdict.Verdict
		line, row, cell string
	}{
		{"WARN against the warn limit", iops(verdict.Warn, 442), "WARN  sequential synced IOPS 442/s (limit >= 500/s)", ">= 500/s", "&gt;= 500/s"},
		{"FAIL against the fail limit", iops(verdict.Fail, 40), "FAIL  sequential synced IOPS 40/s (limit >= 50/s)", ">= 50/s", "&gt;= 50/s"},
		// check's closed-loop WAL FAIL on a storage that carries etcd's
		// load: its line and row say how it counts.
		{"an advisory FAIL", func() verdict.Verdict { v := iops(verdict.Fail, 40); v.Advisory = true; return v }(),
			"FAIL  sequential synced IOPS 40/s (limit >= 50/s; counted as a WARN)", ">= 50/s (counted as a WARN)", "&gt;= 50/s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sample(t)
			r.Workloads = []result.Workload{
				{Name: "wal", Parameters: map[string]any{}, Verdicts: []verdict.Verdict{c.v}},
				{Name: "wal-under-load", Parameters: map[string]any{}}, // two workloads: the table is printed
			}
			var txt, page bytes.Buffer
			if err := Text(&txt, r); err != nil {
				t.Fatal(err)
			}
			if err := HTML(&page, r); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(txt.String(), c.line) {
				t.Errorf("text has no line %q:\n%s", c.line, txt.String())
			}
			row := summaryLineIn(txt.String(), "  "+c.v.Status.String()+"  wal ")
			if !strings.HasSuffix(strings.TrimSpace(row), c.row) {
				t.Errorf("verdict table row %q, want it to end %q", row, c.row)
			}
			if got := page.String(); !strings.Contains(got, `<td class="num">`+c.cell+`</td>`) {
				t.Errorf("HTML has no limit cell %q:\n%s", html.UnescapeString(c.cell), got)
			}
		})
	}
}
