package diagnose

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/verdict"
)

// updateDiagnosis rewrites the diagnosis golden files; so does the
// package's -update flag (declared beside the WAL golden tests), looked up
// by name so that each test file stands alone.
var updateDiagnosis = flag.Bool("update-diagnosis", false, "rewrite the diagnosis golden files under testdata/golden")

func updating() bool {
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		return true
	}
	return *updateDiagnosis
}

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
	path := filepath.Join("testdata", "golden", name+".json")
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it); got:\n%s", path, got)
	}
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
			checkTop(t, fs, tc.top)
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
	if len(fs) == 0 || fs[0].Member != "member2" || fs[0].Rule.Cause == CauseLeader {
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

func TestGoldenLogs(t *testing.T) {
	cases := []struct {
		name, log string
		top       string
		format    string // the format most lines are in
	}{
		{"etcd34-zap", "etcd34-zap.log", "", "zap"},
		{"etcd34-zap-slowdisk", "etcd34-zap-slowdisk.log", "slow-disk-logs", "zap"},
		{"etcd34-capnslog-slowdisk", "etcd34-capnslog-slowdisk.log", "slow-disk-logs", "capnslog"},
		{"etcd37-zap-slowdisk", "etcd37-zap-slowdisk.log", "slow-disk-logs", "zap"},
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
			ev := Evidence{Logs: s}
			rules := Rules()
			fs := Diagnose(ev, verdict.DiagnoseDefaults(), rules)
			checkTop(t, fs, tc.top)
			checkGolden(t, tc.name, Workload("diagnose-logs", ev, fs, rules))
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

func checkTop(t *testing.T, fs []Finding, top string) {
	t.Helper()
	switch {
	case top == "" && len(fs) > 0 && fs[0].Status == verdict.Fail:
		t.Errorf("want healthy, top finding %s: %s", fs[0].Rule.ID, fs[0].Evidence)
	case top != "" && (len(fs) == 0 || fs[0].Rule.ID != top || fs[0].Status != verdict.Fail):
		t.Errorf("want %s first, got %+v", top, fs)
	}
}
