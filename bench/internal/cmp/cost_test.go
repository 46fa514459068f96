package cmp

import (
	"os"
	"testing"
	"time"
)

func TestFdinfoValue(t *testing.T) {
	info := []byte("pos:\t0\nprog_type:\t5\nprog_id:\t3634\nrun_time_ns:\t123456\nrun_cnt:\t9\n")
	if got := fdinfoValue(info, "run_time_ns"); got != 123456 {
		t.Errorf("run_time_ns = %d, want 123456", got)
	}
	if got := fdinfoValue(info, "recursion_misses"); got != 0 {
		t.Errorf("a missing key read as %d", got)
	}
}

func TestShare(t *testing.T) {
	a := CostSample{At: time.Unix(100, 0)}
	b := CostSample{At: time.Unix(102, 0), ProcNs: int64(40 * time.Millisecond), BPFNs: int64(80 * time.Millisecond)}
	p, bp := Share(a, b, 2) // 4 CPU-seconds of machine
	if p != 0.01 || bp != 0.02 {
		t.Errorf("share = %g, %g; want 0.01 and 0.02", p, bp)
	}
}

// TestSampleCostSelf reads this process: CPU time moves, and a process
// without BPF programs has none.
func TestSampleCostSelf(t *testing.T) {
	s, err := SampleCost(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.BPFNs != 0 || s.ProcNs < 0 {
		t.Errorf("sample %+v: want some CPU and no BPF run time", s)
	}
}
