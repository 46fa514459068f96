package diagnose

import (
	"encoding/json"
	"math"
	"os"
	"testing"
	"time"

	"etcdbench/internal/verdict"
)

// FuzzDiagnoseScrapes feeds two arbitrary /metrics texts through the whole
// diagnosis: nothing may panic, there is always at least one verdict, and
// every figure is a finite number (the JSON report must encode).
func FuzzDiagnoseScrapes(f *testing.F) {
	for _, pair := range [][2]string{{"etcd37-slowdisk-before.txt", "etcd37-slowdisk-after.txt"}, {"etcd34-before.txt", "etcd34-after.txt"}} {
		b, errb := os.ReadFile("testdata/" + pair[0])
		a, erra := os.ReadFile("testdata/" + pair[1])
		if errb == nil && erra == nil {
			// The etcd_disk_* families at the start of each capture:
			// whole captures make every mutation slow.
			f.Add(b[:min(len(b), 4096)], a[:min(len(a), 4096)])
		}
	}
	f.Add([]byte("# TYPE etcd_server_has_leader gauge\netcd_server_has_leader 0\n"), []byte("# TYPE etcd_server_has_leader gauge\netcd_server_has_leader 0\n"))
	f.Add([]byte("# TYPE etcd_server_slow_apply_total counter\netcd_server_slow_apply_total 9\n"), []byte("# TYPE etcd_server_slow_apply_total counter\netcd_server_slow_apply_total 3\n"))
	f.Fuzz(func(t *testing.T, before, after []byte) {
		a, err := ParseScrape("member0", "after", after)
		if err != nil {
			return
		}
		var bs []Scrape
		if b, err := ParseScrape("member0", "before", before); err == nil {
			bs = []Scrape{b}
		}
		ev := FromScrapes(bs, []Scrape{a}, 5*time.Second, 2)
		rules := Rules()
		fs := Diagnose(ev, verdict.DiagnoseDefaults(), rules)
		w := Workload("diagnose-metrics", ev, fs, rules)
		if len(w.Verdicts) == 0 {
			t.Fatal("no verdict")
		}
		for _, fig := range w.Figures {
			if math.IsNaN(fig.Value) || math.IsInf(fig.Value, 0) {
				t.Fatalf("figure %s is %v", fig.Name, fig.Value)
			}
		}
		if _, err := json.Marshal(w); err != nil {
			t.Fatalf("the workload does not encode: %v", err)
		}
	})
}
