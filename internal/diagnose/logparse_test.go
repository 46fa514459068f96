package diagnose

import (
	"os"
	"path/filepath"
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
		{"journal alone keeps its time without a year",
			`Aug  3 11:12:14 node1 etcd[812]: became leader at term 5`,
			"journal", KindElection, 0, "0000-08-03T11:12:14Z"},
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
	})
}

// FuzzParseLogs: whole inputs, with long lines and odd line ends.
func FuzzParseLogs(f *testing.F) {
	f.Add([]byte("a\r\nb\n\n{\"msg\":\"slow fdatasync\",\"took\":\"1s\"}"))
	f.Add([]byte(strings.Repeat("x", 70000)))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := ParseLogs(b)
		if s.Recognised > s.Lines {
			t.Fatalf("%d events in %d lines", s.Recognised, s.Lines)
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
