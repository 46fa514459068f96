package sysinfo

import (
	"errors"
	"testing"
)

func TestParseCPUStat(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want CPUTimes
		bad  bool
	}{
		{"two cpus", "cpu  100 5 50 800 20 3 2 10 7 0\ncpu0 50 2 25 400 10 1 1 5 3 0\ncpu1 50 3 25 400 10 2 1 5 4 0\nintr 1 2 3\nctxt 99\n",
			CPUTimes{Busy: 100 + 5 + 50 + 3 + 2 + 10, Idle: 800 + 20, CPUs: 2}, false},
		{"old kernel, four counters", "cpu 10 0 5 85\ncpu0 10 0 5 85\n", CPUTimes{Busy: 15, Idle: 85, CPUs: 1}, false},
		{"cpufreq-like names are not cpus", "cpu 1 1 1 1 1\ncpux 2\ncpu0 1 1 1 1 1\n", CPUTimes{Busy: 3, Idle: 2, CPUs: 1}, false},
		{"no cpu line", "intr 1\nctxt 2\n", CPUTimes{}, true},
		{"too few counters", "cpu 1 2 3\n", CPUTimes{}, true},
		{"not a number", "cpu 1 2 x 4 5\n", CPUTimes{}, true},
		{"negative", "cpu 1 2 -3 4 5\n", CPUTimes{}, true},
		{"two cpu lines", "cpu 1 1 1 1 1\ncpu 1 1 1 1 1\n", CPUTimes{}, true},
		{"empty", "", CPUTimes{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseCPUStat([]byte(c.in))
			if c.bad != (err != nil) || got != c.want {
				t.Fatalf("got %+v, %v; want %+v (error %v)", got, err, c.want, c.bad)
			}
			if err != nil && !errors.Is(err, ErrCPUStat) {
				t.Errorf("error %v is not ErrCPUStat", err)
			}
		})
	}
	// This machine's own: at least one CPU, and time has passed.
	own, err := ReadCPUStat("/")
	if err != nil {
		t.Skipf("no /proc/stat: %v", err)
	}
	if own.CPUs < 1 || own.Busy+own.Idle == 0 {
		t.Fatalf("own /proc/stat: %+v", own)
	}
}

func TestBusyShare(t *testing.T) {
	for _, c := range []struct {
		name          string
		before, after CPUTimes
		want          float64
		ok            bool
	}{
		{"quarter busy", CPUTimes{Busy: 100, Idle: 100}, CPUTimes{Busy: 150, Idle: 250}, 0.25, true},
		{"saturated", CPUTimes{Busy: 100, Idle: 100}, CPUTimes{Busy: 300, Idle: 100}, 1, true},
		{"no time passed", CPUTimes{Busy: 100, Idle: 100}, CPUTimes{Busy: 100, Idle: 100}, 0, false},
		{"went back", CPUTimes{Busy: 100, Idle: 100}, CPUTimes{Busy: 50, Idle: 300}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, ok := BusyShare(c.before, c.after); got != c.want || ok != c.ok {
				t.Fatalf("BusyShare = %v, %v; want %v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

func FuzzParseCPUStat(f *testing.F) {
	f.Add([]byte("cpu  100 5 50 800 20 3 2 10 7 0\ncpu0 50 2 25 400 10 1 1 5 3 0\n"))
	f.Add([]byte("cpu 1 2 3 4\n"))
	f.Add([]byte("cpu0 1\ncpu"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCPUStat(b) // must not panic
		if err != nil && c != (CPUTimes{}) {
			t.Fatalf("an error with times %+v for %q", c, b)
		}
	})
}
