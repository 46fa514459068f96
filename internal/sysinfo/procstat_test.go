package sysinfo

import (
	"errors"
	"os"
	"runtime"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want ProcStat
		bad  bool
	}{
		{"plain", "1234 (etcd) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 12 0 987654 100000 200",
			ProcStat{State: 'S', UTimeTicks: 5, STimeTicks: 6, StartTicks: 987654}, false},
		{"name with spaces and parens", "77 (a b) (c)) R 1 77 77 0 -1 0 0 0 0 0 250 75 0 0 20 0 1 0 42 0 0",
			ProcStat{State: 'R', UTimeTicks: 250, STimeTicks: 75, StartTicks: 42}, false},
		{"zombie", "9 (sleep) Z 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7 0 0", ProcStat{State: 'Z', StartTicks: 7}, false},
		{"no paren", "1234 etcd S 1", ProcStat{}, true},
		{"too short", "1 (x) S 1 2 3", ProcStat{}, true},
		{"not a number", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 abc 0", ProcStat{}, true},
		{"bad cpu time", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 -5 0 0 0 20 0 1 0 3 0", ProcStat{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseProcStat([]byte(c.in))
			if c.bad != (err != nil) || got != c.want {
				t.Fatalf("got %+v, %v; want %+v (error %v)", got, err, c.want, c.bad)
			}
			if err != nil && !errors.Is(err, ErrProcStat) {
				t.Errorf("error %v is not ErrProcStat", err)
			}
		})
	}
	// The reading thread's own line: it is running while it reads.
	// /proc/self/stat is the thread group leader's, which sleeps while
	// another thread runs the test (state S on a loaded machine).
	runtime.LockOSThread()
	self, err := os.ReadFile("/proc/thread-self/stat")
	runtime.UnlockOSThread()
	if err != nil {
		t.Skip("no /proc")
	}
	if s, err := ParseProcStat(self); err != nil || s.StartTicks == 0 || s.State != 'R' {
		t.Fatalf("own stat: %+v, %v; want a start time and state R", s, err)
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("1234 (etcd) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 12 0 987654 100000 200"))
	f.Add([]byte("1 ())) x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseProcStat(b) // must not panic
		if err == nil && s.State == 0 {
			t.Fatalf("parsed %q with no state", b)
		}
	})
}
