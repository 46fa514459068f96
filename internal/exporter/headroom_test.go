package exporter

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/testutil"
)

// TestHeadroomServed: with --capacity a saved result measured on a real
// etcd's volume, the exporter serves that member's estimate, the
// volume's cap, its put rate and the ratio of the two (the rate's
// arithmetic: headroom's TestHeadroomRealEtcd), and its status page
// shows the file and the ratio; a garbage file beside it is refused
// (file_ok 0) while the exporter keeps serving.
func TestHeadroomServed(t *testing.T) {
	e := startEtcd(t, "hs")
	dir := t.TempDir()
	good, garbage := filepath.Join(dir, "capacity.json"), filepath.Join(dir, "garbage.json")
	r := result.Result{Schema: result.SchemaID, Environment: sysinfo.Collect("/", e.DataDir), Workloads: []result.Workload{{Name: "capacity",
		Capacity: &result.Capacity{Rate: 900, Etcd: &result.CapacityEstimate{Rate: 250}, Volume: &result.CapacityVolume{WriteIOPS: 1000, WriteBytesPerSec: 4e6}}}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(good, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(garbage, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, ex := serveWith(t, Config{Filter: Filter{DataDirs: []string{e.DataDir}}, Interval: 200 * time.Millisecond, Logf: t.Logf,
		CapacityFiles: []string{good, garbage}})
	member := map[string]string{"member": "hs", "data_dir": e.DataDir}
	testutil.WaitFor(t, 30*time.Second, "the member's estimate", func() bool {
		m := series(t, ex.Registry(), "etcdbench_capacity_puts_per_second", member)
		return m != nil && m.GetGauge().GetValue() == 250
	})
	e.Put(t, 500, 4)
	testutil.WaitFor(t, 30*time.Second, "a put rate above 0", func() bool {
		m := series(t, ex.Registry(), "etcdbench_capacity_member_puts_per_second", member)
		return m != nil && m.GetGauge().GetValue() > 0
	})
	rate := series(t, ex.Registry(), "etcdbench_capacity_member_puts_per_second", member).GetGauge().GetValue()
	ratio := series(t, ex.Registry(), "etcdbench_capacity_used_ratio", member)
	if ratio == nil || ratio.GetGauge().GetValue() != rate/250 {
		t.Errorf("used ratio %v, want the put rate %v over 250", ratio, rate)
	}
	if v := series(t, ex.Registry(), "etcdbench_capacity_volume_write_iops", member); v == nil || v.GetGauge().GetValue() != 1000 {
		t.Errorf("volume write IOPS %v, want 1000", v)
	}
	for path, want := range map[string]float64{good: 1, garbage: 0} {
		if m := series(t, ex.Registry(), "etcdbench_capacity_file_ok", map[string]string{"file": path}); m == nil || m.GetGauge().GetValue() != want {
			t.Errorf("file_ok{file=%s} = %v, want %v", path, m, want)
		}
	}
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`id="headroom-members"`, good, "refused: not an etcdbench result"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("status page lacks %q:\n%s", want, page)
		}
	}
}
