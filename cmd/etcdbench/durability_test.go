package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"etcdbench/internal/testutil/loopmount"
	"etcdbench/internal/verdict"
)

// TestCheckBarrierZero runs the check as an operator would on ext4
// mounted barrier=0 (an image on a loop device): everything is fast, and
// the answer must open with why - writes are not made durable - in the
// findings and at the top of the text report, and the run must fail.
func TestCheckBarrierZero(t *testing.T) {
	m := loopmount.Mount(t, "", "ext4", "barrier=0", 512<<20)
	before := snapshot(t, m.Dir)
	// Without the etcd side: the answer here is the durability finding,
	// and the side's estimate line would come before it.
	r, res := checkResult(t, runOpts{}, "--dir", m.Dir, "--cpu=false")
	if res.code != exitFail {
		t.Errorf("exit %d on a barrier=0 mount, want %d", res.code, exitFail)
	}
	if v := r.Workloads[0].Verdicts; len(v) == 0 || v[0].Check != verdict.CheckMountFlushDisabled {
		t.Errorf("the WAL's first verdict is not %s: %+v", verdict.CheckMountFlushDisabled, v)
	}
	if r.Environment.Stack == nil || !strings.HasPrefix(r.Environment.Stack.Chain, strings.TrimPrefix(m.Loop, "/dev/")+" -> file "+m.Image) {
		t.Errorf("storage chain %+v, want it to start at %s and its image", r.Environment.Stack, m.Loop)
	}
	notes := strings.Join(summary(t, r).Notes, "\n")
	if !strings.HasPrefix(notes, "finding 1 (FAIL): fast because writes are not made durable") {
		t.Errorf("the first finding is not the durability FAIL:\n%s", notes)
	}
	// The text report of the same result: report renders a saved
	// result as the check renders its own.
	saved := filepath.Join(t.TempDir(), "check.json")
	if err := os.WriteFile(saved, []byte(res.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	text := runBin(t, runOpts{}, "report", saved)
	if !strings.HasPrefix(text.stdout, "FAIL  wal: fdatasync flushes the disk cache (fast because writes are not made durable)") {
		t.Errorf("the text report does not open with the durability FAIL:\n%s", text.stdout[:min(len(text.stdout), 600)])
	}
	checkSnapshot(t, m.Dir, before)
}
