package sysinfo

import (
	"errors"
	"os"
	"testing"
)

func TestParseSchedstat(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want Schedstat
		bad  bool
	}{
		{"thread", "1051750 299057 8\n", Schedstat{RunNs: 1051750, WaitNs: 299057, Slices: 8}, false},
		{"two fields", "1 2\n", Schedstat{}, true},
		{"four fields", "1 2 3 4\n", Schedstat{}, true},
		{"negative", "1 -2 3\n", Schedstat{}, true},
		{"empty", "", Schedstat{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseSchedstat([]byte(c.in))
			if c.bad != (err != nil) || got != c.want {
				t.Fatalf("got %+v, %v; want %+v (error %v)", got, err, c.want, c.bad)
			}
			if err != nil && !errors.Is(err, ErrSchedstat) {
				t.Errorf("error %v is not ErrSchedstat", err)
			}
		})
	}
}

func TestWaitShare(t *testing.T) {
	for _, c := range []struct {
		name          string
		before, after Schedstat
		want          float64
		ok            bool
	}{
		{"a fifth waiting", Schedstat{RunNs: 100, WaitNs: 10}, Schedstat{RunNs: 500, WaitNs: 110}, 0.2, true},
		{"nothing ran", Schedstat{RunNs: 100, WaitNs: 10}, Schedstat{RunNs: 100, WaitNs: 10}, 0, false},
		{"a thread ended", Schedstat{RunNs: 100, WaitNs: 10}, Schedstat{RunNs: 90, WaitNs: 20}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, ok := WaitShare(c.before, c.after); got != c.want || ok != c.ok {
				t.Fatalf("WaitShare = %v, %v; want %v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// This process's own threads: they have run, and a process that is gone
// is an error.
func TestReadProcessSchedstat(t *testing.T) {
	s, err := ReadProcessSchedstat("/", os.Getpid())
	if err != nil {
		t.Skipf("no schedstat here: %v", err)
	}
	if s.RunNs == 0 || s.Slices == 0 {
		t.Fatalf("own threads: %+v", s)
	}
	if _, err := ReadProcessSchedstat(t.TempDir(), 1); err == nil {
		t.Error("a process without /proc accepted")
	}
}

func FuzzParseSchedstat(f *testing.F) {
	f.Add([]byte("1051750 299057 8\n"))
	f.Add([]byte("1 2"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSchedstat(b) // must not panic
		if err != nil && s != (Schedstat{}) {
			t.Fatalf("an error with counts %+v for %q", s, b)
		}
	})
}
