package etcdrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/etcdcluster"
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

// Members put apart: the report recommends the timeouts for their round
// trip and says which they ran with; none when they are not apart.
func TestTimeoutWords(t *testing.T) {
	if w := TimeoutWords(etcdcluster.Options{Members: 3}); w != "" {
		t.Errorf("members not apart: %q", w)
	}
	w := TimeoutWords(etcdcluster.Options{Members: 3, PeerRTT: 150 * time.Millisecond, PeerJitter: 10 * time.Millisecond, HeartbeatInterval: 50 * time.Millisecond})
	for _, want := range []string{"160ms apart", "--heartbeat-interval 160 --election-timeout 1600", "ran with --heartbeat-interval 50, etcd's defaults for the rest"} {
		if !strings.Contains(w, want) {
			t.Errorf("%q lacks %q", w, want)
		}
	}
}
