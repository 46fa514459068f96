package drill

import (
	"testing"
	"time"
)

func TestFindOutage(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	// put is due at due ms and takes took ms.
	put := func(due, took int) Request { return Request{Due: ms(due), Done: ms(due + took)} }
	failed := func(due, took int) Request { r := put(due, took); r.Failed = true; return r }
	cases := []struct {
		name         string
		reqs         []Request
		start, end   time.Time
		until        time.Time
		open         bool
		failed, slow int64
	}{
		{"no late put", []Request{put(900, 5), put(1010, 5), put(1100, 5)}, time.Time{}, time.Time{}, time.Time{}, false, 0, 0},
		{"an election", []Request{put(900, 5), put(1010, 1500), failed(1100, 200), put(1300, 1210), put(1700, 810), put(2100, 410), put(2200, 5)},
			ms(1010), ms(2510), ms(2510), false, 1, 3},
		{"caught in flight", []Request{put(600, 5), put(800, 900), put(1100, 5)}, ms(1000), ms(1105), ms(1700), false, 0, 1},
		{"never over", []Request{put(900, 5), failed(1100, 5000), failed(1200, 5000)}, ms(1100), ms(6200), ms(6200), true, 2, 0},
		{"a cut-off member's clients", []Request{put(1010, 700), put(1100, 5), put(1200, 3000)}, ms(1010), ms(1105), ms(4200), false, 0, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := FindOutage(tc.reqs, ms(1000), SlowPut)
			if !o.Start.Equal(tc.start) || !o.End.Equal(tc.end) || !o.LateUntil.Equal(tc.until) || o.Open != tc.open || o.Failed != tc.failed || o.Slow != tc.slow {
				t.Errorf("outage %v-%v, late until %v (open %v), %d failed, %d slow; want %v-%v, %v (open %v), %d, %d",
					o.Start.Sub(t0), o.End.Sub(t0), o.LateUntil.Sub(t0), o.Open, o.Failed, o.Slow, tc.start.Sub(t0), tc.end.Sub(t0), tc.until.Sub(t0), tc.open, tc.failed, tc.slow)
			}
		})
	}
}

func TestP99(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var reqs []Request
	for i := range 100 {
		reqs = append(reqs, Request{Due: t0.Add(time.Duration(i) * time.Millisecond), Done: t0.Add(time.Duration(i)*time.Millisecond + time.Duration(i+1)*time.Millisecond)})
	}
	p99, n := P99(reqs, t0, t0.Add(50*time.Millisecond))
	if n != 50 || p99 < 49*time.Millisecond || p99 > 51*time.Millisecond {
		t.Errorf("p99 %v of %d puts: want about 50ms of 50", p99, n)
	}
	// A put that timed out counts at its timeout: its client waited.
	for range 2 {
		reqs = append(reqs, Request{Due: t0, Done: t0.Add(3 * time.Second), Failed: true})
	}
	if p99, n = P99(reqs, t0, t0.Add(50*time.Millisecond)); n != 52 || p99 < 3*time.Second-10*time.Millisecond {
		t.Errorf("p99 %v of %d puts, two timed out after 3s: want 3s of 52", p99, n)
	}
}

// Two runs of late puts after the fault's end: the longer one counts;
// in-time puts between them end the first.
func TestLongestOutage(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var reqs []Request
	for i := range 100 {
		due := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		r := Request{Due: due, Done: due.Add(time.Millisecond)}
		if i >= 10 && i < 20 || i >= 40 && i < 70 {
			r.Done, r.Failed = due.Add(time.Second), true
		}
		reqs = append(reqs, r)
	}
	if got := LongestOutage(reqs, t0, SlowPut); got < 300*time.Millisecond || got > 302*time.Millisecond {
		t.Errorf("longest outage %v: want 301ms (puts 40-69 failed, put 70 in time)", got)
	}
	if got := LongestOutage(reqs, t0.Add(800*time.Millisecond), SlowPut); got != 0 {
		t.Errorf("from 0.8 s: %v, want none", got)
	}
}
