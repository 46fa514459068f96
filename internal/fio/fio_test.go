package fio

import (
	"errors"
	"os"
	"testing"

	"etcdbench/internal/verdict"
)

func TestParseRecipeOutput(t *testing.T) {
	b, err := os.ReadFile("testdata/wal-recipe.json")
	if err != nil {
		t.Fatal(err)
	}
	o, err := Parse(append([]byte("fio: some warning\n"), b...))
	if err != nil {
		t.Fatal(err)
	}
	j := o.Jobs[0]
	if o.Version == "" || j.Name != "mytest" || j.Sync == nil || j.Sync.Lat.N == 0 || j.Sync.Lat.N != j.Write.TotalIOs {
		t.Fatalf("job %+v", j)
	}
	p50, ok50 := j.Sync.Lat.At(50)
	p99, ok99 := j.Sync.Lat.At(99)
	if !ok50 || !ok99 || p50 <= 0 || p99 < p50 {
		t.Fatalf("p50 %d (%v) p99 %d (%v)", p50, ok50, p99, ok99)
	}
	if _, ok := j.Sync.Lat.At(12.5); ok {
		t.Fatal("invented a percentile fio did not print")
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want error
	}{
		{"empty", "", nil},
		{"not json", "fio: unrecognized option", nil},
		{"no jobs", `{"fio version":"fio-3.33","jobs":[]}`, ErrNoJobs},
		{"truncated", `{"jobs":[{"jobname":`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.in))
			if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("testdata/wal-recipe.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"jobs":[{"sync":{"lat_ns":{"percentile":{"99.000000":5}}}}]}`))
	f.Add([]byte(`{"jobs":[{"groupid":1,"job options":{"numjobs":"2"},"sync":{"lat_ns":{"N":3,"max":9,"bins":{"5":2,"9":1}}},"write":{"total_ios":3,"iops":10}}]}`))
	f.Add([]byte(`{"jobs":[{"sync":{"lat_ns":{"N":-4,"percentile":{"50.000000":-1,"x":3}}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := Parse(b)
		if err == nil && len(o.Jobs) == 0 {
			t.Fatal("nil error without jobs")
		}
		if err != nil {
			return
		}
		// Merging and judging whatever parsed must not panic, and a judged
		// result has a workload per group.
		gs, err := Groups(o)
		if err != nil {
			return
		}
		r, err := Judge(o, JudgeOptions{Thresholds: verdict.Defaults(), Confidence: 0.95})
		if err == nil && len(r.Workloads) != len(gs) {
			t.Fatalf("%d groups judged as %d workloads", len(gs), len(r.Workloads))
		}
	})
}
