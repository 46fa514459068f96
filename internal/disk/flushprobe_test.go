package disk

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"etcdbench/internal/stats"
	"etcdbench/internal/testutil/loopmount"
)

// TestFlushProbeMounts runs the probe on real mounts. tmpfs and ext4 with
// barrier=0 send no flush: the probe must not find a flush cost there.
// ext4 with barriers on a loop device turns each flush into an fsync of
// the image file on the host's filesystem, which costs at least a journal
// commit: the probe must see it. The machine's own disk is only logged
// (a power-loss-protected cache would rightly show no cost).
func TestFlushProbeMounts(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: mounts loop images")
	}
	cases := []struct {
		name  string
		dir   func(t *testing.T) string
		shows *bool // nil: only logged
	}{
		{"test's temporary directory", func(t *testing.T) string { return t.TempDir() }, nil},
		{"tmpfs", func(t *testing.T) string { return loopmount.Tmpfs(t, 16<<20) }, ptr(false)},
		{"ext4 barrier=0 on a loop", func(t *testing.T) string { return loopmount.Mount(t, "", "ext4", "barrier=0", 64<<20).Dir }, ptr(false)},
		{"ext4 with barriers on a loop", func(t *testing.T) string { return loopmount.Mount(t, "", "ext4", "", 64<<20).Dir }, ptr(true)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.dir(t)
			p, err := RunFlushProbe(dir)
			if err != nil {
				t.Fatal(err)
			}
			figs, note := p.Figures()
			t.Logf("%d pairs in %v: with flush %v (%v..%v), without %v (%v..%v), write only %v; %s",
				p.Pairs, p.Elapsed.Round(time.Millisecond), p.Synced, time.Duration(p.SyncedCI.LowerNs), time.Duration(p.SyncedCI.UpperNs),
				p.Unsynced, time.Duration(p.UnsyncedCI.LowerNs), time.Duration(p.UnsyncedCI.UpperNs), p.WithoutFlushIsWriteOnly, note)
			if p.Pairs < FlushProbeRule.MinPairs || len(figs) != 3 {
				t.Errorf("%d pairs, %d figures", p.Pairs, len(figs))
			}
			if c.shows != nil && p.Distinguishable != *c.shows {
				t.Errorf("flush cost visible = %v, want %v", p.Distinguishable, *c.shows)
			}
			if p.Elapsed > 5*FlushProbeRule.MaxTime+time.Second {
				t.Errorf("the probe took %v", p.Elapsed)
			}
			if _, err := os.Stat(filepath.Join(dir, FlushProbeRule.FileName)); !os.IsNotExist(err) {
				t.Errorf("the probe's file is left behind: %v", err)
			}
		})
	}
}

func ptr(b bool) *bool { return &b }

func TestFlushCostShows(t *testing.T) {
	ci := func(lo, hi time.Duration) stats.QuantileInterval {
		return stats.QuantileInterval{Level: 0.95, LowerNs: lo.Nanoseconds(), UpperNs: hi.Nanoseconds()}
	}
	us := time.Microsecond
	cases := []struct {
		name             string
		synced, unsynced stats.QuantileInterval
		median           time.Duration
		want             bool
	}{
		{"a millisecond flush", ci(1100*us, 1300*us), ci(80*us, 100*us), 90 * us, true},
		{"overlapping intervals", ci(95*us, 120*us), ci(80*us, 100*us), 90 * us, false},
		{"separate but tiny", ci(105*us, 110*us), ci(90*us, 100*us), 95 * us, false},
		{"separate, a 100us gap but under MinRatio of a slow write", ci(5100*us, 5200*us), ci(4900*us, 5000*us), 4950 * us, false},
		// The VM: 42 us against 25 us, intervals 41-42 and 25-26:
		// a 15 us gap, 60 % of the write's cost, is a flush.
		{"a fast flush, apart and 60 % more", ci(41*us, 42*us), ci(25*us, 26*us), 25 * us, true},
		{"apart by less than a system call's jitter", ci(1300*time.Nanosecond, 1400*time.Nanosecond), ci(1000*time.Nanosecond, 1100*time.Nanosecond), 1050 * time.Nanosecond, false},
		{"tmpfs-like: no flush", ci(2*us, 3*us), ci(2*us, 3*us), 2 * us, false},
	}
	for _, c := range cases {
		if got := FlushCostShows(c.synced, c.unsynced, c.median); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
