package zoo

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestMountinfoCgroup(t *testing.T) {
	for _, tc := range []struct {
		name, info string
		dir        string
		h          Hierarchy
	}{
		{"hybrid: v1 blkio wins", "35 25 0:30 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw\n" +
			"40 25 0:35 / /sys/fs/cgroup/blkio rw,relatime shared:15 - cgroup cgroup rw,blkio\n", "/sys/fs/cgroup/blkio", V1},
		{"unified", "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n", "/sys/fs/cgroup", V2},
		{"v1 without blkio", "41 25 0:36 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n", "", 0},
		{"garbage", "no fields here\n", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, h, err := mountinfoCgroup([]byte(tc.info))
			if tc.dir == "" {
				if !errors.Is(err, ErrUnavailable) {
					t.Errorf("got %q %v %v, want ErrUnavailable", dir, h, err)
				}
				return
			}
			if err != nil || dir != tc.dir || h != tc.h {
				t.Errorf("got %q %v %v, want %q %v", dir, h, err, tc.dir, tc.h)
			}
		})
	}
}

func TestParseStats(t *testing.T) {
	v1 := []byte("254:0 Read 166\n254:0 Write 1501\n253:0 Write 7\n254:0 Sync 1667\nTotal 1667\n")
	if n := parseBlkioStat(v1, "254:0", "Write"); n != 1501 {
		t.Errorf("v1 writes = %d, want 1501", n)
	}
	if n := parseBlkioStat(v1, "8:0", "Write"); n != 0 {
		t.Errorf("v1 writes of another device = %d, want 0", n)
	}
	v2 := []byte("8:16 rbytes=1 wbytes=2 rios=3 wios=4\n254:0 rbytes=10 wbytes=4096 rios=30 wios=12 dbytes=0 dios=0\n")
	if ios, b := parseIOStat(v2, "254:0"); ios != 12 || b != 4096 {
		t.Errorf("v2 = %d ios %d bytes, want 12 and 4096", ios, b)
	}
}

func TestCreditsSpend(t *testing.T) {
	c := &credits{baseline: 100, size: 1000, left: 1000, bursting: true}
	steps := []struct {
		ios  int64
		want bool
	}{
		{500, true},  // 1000 + 10 - 500 = 510
		{600, false}, // spent
		{5, false},   // 5 saved: not enough to burst at 1000 again
		{0, false},
	}
	for i, s := range steps {
		if got := c.spend(s.ios, 100*time.Millisecond, 1000); got != s.want {
			t.Fatalf("step %d (%d ios): bursting %v, want %v (left %g)", i, s.ios, got, s.want, c.left)
		}
	}
	// Idle for 10 s refills 1000 credits: more than a second of the
	// peak's excess (900), so it bursts again; the size caps the balance.
	if !c.spend(0, 10*time.Second, 1000) || c.left != 1000 {
		t.Errorf("after 10 s idle: bursting %v, left %g; want true, 1000", c.bursting, c.left)
	}
}

func TestLogNormal(t *testing.T) {
	draw := LogNormal(2*time.Millisecond, 10*time.Millisecond, 7)
	d := make([]time.Duration, 20000)
	for i := range d {
		d[i] = draw()
	}
	slices.Sort(d)
	med, p99 := d[len(d)/2], d[len(d)*99/100]
	if med < 1900*time.Microsecond || med > 2100*time.Microsecond {
		t.Errorf("median %v, want about 2ms", med)
	}
	if p99 < 9*time.Millisecond || p99 > 11*time.Millisecond {
		t.Errorf("p99 %v, want about 10ms", p99)
	}
	again := LogNormal(2*time.Millisecond, 10*time.Millisecond, 7)
	first := LogNormal(2*time.Millisecond, 10*time.Millisecond, 7)()
	if again() != first {
		t.Error("the same seed drew different delays")
	}
}

func TestLookup(t *testing.T) {
	all := Default()
	got, err := Lookup(all, "plain, iops-500")
	if err != nil || len(got) != 2 || got[0].Name != "plain" || got[1].Name != "iops-500" {
		t.Errorf("Lookup = %v, %v", got, err)
	}
	if got, err := Lookup(all, ""); err != nil || len(got) != len(all) {
		t.Errorf("Lookup(\"\") = %d storages, %v", len(got), err)
	}
	if _, err := Lookup(all, "plain,floppy"); err == nil {
		t.Error("Lookup of an unknown storage: no error")
	}
	seen := map[string]bool{}
	for _, s := range all {
		if seen[s.Name] || s.About == "" {
			t.Errorf("storage %q: duplicate name or no description", s.Name)
		}
		seen[s.Name] = true
	}
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{`/mnt/a\040b`: "/mnt/a b", "/plain": "/plain", `/tab\011x`: "/tab\tx", `/odd\0`: `/odd\0`} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseGoAllocStats(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       GoAllocStats
		ok         bool
	}{
		{"figures", "stats 13 2.790 10.181 343452528 1749742096", GoAllocStats{13, 2.79, 10.181, 343452528, 1749742096}, true},
		{"ready line", "ready 177886312", GoAllocStats{}, false},
		{"a field short", "stats 13 2.790 10.181 343452528", GoAllocStats{}, false},
		{"not a number", "stats 13 two 10.181 343452528 1749742096", GoAllocStats{}, false},
		{"negative count", "stats -1 2.790 10.181 343452528 1749742096", GoAllocStats{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseGoAllocStats(tc.line)
			if got != tc.want || ok != tc.ok {
				t.Errorf("parseGoAllocStats(%q) = %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
			}
		})
	}
}
