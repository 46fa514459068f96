package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiagnoseLogs(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		code      int
		top       string
	}{
		{"3.4 zap slow disk", "etcd34-zap-slowdisk.log", exitFail, "slow-disk-logs"},
		{"3.4 capnslog slow disk", "etcd34-capnslog-slowdisk.log", exitFail, "slow-disk-logs"},
		{"3.7 zap slow disk", "etcd37-zap-slowdisk.log", exitFail, "slow-disk-logs"},
		{"3.4 zap healthy", "etcd34-zap.log", exitOK, "healthy"},
		{"3.4 zap late heartbeats", "etcd34-zap-heartbeat.log", exitFail, "heartbeat-failures"},
		{"3.4 capnslog leader lost", "etcd34-capnslog-leaderloss.log", exitFail, "leader-changes"},
		{"3.4 zap NOSPACE", "etcd34-zap-nospace.log", exitFail, "db-quota"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, runOpts{}, "diagnose", "logs", "-o", "json", capture(tc.log))
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d: %s", r.code, tc.code, r.stderr)
			}
			w := diagnosis(t, r.stdout)
			if w.Verdicts[0].Check != tc.top || w.Figure("log_lines") == nil {
				t.Errorf("top verdict %s, want %s; figures %v", w.Verdicts[0].Check, tc.top, w.Figures)
			}
		})
	}
}

// TestDiagnoseLogsJournalFromStdin pipes a captured log behind
// journalctl's prefix into 'diagnose logs -'.
func TestDiagnoseLogsJournalFromStdin(t *testing.T) {
	b, err := os.ReadFile(capture("etcd34-capnslog-slowdisk.log"))
	if err != nil {
		t.Fatal(err)
	}
	var j bytes.Buffer
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		j.WriteString("Nov 22 04:31:17 node1 etcd[4242]: " + l + "\n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, "diagnose", "logs", "-")
	cmd.Stdin = &j
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if cmd.ProcessState.ExitCode() != exitFail {
		t.Fatalf("exit %v: %s", err, errb.String())
	}
	for _, want := range []string{"#1 slow disk: etcd logged slow fdatasyncs (logs)", "journal+capnslog", "log minute "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestDiagnoseLogsYearlessJournal: journalctl's default time has no
// year; without a dated line in the log the events are counted, placed in
// no minute, and a note says why - never a time in year 0.
func TestDiagnoseLogsYearlessJournal(t *testing.T) {
	log := filepath.Join(t.TempDir(), "journal.log")
	lines := "Nov 22 04:31:02 node1 etcd[812]: raft.node: 7520 elected leader 7520 at term 2\n" +
		"Nov 22 04:35:40 node1 etcd[812]: raft.node: 9f0e lost leader 7520 at term 3\n" +
		"Nov 22 04:35:41 node1 etcd[812]: raft.node: 9f0e elected leader 9f0e at term 3\n"
	if err := os.WriteFile(log, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, runOpts{}, "diagnose", "logs", log)
	if r.code != exitFail {
		t.Fatalf("exit %d, want %d: %s", r.code, exitFail, r.stderr)
	}
	for _, want := range []string{"leader instability", "3 event(s) have only journalctl's year-less time", "short-iso"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "0000-") || strings.Contains(r.stdout, "log minute") {
		t.Errorf("a year-0 time or a minute in the report:\n%s", r.stdout)
	}
}

func TestDiagnoseLogsErrors(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.log")
	if err := os.WriteFile(other, []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.log")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no file", []string{}, "want one log file"},
		{"missing", []string{filepath.Join(dir, "nope.log")}, "no such file"},
		{"a directory", []string{dir}, "is a directory"},
		{"empty", []string{empty}, "is empty"},
		{"not etcd", []string{other}, "no line of"},
		{"bad output", []string{"-o", "xml", other}, "--output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, runOpts{}, append([]string{"diagnose", "logs"}, tc.args...)...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", r.code, r.stderr, tc.want)
			}
			checkOneErrorLine(t, r.stderr)
		})
	}
}
