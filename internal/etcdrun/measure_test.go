package etcdrun

import (
	"fmt"
	"strings"
	"testing"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

func TestWentWrong(t *testing.T) {
	ok := &etcdload.Outcome{Workload: result.Workload{Verdicts: []verdict.Verdict{{Status: verdict.Pass}}}, Errors: map[string]int64{}}
	if wentWrong(ok) {
		t.Error("a clean run counted as gone wrong")
	}
	failed := *ok
	failed.Errors = map[string]int64{"Unavailable": 2, "DeadlineExceeded": 1}
	warned := *ok
	warned.Workload.Verdicts = []verdict.Verdict{{Status: verdict.Pass}, {Status: verdict.Warn}}
	for name, o := range map[string]*etcdload.Outcome{"failed requests": &failed, "a warning": &warned} {
		if !wentWrong(o) {
			t.Errorf("%s not counted as gone wrong", name)
		}
	}
}

func TestLogNotes(t *testing.T) {
	var lines []string
	for i := range 30 {
		lines = append(lines, fmt.Sprintf("2026-11-22T04:00:%02dZ WARN line %d", i, i))
	}
	notes := logNotes(strings.Join(lines, "\n") + "\n")
	if len(notes) != logLines+1 || !strings.Contains(notes[0], "last 20 lines") {
		t.Fatalf("notes %q", notes)
	}
	if !strings.HasSuffix(notes[1], "line 10") || !strings.HasSuffix(notes[len(notes)-1], "line 29") {
		t.Errorf("not the last 20 lines: first %q, last %q", notes[1], notes[len(notes)-1])
	}
	if got := logNotes(""); len(got) != 1 || !strings.Contains(got[0], "nothing") {
		t.Errorf("empty log: %q", got)
	}
}
