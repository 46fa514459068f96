package diagnose

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
	"etcdbench/internal/verdict"
)

// updateDiagnosis rewrites the diagnosis golden files; so does the
// package's -update flag, which also rewrites the fuzz seeds.
var (
	updateDiagnosis = flag.Bool("update-diagnosis", false, "rewrite the diagnosis golden files under testdata/golden")
	update          = flag.Bool("update", false, "rewrite golden files and fuzz seeds")
)

func updating() bool { return *update || *updateDiagnosis }

// captureWindow is the time between the captured scrapes (the length of
// the put load in TestCapture), fixed so that the golden files do not
// depend on file times.
const captureWindow = 4 * time.Second

func readScrape(t *testing.T, name string) Scrape {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseScrape("member0", name, b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkGolden compares the workload's JSON with testdata/golden/name.json.
func checkGolden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	testutil.Golden(t, filepath.Join("testdata", "golden", name+".json"), got, updating())
}

func TestGoldenMetrics(t *testing.T) {
	cases := []struct {
		name, before, after string
		top                 string // top finding, "" healthy
	}{
		{"etcd37-healthy", "etcd37-before.txt", "etcd37-after.txt", ""},
		{"etcd37-slowdisk", "etcd37-slowdisk-before.txt", "etcd37-slowdisk-after.txt", "slow-disk-wal"},
		{"etcd34-healthy", "etcd34-before.txt", "etcd34-after.txt", ""},
		{"etcd34-since-start", "", "etcd34-after.txt", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			after := []Scrape{readScrape(t, tc.after)}
			var before []Scrape
			if tc.before != "" {
				before = []Scrape{readScrape(t, tc.before)}
			}
			ev := FromScrapes(before, after, captureWindow, 2)
			rules := Rules()
			fs := Diagnose(ev, verdict.DiagnoseDefaults(), rules)
			w := Workload("diagnose-metrics", ev, fs, rules)
			checkTop(t, w, tc.top)
			checkGolden(t, tc.name, w)
		})
	}
}

// TestGoldenThreeMembers diagnoses the three Debian etcd 3.4 members
// whose leader was stopped (SIGSTOP) for 3 s under load, about 7 s between
// the scrapes: the others elect a new leader, and the stopped member -
// like one starved of CPU or in a paused VM - missed its heartbeats and
// applied late. Its peer probes were lost, not slow, so the round-trip
// p99s stay small.
func TestGoldenThreeMembers(t *testing.T) {
	var before, after []Scrape
	for i := range 3 {
		b := readScrape(t, fmt.Sprintf("etcd34-3m-before-m%d.txt", i))
		a := readScrape(t, fmt.Sprintf("etcd34-3m-after-m%d.txt", i))
		b.Name, a.Name = fmt.Sprintf("member%d", i), fmt.Sprintf("member%d", i)
		before, after = append(before, b), append(after, a)
	}
	ev := FromScrapes(before, after, 7*time.Second, 2)
	rules := Rules()
	fs := Diagnose(ev, verdict.DiagnoseDefaults(), rules)
	fired := map[string]bool{}
	for _, f := range fs {
		fired[f.Rule.ID+"/"+f.Member] = true
	}
	for _, want := range []string{"heartbeat-failures/member2", "slow-applies/member2", "leader-changes/member0", "leader-changes/member1", "leader-changes/member2"} {
		if !fired[want] {
			t.Errorf("%s did not fire: %v", want, fired)
		}
	}
	if len(fs) == 0 || fs[0].Member != "member2" || fs[0].Kind == finding.Leader {
		t.Errorf("the top finding should be a cause on the stopped member2: %+v", fs[0])
	}
	w := Workload("diagnose-metrics", ev, fs, rules)
	peers := 0
	for _, f := range w.Figures {
		if strings.Contains(f.Name, "_peer_rtt_p99_") {
			peers++
		}
	}
	if peers != 6 {
		t.Errorf("%d peer round-trip figures, want 2 per member", peers)
	}
	checkGolden(t, "etcd34-3m-leader-paused", w)
}

// logEvent is what a capture's log must count of one kind: at least one
// event, and the worst one's duration within [min, max] (both zero: the
// lines say no duration).
type logEvent struct {
	kind     Kind
	min, max time.Duration
}

func TestGoldenLogs(t *testing.T) {
	cases := []struct {
		name, log string
		top       string
		format    string // the format most lines are in
		events    []logEvent
		terms     int // raft terms with an election at least, 0: not checked
	}{
		{"etcd34-zap", "etcd34-zap.log", "", "zap", []logEvent{{KindElection, 0, 0}}, 1},
		{"etcd34-zap-slowdisk", "etcd34-zap-slowdisk.log", "slow-disk-logs", "zap", []logEvent{{KindSlowFdatasync, time.Second, 10 * time.Second}}, 0},
		{"etcd34-capnslog-slowdisk", "etcd34-capnslog-slowdisk.log", "slow-disk-logs", "capnslog", []logEvent{{KindSlowFdatasync, time.Second, 10 * time.Second}}, 0},
		{"etcd37-zap-slowdisk", "etcd37-zap-slowdisk.log", "slow-disk-logs", "zap", []logEvent{{KindSlowFdatasync, time.Second, 10 * time.Second}}, 0},
		// The leader paused for heartbeatPause: late by the pause less
		// etcd's allowance of 2 x the heartbeat interval, give or take
		// a tick.
		{"etcd34-zap-heartbeat", "etcd34-zap-heartbeat.log", "heartbeat-failures", "zap",
			[]logEvent{{KindHeartbeatLate, heartbeatPause - 4*captureHeartbeat, heartbeatPause}}, 1},
		{"etcd34-capnslog-heartbeat", "etcd34-capnslog-heartbeat.log", "heartbeat-failures", "capnslog",
			[]logEvent{{KindHeartbeatLate, heartbeatPause - 4*captureHeartbeat, heartbeatPause}}, 1},
		// A follower that lost the leader paused for leaderLossPause
		// and won the next election.
		{"etcd34-zap-leaderloss", "etcd34-zap-leaderloss.log", "leader-changes", "zap", []logEvent{{KindElection, 0, 0}}, 2},
		{"etcd34-capnslog-leaderloss", "etcd34-capnslog-leaderloss.log", "leader-changes", "capnslog", []logEvent{{KindElection, 0, 0}}, 2},
		// A member filled to its 1 MiB quota: the NOSPACE alarm.
		{"etcd34-zap-nospace", "etcd34-zap-nospace.log", "db-quota", "zap", []logEvent{{KindSpaceExceeded, 0, 0}}, 1},
		{"etcd34-capnslog-nospace", "etcd34-capnslog-nospace.log", "db-quota", "capnslog", []logEvent{{KindSpaceExceeded, 0, 0}}, 1},
		// The same captures of etcd 3.5 and 3.6 (zap only), built from
		// their modules: etcd's log lines are unchanged from 3.4 to 3.7.
		{"etcd35-zap-slowdisk", "etcd35-zap-slowdisk.log", "slow-disk-logs", "zap", []logEvent{{KindSlowFdatasync, time.Second, 10 * time.Second}}, 0},
		{"etcd35-zap-heartbeat", "etcd35-zap-heartbeat.log", "heartbeat-failures", "zap",
			[]logEvent{{KindHeartbeatLate, heartbeatPause - 4*captureHeartbeat, heartbeatPause}}, 1},
		{"etcd35-zap-leaderloss", "etcd35-zap-leaderloss.log", "leader-changes", "zap", []logEvent{{KindElection, 0, 0}}, 2},
		{"etcd35-zap-nospace", "etcd35-zap-nospace.log", "db-quota", "zap", []logEvent{{KindSpaceExceeded, 0, 0}}, 1},
		{"etcd36-zap-slowdisk", "etcd36-zap-slowdisk.log", "slow-disk-logs", "zap", []logEvent{{KindSlowFdatasync, time.Second, 10 * time.Second}}, 0},
		{"etcd36-zap-heartbeat", "etcd36-zap-heartbeat.log", "heartbeat-failures", "zap",
			[]logEvent{{KindHeartbeatLate, heartbeatPause - 4*captureHeartbeat, heartbeatPause}}, 1},
		{"etcd36-zap-leaderloss", "etcd36-zap-leaderloss.log", "leader-changes", "zap", []logEvent{{KindElection, 0, 0}}, 2},
		// etcd 3.6 logs nothing when its gRPC quota check refuses a put
		// and raises the NOSPACE alarm (3.4 and 3.5 log "alarm raised";
		// 3.6 only "exceeded backend quota" when the apply-time check
		// refuses one): its log looks healthy, which diagnose metrics
		// (db size against the quota) does not.
		{"etcd36-zap-nospace", "etcd36-zap-nospace.log", "", "zap", nil, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tc.log))
			if err != nil {
				t.Fatal(err)
			}
			s := ParseLogs(b)
			best := ""
			for f, n := range s.Formats {
				if best == "" || n > s.Formats[best] {
					best = f
				}
			}
			if best != tc.format {
				t.Errorf("most lines read as %q (%v), want %q", best, s.Formats, tc.format)
			}
			for _, e := range tc.events {
				ks := s.Kinds[e.kind]
				if ks == nil || ks.Count == 0 {
					t.Errorf("no %s event counted", e.kind)
					continue
				}
				if ks.Worst.Took < e.min || ks.Worst.Took > e.max {
					t.Errorf("worst %s took %v, want %v to %v: %s", e.kind, ks.Worst.Took, e.min, e.max, ks.Worst.Line)
				}
				if ks.Worst.Time.IsZero() || len(ks.PerMinute) == 0 {
					t.Errorf("%s without a time: %+v", e.kind, ks)
				}
			}
			if tc.terms > 0 && len(s.Terms) < tc.terms {
				t.Errorf("elections in terms %v, want at least %d", s.Terms, tc.terms)
			}
			if tc.top == "leader-changes" && s.LostLeader == 0 {
				t.Error("no \"lost leader\" line counted")
			}
			ev := Evidence{Logs: s, Notes: s.Notes()}
			rules := Rules()
			fs := Diagnose(ev, verdict.DiagnoseDefaults(), rules)
			w := Workload("diagnose-logs", ev, fs, rules)
			checkTop(t, w, tc.top)
			checkGolden(t, tc.name, w)
		})
	}
}

// TestJournalOfCapturedLog feeds a captured log behind journalctl's
// prefix: the same events must be found.
func TestJournalOfCapturedLog(t *testing.T) {
	b, err := os.ReadFile("testdata/etcd34-zap-slowdisk.log")
	if err != nil {
		t.Fatal(err)
	}
	var j strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		j.WriteString("Nov 22 04:25:30 node1 etcd[4242]: " + l + "\n")
	}
	plain, journal := ParseLogs(b), ParseLogs([]byte(j.String()))
	for _, k := range Kinds {
		if plain.Count(k) != journal.Count(k) {
			t.Errorf("%s: %d plain, %d behind journalctl's prefix", k, plain.Count(k), journal.Count(k))
		}
	}
	if journal.Formats["journal+zap"] == 0 {
		t.Errorf("formats %v", journal.Formats)
	}
}

// checkTop checks the verdict a report leads with: top's rule as a FAIL,
// or for top "" the one PASS verdict that says healthy - a WARN finding
// is not healthy (its verdict would lead instead).
func checkTop(t *testing.T, w result.Workload, top string) {
	t.Helper()
	if len(w.Verdicts) == 0 {
		t.Fatal("no verdict")
	}
	v := w.Verdicts[0]
	switch {
	case top == "" && (v.Check != healthy.ID || v.Status != verdict.Pass || len(w.Verdicts) != 1):
		t.Errorf("want one PASS %s verdict, got %d, the first %s %s: %s", healthy.ID, len(w.Verdicts), v.Status, v.Check, v.Detail)
	case top != "" && (v.Check != top || v.Status != verdict.Fail):
		t.Errorf("want %s first as FAIL, got %s %s: %s", top, v.Status, v.Check, v.Detail)
	}
}
