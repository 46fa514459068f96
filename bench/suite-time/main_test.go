package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseEvents(t *testing.T) {
	stream := `{"Time":"2026-11-28T10:00:05Z","Action":"start","Package":"etcdbench/internal/a"}
{"Time":"2026-11-28T10:00:03Z","Action":"start","Package":"etcdbench/internal/b"}
# etcdbench/internal/c
{"Time":"2026-11-28T10:00:04Z","Action":"output","Package":"etcdbench/internal/a","Test":"TestY","Output":"passing noise\n"}
{"Time":"2026-11-28T10:00:04Z","Action":"pass","Package":"etcdbench/internal/a","Test":"TestY","Elapsed":1}
{"Time":"2026-11-28T10:00:05Z","Action":"output","Package":"etcdbench/internal/b","Test":"TestX/case","Output":"    x_test.go:9: syncs 3, want 5\n"}
{"Time":"2026-11-28T10:00:06Z","Action":"fail","Package":"etcdbench/internal/b","Test":"TestX/case","Elapsed":1.5}
{"Time":"2026-11-28T10:00:06Z","Action":"fail","Package":"etcdbench/internal/b","Test":"TestX","Elapsed":1.5}
{"Time":"2026-11-28T10:00:06Z","Action":"fail","Package":"etcdbench/internal/b","Test":"TestX/case","Elapsed":1.5}
{"Time":"2026-11-28T10:00:07Z","Action":"fail","Package":"etcdbench/internal/b","Elapsed":4}
{"Time":"2026-11-28T10:00:09Z","Action":"pass","Package":"etcdbench/internal/a","Elapsed":40.5}
{"Time":"2026-11-28T10:00:09Z","Action":"skip","Package":"etcdbench/internal/d","Elapsed":0}
`
	s, err := parseEvents(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 11, 28, 10, 0, 3, 0, time.UTC); !s.firstStart.Equal(want) {
		t.Errorf("first start %v, want the earliest package start %v", s.firstStart, want)
	}
	if len(s.packages) != 3 || s.packages[0].Package != "etcdbench/internal/a" || s.packages[0].Elapsed != 40500*time.Millisecond {
		t.Errorf("packages %+v: want 3, the slowest (a, 40.5 s) first", s.packages)
	}
	if got := strings.Join(s.failed, " "); got != "etcdbench/internal/b.TestX etcdbench/internal/b" {
		t.Errorf("failed %q: want the top-level test and its package", got)
	}
	if !strings.Contains(s.failedOutput, "syncs 3, want 5") || strings.Contains(s.failedOutput, "passing noise") {
		t.Errorf("failed output %q: want the failed subtest's lines alone", s.failedOutput)
	}
	if _, err := parseEvents(strings.NewReader("# build failed\n")); err == nil {
		t.Error("a stream where no package finished: no error")
	}
}

func TestSummarize(t *testing.T) {
	runs := []suiteRun{
		{Round: 1, Cache: "cold", Wall: 9 * time.Minute, FirstTest: 3 * time.Minute},
		{Round: 1, Cache: "warm", Wall: 5 * time.Minute, FirstTest: 20 * time.Second},
		{Round: 2, Cache: "cold", Wall: 7 * time.Minute, FirstTest: 2 * time.Minute},
	}
	var b strings.Builder
	f := summarize(&b, runs)
	if f["suite_cold_s"] != 480 || f["suite_cold_min_s"] != 420 || f["suite_cold_max_s"] != 540 || f["first_test_cold_s"] != 150 {
		t.Errorf("cold figures %v: want median 480 s over 420..540, first test 150 s", f)
	}
	if f["suite_warm_s"] != 300 {
		t.Errorf("warm median %v, want 300", f["suite_warm_s"])
	}
	if !strings.Contains(b.String(), "within") || !strings.Contains(b.String(), "issue 36") {
		t.Errorf("summary:\n%s", b.String())
	}
}

func TestTestCommand(t *testing.T) {
	env, argv, err := testCommand("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(argv) < 4 || argv[0] != "go" || argv[1] != "test" || argv[2] != "-json" || argv[len(argv)-1] != "./..." {
		t.Errorf("the README's test command as run: %q %q", env, argv)
	}
	for _, e := range env {
		if !strings.Contains(e, "=") {
			t.Errorf("environment word %q", e)
		}
	}
}
