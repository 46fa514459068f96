package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
)

// memberPIDs returns the running member processes of 3-member embedded
// clusters (named etcdbench-memberN) whose data is under dir.
func memberPIDs(t *testing.T, dir string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !bytes.HasPrefix(cmdline, []byte("etcdbench-member")) {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := bytes.LastIndexByte(stat, ')'); err != nil || i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' {
			continue
		}
		// A member's configuration, with its data directory, is in its
		// environment.
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && bytes.Contains(env, []byte(dir)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestEtcdPutThreeMembers(t *testing.T) {
	dir := t.TempDir()
	res := runBin(t, runOpts{}, "etcd", "put", "--dir", dir, "--members", "3", "--total", "300", "--clients", "4", "-o", "json", "--no-progress")
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit %d, want 0 or 1; stderr:\n%s", res.code, res.stderr)
	}
	r, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatalf("stdout is not a result: %v\n%s", err, res.stdout)
	}
	w := r.Workloads[0]
	// Each member's own figures: every member fsyncs its WAL for every
	// put it stores, the leader and the followers alike.
	for i := range 3 {
		name := fmt.Sprintf("member%d_wal_fsyncs", i)
		if f := w.Figure(name); f == nil || f.Value < 1 {
			t.Errorf("%s = %+v, want at least 1", name, f)
		}
		if w.Figure(fmt.Sprintf("member%d_wal_fsync_p99", i)) == nil {
			t.Errorf("no member%d_wal_fsync_p99", i)
		}
	}
	if w.Figure("members_wal_fsyncs") != nil {
		t.Error("a summed members_ figure is still reported")
	}
	if notes := strings.Join(w.Notes, "\n"); !strings.Contains(notes, "embedded member 2 (its own process)") {
		t.Errorf("the notes do not say where member2's figures come from:\n%s", notes)
	}
	checkNoScratch(t, dir)
	if left := memberPIDs(t, dir); len(left) > 0 {
		t.Errorf("member processes %v still run after etcdbench exited", left)
	}
}

// TestEtcdThreeMembersKilled: a SIGKILLed etcdbench leaves no member
// processes behind.
func TestEtcdThreeMembersKilled(t *testing.T) {
	dir := t.TempDir()
	p := start(t, runOpts{}, "etcd", "put", "--dir", dir, "--members", "3", "--duration", "60s", "--clients", "2", "--no-progress")
	testutil.WaitFor(t, 30*time.Second, "three member processes", func() bool {
		if p.exited() {
			t.Fatalf("etcdbench exited: %+v", p.res)
		}
		return len(memberPIDs(t, dir)) == 3
	})
	p.signal(t, syscall.SIGKILL)
	if res := p.wait(t); res.code != -1 {
		t.Errorf("exit %d after SIGKILL", res.code)
	}
	testutil.WaitFor(t, 15*time.Second, "the member processes to die with etcdbench", func() bool {
		return len(memberPIDs(t, dir)) == 0
	})
}
