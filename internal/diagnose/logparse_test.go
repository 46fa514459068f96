package diagnose

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestParseLogLine(t *testing.T) {
	cases := []struct {
		name, line, format string
		kind               Kind // "" : no event
		took               time.Duration
		at                 string // RFC3339 of the event's time, "" for none
	}{
		{"zap slow fdatasync",
			`{"level":"warn","ts":"2026-11-22T04:31:02.123Z","caller":"wal/wal.go:802","msg":"slow fdatasync","took":"1.203s","expected-duration":"1s"}`,
			"zap", KindSlowFdatasync, 1203 * time.Millisecond, "2026-11-22T04:31:02.123Z"},
		{"zap apply took too long",
			`{"level":"warn","ts":"2026-11-22T04:31:03.000Z","caller":"etcdserver/util.go:163","msg":"apply request took too long","took":"150.2ms","expected-duration":"100ms","prefix":"read-only range "}`,
			"zap", KindSlowApply, 150200 * time.Microsecond, "2026-11-22T04:31:03Z"},
		{"zap heartbeat",
			`{"level":"warn","ts":"2026-11-22T04:31:04Z","msg":"leader failed to send out heartbeat on time; took too long, leader is overloaded likely from slow disk","to":"a","heartbeat-interval":"100ms","expected-duration":"200ms","exceeded-duration":"401.8ms"}`,
			"zap", KindHeartbeatLate, 401800 * time.Microsecond, "2026-11-22T04:31:04Z"},
		{"zap epoch ts, space exceeded in error",
			`{"level":"warn","ts":1732249864.5,"msg":"failed to apply request","error":"etcdserver: mvcc: database space exceeded"}`,
			"zap", KindSpaceExceeded, 0, "2024-11-22T04:31:04.5Z"},
		{"zap election", `{"level":"info","ts":"2026-11-22T04:20:10.664Z","caller":"raft/node.go:327","msg":"raft.node: b5179d13d0285315 elected leader b5179d13d0285315 at term 2"}`,
			"zap", KindElection, 0, "2026-11-22T04:20:10.664Z"},
		{"zap trace is a slow request", `{"level":"info","ts":"2026-11-22T04:20:10Z","msg":"trace[1] range","detail":"{range_begin:/a}","duration":"812ms"}`,
			"zap", KindSlowRequest, 812 * time.Millisecond, "2026-11-22T04:20:10Z"},
		{"zap other", `{"level":"info","ts":"2026-11-22T04:20:10Z","msg":"published local member to cluster through raft"}`, "zap", "", 0, ""},
		{"capnslog apply entries",
			`2019-08-13 11:12:13.123456 W | etcdserver: apply entries took too long [150.2ms for 1 entries]`,
			"capnslog", KindSlowApply, 150200 * time.Microsecond, "2019-08-13T11:12:13.123456Z"},
		{"capnslog read-only range",
			`2019-08-13 11:12:13.5 W | etcdserver: read-only range request "key:\"/registry/pods\" " with result "range_response_count:1 size:2000" took too long (1.2s) to execute`,
			"capnslog", KindSlowRequest, 1200 * time.Millisecond, "2019-08-13T11:12:13.5Z"},
		{"capnslog wal sync",
			`2019-08-13 11:12:14.000000 W | wal: sync duration of 1.5s, expected less than 1s`,
			"capnslog", KindSlowFdatasync, 1500 * time.Millisecond, "2019-08-13T11:12:14Z"},
		{"capnslog heartbeat",
			`2019-08-13 11:12:14.000000 W | etcdserver: failed to send out heartbeat on time (exceeded the 100ms timeout for 401.8ms, to 8e9e05c52164694d)`,
			"capnslog", KindHeartbeatLate, 401800 * time.Microsecond, "2019-08-13T11:12:14Z"},
		{"raft's go log line", `raft2026/11/22 04:20:11 INFO: raft.node: 7520a73dc41cb177 lost leader 7520a73dc41cb177 at term 3`,
			"golog", KindElection, 0, "2026-11-22T04:20:11Z"},
		{"journal before zap",
			`Nov 22 04:31:02 node1 etcd[812]: {"level":"warn","ts":"2026-11-22T04:31:02.123Z","msg":"slow fdatasync","took":"2s"}`,
			"journal+zap", KindSlowFdatasync, 2 * time.Second, "2026-11-22T04:31:02.123Z"},
		{"journal before capnslog",
			`Aug  3 11:12:14 node1 etcd[812]: 2019-08-03 11:12:14.000000 W | etcdserver: failed to send out heartbeat on time (exceeded the 100ms timeout for 1.1s, to 8e9e)`,
			"journal+capnslog", KindHeartbeatLate, 1100 * time.Millisecond, "2019-08-03T11:12:14Z"},
		{"journal alone: its time has no year",
			`Aug  3 11:12:14 node1 etcd[812]: became leader at term 5`,
			"journal", KindElection, 0, ""},
		// The other short modes of systemd 252's journalctl, as it
		// printed them (TZ=Asia/Kolkata, America/Caracas and --utc).
		{"journal short-precise before zap",
			`Nov 22 08:51:35.580509 vm etcd[27966]: {"level":"warn","ts":"2026-11-22T08:51:35.579Z","msg":"slow fdatasync","took":"1.2s"}`,
			"journal+zap", KindSlowFdatasync, 1200 * time.Millisecond, "2026-11-22T08:51:35.579Z"},
		{"journal short-precise alone: no year either",
			`Nov 22 08:51:35.580509 vm etcd[27966]: became leader at term 5`,
			"journal", KindElection, 0, ""},
		{"journal short-iso alone",
			`2026-11-22T08:51:26+0000 vm etcd[27827]: raft.node: 7520 lost leader 7520 at term 3`,
			"journal", KindElection, 0, "2026-11-22T08:51:26Z"},
		{"journal short-iso with a colon in the offset (newer systemd)",
			`2026-11-22T14:21:26+05:30 vm etcd[27827]: raft.node: 7520 lost leader 7520 at term 3`,
			"journal", KindElection, 0, "2026-11-22T08:51:26Z"},
		{"journal short-iso before capnslog",
			`2026-11-22T04:51:26-0400 vm etcd[27827]: 2026-11-22 08:51:26.100000 W | etcdserver: failed to send out heartbeat on time (exceeded the 100ms timeout for 905.1ms, to 8e9e)`,
			"journal+capnslog", KindHeartbeatLate, 905100 * time.Microsecond, "2026-11-22T08:51:26.1Z"},
		{"journal short-iso-precise alone",
			`2026-11-22T14:21:26.353328+0530 vm etcd[27827]: database space exceeded`,
			"journal", KindSpaceExceeded, 0, "2026-11-22T08:51:26.353328Z"},
		{"journal short-full in UTC alone",
			`Sun 2026-11-22 08:51:26 UTC vm etcd[27827]: became leader at term 5`,
			"journal", KindElection, 0, "2026-11-22T08:51:26Z"},
		{"journal short-full in a zone without an abbreviation",
			`Sun 2026-11-22 04:51:26 -04 vm etcd[27827]: became leader at term 5`,
			"journal", KindElection, 0, "2026-11-22T08:51:26Z"},
		{"journal short-full in a zone named by an abbreviation: no time",
			`Sun 2026-11-22 14:21:26 IST vm etcd[27827]: became leader at term 5`,
			"journal", KindElection, 0, ""},
		{"journal short-full before zap",
			`Sun 2026-11-22 09:51:26 CET vm etcd[27827]: {"level":"warn","ts":"2026-11-22T08:51:26.001Z","msg":"apply request took too long","took":"150ms"}`,
			"journal+zap", KindSlowApply, 150 * time.Millisecond, "2026-11-22T08:51:26.001Z"},
		{"zap console",
			"2026-11-22T04:31:02.123Z\tWARN\twal/wal.go:805\tslow fdatasync\t{\"took\": \"1.1s\", \"expected-duration\": \"1s\"}",
			"zap-console", KindSlowFdatasync, 1100 * time.Millisecond, "2026-11-22T04:31:02.123Z"},
		{"CRI (kubelet's pod log) before zap",
			`2026-11-22T04:31:02.123456789Z stderr F {"level":"warn","ts":"2026-11-22T04:31:02.120Z","msg":"slow fdatasync","took":"1.5s"}`,
			"cri+zap", KindSlowFdatasync, 1500 * time.Millisecond, "2026-11-22T04:31:02.120Z"},
		{"docker json-file around zap",
			`{"log":"{\"level\":\"warn\",\"ts\":\"2026-11-22T04:31:02Z\",\"msg\":\"apply request took too long\",\"took\":\"250ms\"}\n","stream":"stderr","time":"2026-11-22T04:31:02.5Z"}`,
			"docker+zap", KindSlowApply, 250 * time.Millisecond, "2026-11-22T04:31:02Z"},
		{"garbage", "hello world", "other", "", 0, ""},
		{"broken json", `{"msg": "slow fdatasync"`, "other", "", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			format, ev, ok := ParseLogLine(tc.line)
			if format != tc.format {
				t.Errorf("format %q, want %q", format, tc.format)
			}
			if ok != (tc.kind != "") || ev.Kind != tc.kind {
				t.Fatalf("event %v %+v, want kind %q", ok, ev, tc.kind)
			}
			if !ok {
				return
			}
			if ev.Took != tc.took {
				t.Errorf("took %v, want %v", ev.Took, tc.took)
			}
			want, _ := time.Parse(time.RFC3339Nano, tc.at)
			if !ev.Time.Equal(want) {
				t.Errorf("time %v, want %v", ev.Time, want)
			}

		})
	}
}

// TestParseLogLineYearless: journalctl's default and short-precise times
// have no year; they come back apart (NoYear, year 0) and never as Time.
func TestParseLogLineYearless(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		noYear     time.Time // zero: none
	}{
		{"short", `Aug  3 11:12:14 node1 etcd[812]: became leader at term 5`, time.Date(0, 8, 3, 11, 12, 14, 0, time.UTC)},
		{"short-precise", `Nov 22 08:51:35.580509 vm etcd[27966]: became leader at term 5`, time.Date(0, 11, 22, 8, 51, 35, 580509000, time.UTC)},
		{"February 29th", `Feb 29 23:59:59 vm etcd[1]: became leader at term 5`, time.Date(0, 2, 29, 23, 59, 59, 0, time.UTC)},
		{"not an event", `Nov 22 08:51:35 vm etcd[27966]: hello`, time.Date(0, 11, 22, 8, 51, 35, 0, time.UTC)},
		{"dated line inside", `Nov 22 08:51:35 vm etcd[1]: {"level":"info","ts":"2026-11-22T08:51:35Z","msg":"became leader at term 5"}`, time.Time{}},
		{"short-iso", `2026-11-22T08:51:26+0000 vm etcd[27827]: became leader at term 5`, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ev, _ := ParseLogLine(tc.line)
			if !ev.NoYear.Equal(tc.noYear) {
				t.Errorf("year-less time %v, want %v", ev.NoYear, tc.noYear)
			}
			if !ev.NoYear.IsZero() && !ev.Time.IsZero() {
				t.Errorf("time %v beside the year-less one", ev.Time)
			}
		})
	}
}

// TestParseLogsPlacesYearlessTimes: a year-less journal time takes the
// year of the log's dated lines (the nearest, across New Year), and
// without any it stays out of the minutes and the span - never year 0.
func TestParseLogsPlacesYearlessTimes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lines   []string
		minutes []time.Time // per-minute keys of the election events
		undated int
		span    [2]time.Time
	}{
		{"dated lines give the year",
			[]string{
				`Nov 22 04:30:59 node1 etcd[812]: {"level":"info","ts":"2026-11-22T04:30:59Z","msg":"published local member to cluster through raft"}`,
				`Nov 22 04:31:02 node1 etcd[812]: raft.node: 7520 lost leader 7520 at term 3`,
				`Nov 22 04:32:10.5 node1 etcd[812]: raft.node: 9f0e elected leader 9f0e at term 4`,
			},
			[]time.Time{time.Date(2026, 11, 22, 4, 31, 0, 0, time.UTC), time.Date(2026, 11, 22, 4, 32, 0, 0, time.UTC)}, 0,
			[2]time.Time{time.Date(2026, 11, 22, 4, 30, 59, 0, time.UTC), time.Date(2026, 11, 22, 4, 32, 10, 5e8, time.UTC)}},
		{"across New Year",
			[]string{
				`Dec 31 23:59:50 node1 etcd[812]: raft.node: 7520 lost leader 7520 at term 3`,
				`Jan  1 00:00:30 node1 etcd[812]: {"level":"info","ts":"2027-01-01T00:00:30Z","msg":"raft.node: 9f0e elected leader 9f0e at term 4"}`,
			},
			[]time.Time{time.Date(2026, 12, 31, 23, 59, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}, 0,
			[2]time.Time{time.Date(2026, 12, 31, 23, 59, 50, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 30, 0, time.UTC)}},
		{"February 29th goes to the nearest leap year",
			[]string{
				`Feb 29 10:00:00 node1 etcd[812]: raft.node: 7520 lost leader 7520 at term 3`,
				`Mar  1 10:00:00 node1 etcd[812]: {"level":"info","ts":"2027-03-01T10:00:00Z","msg":"raft.node: 9f0e elected leader 9f0e at term 4"}`,
			},
			[]time.Time{time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC), time.Date(2028, 2, 29, 10, 0, 0, 0, time.UTC)}, 0,
			[2]time.Time{time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC), time.Date(2028, 2, 29, 10, 0, 0, 0, time.UTC)}},
		{"no dated line: no time",
			[]string{
				`Nov 22 04:31:02 node1 etcd[812]: raft.node: 7520 lost leader 7520 at term 3`,
				`Nov 22 04:31:05 node1 etcd[812]: raft.node: 9f0e elected leader 9f0e at term 4`,
			},
			nil, 2, [2]time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ParseLogs([]byte(strings.Join(tc.lines, "\n")))
			if s.Count(KindElection) != 2 || s.Undated != tc.undated {
				t.Fatalf("%d elections, %d undated; want 2 and %d", s.Count(KindElection), s.Undated, tc.undated)
			}
			var got []time.Time
			for m := range s.Kinds[KindElection].PerMinute {
				got = append(got, m)
			}
			sort.Slice(got, func(i, j int) bool { return got[i].Before(got[j]) })
			if !slices.EqualFunc(got, tc.minutes, time.Time.Equal) {
				t.Errorf("minutes %v, want %v", got, tc.minutes)
			}
			if !s.First.Equal(tc.span[0]) || !s.Last.Equal(tc.span[1]) {
				t.Errorf("span %v .. %v, want %v", s.First, s.Last, tc.span)
			}
			w := s.Kinds[KindElection].Worst
			if (w.Time.IsZero()) != (tc.undated > 0) || (!w.Time.IsZero() && w.Time.Year() < 2026) {
				t.Errorf("worst event's time %v", w.Time)
			}
			notes := strings.Join(append(logNotes(s), s.Notes()...), "\n")
			if strings.Contains(notes, "0000-") {
				t.Errorf("a time in year 0 in the notes:\n%s", notes)
			}
			if tc.undated > 0 && (!strings.Contains(notes, "year-less") || strings.Contains(notes, "log minute")) {
				t.Errorf("notes of a log without years:\n%s", notes)
			}
			if tc.undated == 0 && (len(s.Notes()) > 0 || !strings.Contains(notes, "log minute "+tc.minutes[0].Format("2006-01-02 15:04"))) {
				t.Errorf("notes of a log with years:\n%s", notes)
			}
		})
	}
}

func TestParseLogsCountsPerMinuteAndWorst(t *testing.T) {
	log := strings.Join([]string{
		`{"level":"warn","ts":"2026-11-22T04:31:02Z","msg":"slow fdatasync","took":"1.2s"}`,
		`{"level":"warn","ts":"2026-11-22T04:31:50Z","msg":"slow fdatasync","took":"3.5s"}`,
		`{"level":"warn","ts":"2026-11-22T04:33:01Z","msg":"slow fdatasync","took":"1.1s"}`,
		``,
		`not a log line`,
		`2026-11-22 04:33:05.000000 W | etcdserver: apply entries took too long [150ms for 1 entries]`,
	}, "\n")
	s := ParseLogs([]byte(log))
	if s.Lines != 5 || s.Recognised != 4 || s.Formats["other"] != 1 || s.Formats["zap"] != 3 {
		t.Fatalf("summary %+v", s)
	}
	ks := s.Kinds[KindSlowFdatasync]
	if ks.Count != 3 || ks.Worst.Took != 3500*time.Millisecond {
		t.Fatalf("slow fdatasync %+v", ks)
	}
	m1 := time.Date(2026, 11, 22, 4, 31, 0, 0, time.UTC)
	m3 := m1.Add(2 * time.Minute)
	if ks.PerMinute[m1] != 2 || ks.PerMinute[m3] != 1 || len(s.Minutes()) != 2 {
		t.Fatalf("per minute %v, minutes %v", ks.PerMinute, s.Minutes())
	}
	if !s.First.Equal(m1.Add(2*time.Second)) || !s.Last.Equal(m3.Add(5*time.Second)) {
		t.Errorf("span %v .. %v", s.First, s.Last)
	}
}

// FuzzParseLogLine: no input may panic, and an event always has a kind
// and a non-negative duration.
func FuzzParseLogLine(f *testing.F) {
	logs, _ := filepath.Glob("testdata/*.log")
	if len(logs) == 0 {
		f.Fatal("no captured logs in testdata/ for the seed corpus")
	}
	for _, name := range logs {
		if b, err := os.ReadFile(name); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				f.Add(l)
			}
		}
	}
	f.Add(`Nov 22 04:31:02 node1 etcd[812]: {"level":"warn","ts":"2026-11-22T04:31:02.123Z","msg":"slow fdatasync","took":"2s"}`)
	f.Add(`Nov 22 08:51:35.580509 vm etcd[27966]: became leader at term 5`)
	f.Add(`2026-11-22T08:51:26+0000 vm etcd[27827]: raft.node: 7520 lost leader 7520 at term 3`)
	f.Add(`2026-11-22T14:21:26+05:30 vm etcd[27827]: database space exceeded`)
	f.Add(`2026-11-22T14:21:26.353328+0530 vm etcd[27827]: 2026-11-22 08:51:26.100000 W | etcdserver: failed to send out heartbeat on time (exceeded the 100ms timeout for 905.1ms, to 8e9e)`)
	f.Add(`Sun 2026-11-22 04:51:26 -04 vm etcd[27827]: became leader at term 5`)
	f.Add(`Sun 2026-11-22 14:21:26 IST vm etcd[27827]: became leader at term 5`)
	f.Add("2026-11-22T04:31:02.123Z\tWARN\twal/wal.go:805\tslow fdatasync\t{\"took\": \"1.1s\"}")
	f.Add(`2019-08-13 11:12:14.000000 W | wal: sync duration of 1.5s, expected less than 1s`)
	f.Fuzz(func(t *testing.T, line string) {
		format, ev, ok := ParseLogLine(line)
		if format == "" {
			t.Fatal("empty format")
		}
		if ok && (ev.Kind == "" || ev.Took < 0) {
			t.Fatalf("event %+v", ev)
		}
		if !ev.NoYear.IsZero() && (!ev.Time.IsZero() || !strings.HasPrefix(format, "journal")) {
			t.Fatalf("a year-less time beside time %v in format %s", ev.Time, format)
		}
	})
}

// FuzzParseLogs: whole inputs, with long lines and odd line ends.
func FuzzParseLogs(f *testing.F) {
	f.Add([]byte("a\r\nb\n\n{\"msg\":\"slow fdatasync\",\"took\":\"1s\"}"))
	f.Add([]byte(strings.Repeat("x", 70000)))
	f.Add([]byte("Dec 31 23:59:50 n etcd[1]: lost leader 1 at term 3\nJan  1 00:00:30 n etcd[1]: {\"ts\":\"2027-01-01T00:00:30Z\",\"msg\":\"elected leader 2 at term 4\"}\n"))
	f.Add([]byte("Feb 29 10:00:00 n etcd[1]: became leader at term 2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := ParseLogs(b)
		if s.Recognised > s.Lines || s.Undated > s.Recognised {
			t.Fatalf("%d events (%d undated) in %d lines", s.Recognised, s.Undated, s.Lines)
		}
	})
}

func TestLongLogListsBusiestMinutes(t *testing.T) {
	var b strings.Builder
	start := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for i := range 100 {
		n := 1
		if i == 77 {
			n = 5 // the busiest minute
		}
		for range n {
			b.WriteString(`{"level":"warn","ts":"` + start.Add(time.Duration(i)*time.Minute).Format(time.RFC3339) + `","msg":"slow fdatasync","took":"1.5s"}` + "\n")
		}
	}
	s := ParseLogs([]byte(b.String()))
	notes := strings.Join(logNotes(s), "\n")
	if got := strings.Count(notes, "log minute "); got != maxMinuteNotes {
		t.Errorf("%d minute notes, want %d", got, maxMinuteNotes)
	}
	if !strings.Contains(notes, "events in 100 minutes") || !strings.Contains(notes, "log minute 2026-11-22 01:17: slow_fdatasync 5") {
		t.Errorf("notes:\n%s", notes)
	}
	if s.Count(KindSlowFdatasync) != 104 {
		t.Errorf("count %d, want 104", s.Count(KindSlowFdatasync))
	}
}
