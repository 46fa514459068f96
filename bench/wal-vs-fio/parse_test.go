package main

import (
	"strconv"
	"strings"
	"testing"

	"etcdbench/bench/internal/cmp/cmptest"
)

// fioJSON builds a minimal fio report with one job per (N, p50, p99).
func fioJSON(jobs ...[3]int64) string {
	var parts []string
	for i, j := range jobs {
		parts = append(parts, `{"jobname":"j`+itoa(int64(i))+`","error":0,"sync":{"total_ios":0,"lat_ns":{"N":`+itoa(j[0])+
			`,"percentile":{"1.000000":1,"50.000000":`+itoa(j[1])+`,"99.000000":`+itoa(j[2])+`}}}}`)
	}
	return `{"fio version":"fio-3.33","jobs":[` + strings.Join(parts, ",") + `]}`
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestParseFio(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []syncStats
		total   syncStats
		wantErr string
	}{
		{
			name:  "one job",
			in:    fioJSON([3]int64{10029, 254976, 407552}),
			want:  []syncStats{{10029, 254976, 407552}},
			total: syncStats{10029, 254976, 407552},
		},
		{
			name:  "numjobs 2 sums syncs and keeps the worst percentiles",
			in:    fioJSON([3]int64{100, 300, 900}, [3]int64{50, 400, 800}),
			want:  []syncStats{{100, 300, 900}, {50, 400, 800}},
			total: syncStats{150, 400, 900},
		},
		{
			name:  "warnings before the report",
			in:    "fio: some warning\n" + fioJSON([3]int64{5, 10, 20}) + "\ntrailing text",
			want:  []syncStats{{5, 10, 20}},
			total: syncStats{5, 10, 20},
		},
		{name: "not JSON", in: "fio: file not found", wantErr: "no JSON object"},
		{name: "no jobs", in: `{"jobs":[]}`, wantErr: "no jobs"},
		{name: "job error", in: `{"jobs":[{"jobname":"x","error":5}]}`, wantErr: "error 5"},
		{name: "no sync section", in: `{"jobs":[{"jobname":"x","error":0}]}`, wantErr: "too old"},
		{name: "no fdatasync", in: `{"jobs":[{"jobname":"x","sync":{"lat_ns":{"N":0}}}]}`, wantErr: "--fdatasync=1"},
		{name: "no p99", in: `{"jobs":[{"jobname":"x","sync":{"lat_ns":{"N":3,"percentile":{"50.000000":1}}}}]}`, wantErr: `"99.000000"`},
		{name: "truncated", in: `{"jobs":[{"jobname":"x"`, wantErr: "reading fio's JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFio([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Jobs) != len(tc.want) {
				t.Fatalf("%d jobs, want %d", len(got.Jobs), len(tc.want))
			}
			for i, j := range got.Jobs {
				if j.syncStats != tc.want[i] {
					t.Errorf("job %d = %+v, want %+v", i, j.syncStats, tc.want[i])
				}
			}
			if tot := got.Total(); tot != tc.total {
				t.Errorf("Total() = %+v, want %+v", tot, tc.total)
			}
		})
	}
}

// TestParseFioNumjobs reads a real fio 3.33 report of --numjobs=2.
func TestParseFioNumjobs(t *testing.T) {
	got, err := parseFio(cmptest.ReadFixture(t, "fio-numjobs2.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []fioJob{
		{Name: "walvsfio", syncStats: syncStats{227, 337920, 1286144}},
		{Name: "walvsfio", syncStats: syncStats{227, 342016, 1253376}},
	}
	if got.Version != "fio-3.33" || len(got.Jobs) != 2 || got.Jobs[0] != want[0] || got.Jobs[1] != want[1] {
		t.Fatalf("got %+v, want version fio-3.33 and jobs %+v", got, want)
	}
	if tot, w := got.Total(), (syncStats{454, 342016, 1286144}); tot != w {
		t.Errorf("Total() = %+v, want %+v", tot, w)
	}
}

func TestParseEtcdbench(t *testing.T) {
	wal := func(lat string) string {
		return `{"schema":"etcdbench.result/v1","workloads":[{"name":"other"},{"name":"wal","ops":7,"duration_ns":1000,"stop":{"mode":"size","reason":"done"},"latencies":[` + lat + `]}]}`
	}
	tests := []struct {
		name    string
		in      string
		want    ebResult
		wantErr string
	}{
		{
			name: "wal workload among others",
			in:   wal(`{"name":"write","count":7,"percentiles":[{"p":50,"value_ns":1},{"p":99,"value_ns":2}]},{"name":"fdatasync","count":7,"percentiles":[{"p":50,"value_ns":300},{"p":90,"value_ns":350},{"p":99,"value_ns":400}]}`),
			want: ebResult{syncStats: syncStats{7, 300, 400}, Duration: 1000, StopMode: "size", StopReason: "done"},
		},
		{name: "not an etcdbench result", in: `{"workloads":[]}`, wantErr: "not an etcdbench result"},
		{name: "no wal workload", in: `{"schema":"etcdbench.result/v1","workloads":[{"name":"backend"}]}`, wantErr: `no "wal" workload`},
		{name: "no fdatasync", in: wal(`{"name":"write","count":7}`), wantErr: "no fdatasync latencies"},
		{name: "zero count", in: wal(`{"name":"fdatasync","count":0}`), wantErr: "recorded no fdatasync"},
		{name: "no p99", in: wal(`{"name":"fdatasync","count":1,"percentiles":[{"p":50,"value_ns":3}]}`), wantErr: "99th"},
		{name: "empty", in: ``, wantErr: "no JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseEtcdbench([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Dist.Values) != 0 {
				t.Errorf("a latency without a histogram gave the dist %+v", got.Dist)
			}
			if !sameFigures(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestParseEtcdbenchReport reads a real `etcdbench disk wal --size 512k
// -o json`: its figures, and its histogram, whose percentiles by the
// pooled comparison's rule are the ones etcdbench reported.
func TestParseEtcdbenchReport(t *testing.T) {
	got, err := parseEtcdbench(cmptest.ReadFixture(t, "etcdbench-size.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := ebResult{syncStats: syncStats{227, 205823, 531455}, Duration: 49882511,
		StopMode: "size", StopReason: "wrote the requested 522100 bytes"}
	if !sameFigures(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	checkDist(t, got.Dist, 227, map[float64]int64{50: 205823, 90: 312831, 99: 531455, 99.9: 1620991})
}

// TestParseFioJSONPlus reads a real fio 3.33 json+ report of the recipe
// (--size=512k): its bins hold every sync, and their percentiles by the
// pooled comparison's rule are the ones fio reported.
func TestParseFioJSONPlus(t *testing.T) {
	got, err := parseFio(cmptest.ReadFixture(t, "fio-jsonplus.json"))
	if err != nil {
		t.Fatal(err)
	}
	if tot, want := got.Total(), (syncStats{227, 177152, 757760}); tot != want {
		t.Errorf("Total() = %+v, want %+v", tot, want)
	}
	checkDist(t, got.Dist, 227, map[float64]int64{50: 177152, 99: 757760, 99.9: 1646592})
	if r, err := parseFio(cmptest.ReadFixture(t, "fio-numjobs2.json")); err != nil || len(r.Dist.Values) != 0 {
		t.Errorf("a json report (no bins) gave the dist %+v, err %v; want none", r.Dist, err)
	}
	bad := `{"jobs":[{"jobname":"x","sync":{"lat_ns":{"N":3,"percentile":{"50.000000":1,"99.000000":2},"bins":{"1":2}}}}]}`
	if _, err := parseFio([]byte(bad)); err == nil || !strings.Contains(err.Error(), "hold 2 samples") {
		t.Errorf("bins short of the sync count: err = %v", err)
	}
}

// sameFigures compares everything but the dists.
func sameFigures(a, b ebResult) bool {
	return a.syncStats == b.syncStats && a.Duration == b.Duration && a.StopMode == b.StopMode && a.StopReason == b.StopReason
}

// checkDist checks that d holds n samples and has the values want at the
// given percentiles.
func checkDist(t *testing.T, d dist, n int64, want map[float64]int64) {
	t.Helper()
	if d.N() != n {
		t.Errorf("dist holds %d samples, want %d", d.N(), n)
	}
	p := newPool([]dist{d})
	for pct, v := range want {
		if got := p.quantiles([]int{1}, []float64{pct})[0]; got != float64(v) {
			t.Errorf("p%v = %v, want %d", pct, got, v)
		}
	}
}

func FuzzParseFio(f *testing.F) {
	f.Add(cmptest.ReadFixture(f, "fio-numjobs2.json"))
	f.Add([]byte(fioJSON([3]int64{1, 2, 3})))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseFio(b)
		if err != nil {
			return
		}
		if len(r.Jobs) == 0 {
			t.Fatal("no error and no jobs")
		}
		for _, j := range r.Jobs {
			if j.Syncs <= 0 || j.P50 < 0 || j.P99 < 0 {
				t.Fatalf("implausible job accepted: %+v", j)
			}
		}
	})
}

func FuzzParseEtcdbench(f *testing.F) {
	f.Add(cmptest.ReadFixture(f, "etcdbench-size.json"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseEtcdbench(b)
		if err == nil && r.Syncs <= 0 {
			t.Fatalf("no error and no syncs: %+v", r)
		}
	})
}
