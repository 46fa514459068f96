package main

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/scratch"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/testutil"
)

// dirWithPrecious returns a new directory holding a file of random content
// that no run may touch.
func dirWithPrecious(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	writePrecious(t, d)
	return d
}

// writePrecious writes the file a run must leave as it was into d.
func writePrecious(t *testing.T, d string) {
	t.Helper()
	b := make([]byte, 256<<10)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "precious.dat"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// hasSegment reports whether the scratch directory holds a second WAL
// segment (in the workload's own subdirectory), i.e. the timed loop has
// started and the pipeline is running.
func hasSegment(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*", "*.wal"))
	return len(m) >= 2
}

// TestSignals stops running checks with SIGINT and SIGTERM: each must exit
// 128+signal, say so on one line, and leave the directory exactly as it was.
// As the README says, the report is a partial one without a verdict; an
// interrupted check never says the disk meets etcd's limits.
func TestSignals(t *testing.T) {
	tests := []struct {
		name     string
		sigs     []syscall.Signal // sent back to back; later ones come during cleanup
		wantCode int
		inLoop   bool // wait until the loop writes before signalling
		json     bool
		check    bool // etcdbench check --quick instead of disk wal
	}{
		{"SIGINT as soon as the scratch dir appears", []syscall.Signal{syscall.SIGINT}, 130, false, false, false},
		{"SIGINT while writing", []syscall.Signal{syscall.SIGINT}, 130, true, false, false},
		{"SIGTERM as soon as the scratch dir appears", []syscall.Signal{syscall.SIGTERM}, 143, false, false, false},
		{"SIGTERM while writing", []syscall.Signal{syscall.SIGTERM}, 143, true, false, false},
		{"SIGHUP (the terminal went away) while writing", []syscall.Signal{syscall.SIGHUP}, 129, true, false, false},
		{"SIGTERM while writing, json report", []syscall.Signal{syscall.SIGTERM}, 143, true, true, false},
		// Different signals sent back to back may reach the program in either
		// order (several threads take them concurrently), so the repeated
		// signals are of one kind.
		{"SIGINT three times", []syscall.Signal{syscall.SIGINT, syscall.SIGINT, syscall.SIGINT}, 130, true, false, false},
		{"SIGTERM twice", []syscall.Signal{syscall.SIGTERM, syscall.SIGTERM}, 143, true, false, false},
		{"check: SIGINT as soon as the scratch dir appears", []syscall.Signal{syscall.SIGINT}, 130, false, false, true},
		{"check: SIGTERM as soon as the scratch dir appears, json report", []syscall.Signal{syscall.SIGTERM}, 143, false, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := dirWithPrecious(t)
			before := snapshot(t, d)
			args := []string{"disk", "wal", "--dir", d, "--runtime", "60s", "--no-progress"}
			if tc.check {
				args = []string{"check", "--dir", d, "--quick", "--no-progress"}
			}
			if tc.json {
				args = append(args, "-o", "json")
			}
			p := start(t, runOpts{}, args...)
			sd := waitScratch(t, p, d)
			if tc.inLoop {
				testutil.WaitFor(t, 10*time.Second, "the WAL segments", func() bool { return hasSegment(sd) || p.exited() })
			}
			p.signal(t, tc.sigs[0])
			for _, sig := range tc.sigs[1:] {
				// The run may already be gone: then there is nothing to ignore.
				if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
					t.Fatalf("sending %v: %v", sig, err)
				}
			}
			res := p.wait(t)
			if res.code != tc.wantCode {
				t.Errorf("exit code %d, want %d; stderr:\n%s", res.code, tc.wantCode, res.stderr)
			}
			checkOneErrorLine(t, res.stderr)
			if !strings.Contains(res.stderr, "interrupted") {
				t.Errorf("stderr does not say the run was interrupted: %s", res.stderr)
			}
			if tc.json {
				var r jsonResult
				if !tc.check {
					r = parseJSONResult(t, res.stdout)
				} else if err := json.Unmarshal([]byte(res.stdout), &r); err != nil || len(r.Workloads) == 0 {
					t.Fatalf("stdout is not a JSON result with workloads (%v):\n%s", err, res.stdout)
				}
				if !r.Interrupted {
					t.Errorf("the JSON report is not marked interrupted")
				}
				if v := r.Workloads[0].Verdicts; len(v) != 0 {
					t.Errorf("an interrupted run has %d verdicts, want none", len(v))
				}
				if r.Status != "" {
					t.Errorf("an interrupted run has overall status %s, want none", r.Status)
				}
			} else if !strings.Contains(res.stdout, "Result: INTERRUPTED (no verdict)") {
				t.Errorf("the report does not say INTERRUPTED:\n%s", res.stdout)
			}
			if tc.check && strings.Contains(res.stdout, "meet etcd's limits") {
				t.Errorf("an interrupted check clears the disk:\n%s", res.stdout)
			}
			checkNoScratch(t, d)
			checkSnapshot(t, d, before)
		})
	}
}

// killedRun starts a run in d, waits for its scratch directory, kills it
// with SIGKILL and returns the directory it left.
func killedRun(t *testing.T, d string) string {
	t.Helper()
	p := start(t, runOpts{}, "disk", "wal", "--dir", d, "--runtime", "60s", "--no-progress")
	sd := waitScratch(t, p, d)
	p.signal(t, syscall.SIGKILL)
	if res := p.wait(t); res.code != -1 {
		t.Fatalf("SIGKILLed run exited with %d", res.code)
	}
	st, err := os.Stat(sd)
	if err != nil {
		t.Fatalf("a SIGKILLed run left no scratch directory: %v", err)
	}
	if perm := st.Mode().Perm(); perm != 0o700 {
		t.Errorf("scratch directory mode %v, want 0700", perm)
	}
	if _, err := os.Stat(filepath.Join(sd, markerName)); err != nil {
		t.Fatalf("the leftover scratch directory has no marker: %v", err)
	}
	return sd
}

// TestKilledRunLeftover kills a run with SIGKILL and checks that what it
// left is removed by `clean` or by the next run, and by nothing else.
func TestKilledRunLeftover(t *testing.T) {
	tests := []struct {
		name    string
		args    func(d string) []string
		checkUp func(t *testing.T, res runResult, leftover string)
	}{
		{
			name: "clean removes it",
			args: func(d string) []string { return []string{"clean", "--dir", d} },
			checkUp: func(t *testing.T, res runResult, leftover string) {
				if res.code != exitOK {
					t.Errorf("exit code %d, want 0; stderr:\n%s", res.code, res.stderr)
				}
				if !strings.Contains(res.stdout, "removed "+leftover) {
					t.Errorf("stdout does not name the removed directory %s:\n%s", leftover, res.stdout)
				}
			},
		},
		{
			name: "the next run removes it and says so",
			args: func(d string) []string { return []string{"disk", "wal", "--dir", d, "--count", "50", "-o", "json"} },
			checkUp: func(t *testing.T, res runResult, leftover string) {
				if res.code != exitOK && res.code != exitFail {
					t.Fatalf("exit code %d, want 0 or 1; stderr:\n%s", res.code, res.stderr)
				}
				r := parseJSONResult(t, res.stdout)
				want := "removed a scratch directory left by a killed run: " + leftover
				found := false
				for _, n := range r.Workloads[0].Notes {
					found = found || n == want
				}
				if !found {
					t.Errorf("no note %q in %q", want, r.Workloads[0].Notes)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := dirWithPrecious(t)
			before := snapshot(t, d)
			leftover := killedRun(t, d)
			res := runBin(t, runOpts{}, tc.args(d)...)
			tc.checkUp(t, res, leftover)
			checkNoScratch(t, d)
			checkSnapshot(t, d, before)
		})
	}
}

// writeMarker writes a marker file into a new scratch-named directory.
func writeMarker(t *testing.T, dir string, m any) {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, ok := m.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, markerName), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// selfMarker is a marker owned by the test process, which is alive.
func selfMarker(t *testing.T) scratch.Marker {
	t.Helper()
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	st, err := sysinfo.ParseProcStat(b)
	if err != nil {
		t.Fatal(err)
	}
	start := st.StartTicks
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	return scratch.Marker{Tool: "etcdbench", PID: os.Getpid(), StartTicks: start, BootID: strings.TrimSpace(string(boot)), Created: time.Now().UTC()}
}

// TestCleanKeeps checks that clean removes only scratch directories whose
// marker proves a dead etcdbench owned them.
func TestCleanKeeps(t *testing.T) {
	tests := []struct {
		name        string
		setup       func(t *testing.T, d string) string // returns the entry to look at
		wantRemoved bool
	}{
		{
			name: "scratch-named directory without marker",
			setup: func(t *testing.T, d string) string {
				p := filepath.Join(d, scratchPrefix+"foo")
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(p, "data"), []byte("mine"), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			},
		},
		{
			name: "marker that is not JSON",
			setup: func(t *testing.T, d string) string {
				p := filepath.Join(d, scratchPrefix+"garbage")
				writeMarker(t, p, []byte("not json\n"))
				return p
			},
		},
		{
			name: "marker of another tool",
			setup: func(t *testing.T, d string) string {
				p := filepath.Join(d, scratchPrefix+"other")
				m := selfMarker(t)
				m.Tool, m.PID = "other", 1<<30
				writeMarker(t, p, m)
				return p
			},
		},
		{
			name: "marker whose owner is alive",
			setup: func(t *testing.T, d string) string {
				p := filepath.Join(d, scratchPrefix+"alive")
				writeMarker(t, p, selfMarker(t))
				return p
			},
		},
		{
			name: "regular file with a scratch name",
			setup: func(t *testing.T, d string) string {
				p := filepath.Join(d, scratchPrefix+"file")
				if err := os.WriteFile(p, []byte("mine"), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			},
		},
		{
			name: "symlink to a directory with a stale marker",
			setup: func(t *testing.T, d string) string {
				target := filepath.Join(t.TempDir(), scratchPrefix+"target")
				m := selfMarker(t)
				m.PID = 1 << 30 // no such process
				writeMarker(t, target, m)
				p := filepath.Join(d, scratchPrefix+"link")
				if err := os.Symlink(target, p); err != nil {
					t.Fatal(err)
				}
				return target
			},
		},
		{
			name: "marker of a process that does not exist",
			setup: func(t *testing.T, d string) string {
				p := filepath.Join(d, scratchPrefix+"dead")
				m := selfMarker(t)
				m.PID = 1 << 30
				writeMarker(t, p, m)
				return p
			},
			wantRemoved: true,
		},
		{
			name: "marker of an earlier boot",
			setup: func(t *testing.T, d string) string {
				p := filepath.Join(d, scratchPrefix+"reboot")
				m := selfMarker(t)
				m.BootID = "00000000-0000-0000-0000-000000000000"
				writeMarker(t, p, m)
				return p
			},
			wantRemoved: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			entry := tc.setup(t, d)
			before := snapshot(t, filepath.Dir(entry))
			res := runBin(t, runOpts{}, "clean", "--dir", d)
			if res.code != exitOK {
				t.Fatalf("exit code %d, want 0; stderr:\n%s", res.code, res.stderr)
			}
			if res.stderr != "" {
				t.Errorf("stderr not empty: %s", res.stderr)
			}
			_, err := os.Lstat(entry)
			if tc.wantRemoved {
				if err == nil {
					t.Errorf("%s was not removed; stdout:\n%s", entry, res.stdout)
				}
				if !strings.Contains(res.stdout, "removed "+entry) {
					t.Errorf("stdout does not name %s:\n%s", entry, res.stdout)
				}
				return
			}
			if err != nil {
				t.Errorf("%s was removed: %v; stdout:\n%s", entry, err, res.stdout)
			}
			if strings.Contains(res.stdout, "removed") {
				t.Errorf("clean removed something:\n%s", res.stdout)
			}
			checkSnapshot(t, filepath.Dir(entry), before)
		})
	}
}

// TestCleanKeepsRunningRun calls clean while a real run is going: it must
// keep the run's scratch directory, and the run must still clean up after
// itself when interrupted.
func TestCleanKeepsRunningRun(t *testing.T) {
	d := dirWithPrecious(t)
	before := snapshot(t, d)
	p := start(t, runOpts{}, "disk", "wal", "--dir", d, "--runtime", "60s", "--no-progress")
	sd := waitScratch(t, p, d)

	res := runBin(t, runOpts{}, "clean", "--dir", d)
	if res.code != exitOK {
		t.Errorf("clean: exit code %d, want 0; stderr:\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stdout, "kept "+sd) {
		t.Errorf("clean does not say it kept %s:\n%s", sd, res.stdout)
	}
	if _, err := os.Stat(filepath.Join(sd, markerName)); err != nil {
		t.Errorf("clean touched the running run's scratch directory: %v", err)
	}

	p.signal(t, syscall.SIGINT)
	if res := p.wait(t); res.code != 130 {
		t.Errorf("run: exit code %d after SIGINT, want 130; stderr:\n%s", res.code, res.stderr)
	}
	checkNoScratch(t, d)
	checkSnapshot(t, d, before)
}

// TestClosedStdout runs checks whose standard output is a pipe nobody reads
// (as in `etcdbench ... | head -0`): however the run ends, it must not leave
// its scratch directory behind, nor report success.
func TestClosedStdout(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"text, count", []string{"--count", "100"}},
		{"json, count", []string{"--count", "100", "-o", "json"}},
		{"text, adaptive", []string{"--runtime", "2s", "--min-runtime", "1s", "--min-samples", "10"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := dirWithPrecious(t)
			before := snapshot(t, d)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			p := start(t, runOpts{stdout: w}, append([]string{"disk", "wal", "--dir", d, "--no-progress"}, tc.args...)...)
			w.Close() // the child has its own copy
			res := p.wait(t)
			if res.code == exitOK {
				t.Errorf("exit code 0 although the report could not be written")
			}
			if res.stderr != "" {
				checkOneErrorLine(t, res.stderr)
			}
			checkNoScratch(t, d)
			checkSnapshot(t, d, before)
		})
	}
}

// TestCleanAsAnotherUser runs clean as a user who cannot read a leftover
// scratch directory: it must say it kept it and why, not claim there is none.
func TestCleanAsAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run clean as another user")
	}
	d := worldTempDir(t)
	leftover := killedRun(t, d)
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	res := runBin(t, runOpts{cred: nobody}, "clean", "--dir", d)
	if res.code != exitOK || !strings.Contains(res.stdout, "kept "+leftover+" (cannot read its marker") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if _, err := os.Stat(leftover); err != nil {
		t.Fatalf("the leftover is gone: %v", err)
	}
	if res := runBin(t, runOpts{}, "clean", "--dir", d); res.code != exitOK || !strings.Contains(res.stdout, "removed "+leftover) {
		t.Fatalf("root clean: exit %d, stdout:\n%s", res.code, res.stdout)
	}
}
