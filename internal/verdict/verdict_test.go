package verdict

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/stats"
)

func ptr(b bool) *bool { return &b }

func TestJudgeWAL(t *testing.T) {
	base := WALFigures{P50: 300 * time.Microsecond, P99: 2 * time.Millisecond, Outcome: stats.Pass, Level: 0.95, SyncIOPS: 2000, FSType: "ext4"}
	cases := []struct {
		name   string
		mod    func(*WALFigures)
		check  string
		want   Status
		detail string
	}{
		{"fast disk passes", func(*WALFigures) {}, "wal_fsync_p99", Pass, "well under"},
		{"decided fail", func(f *WALFigures) { f.P99, f.Outcome = 30*time.Millisecond, stats.Fail }, "wal_fsync_p99", Fail, "over the 10ms limit"},
		{"pass within margin warns", func(f *WALFigures) { f.P99 = 9 * time.Millisecond }, "wal_fsync_p99", Warn, "within 20 %"},
		{"undecided over the limit fails", func(f *WALFigures) { f.P99, f.Outcome = 11*time.Millisecond, stats.Undecided }, "wal_fsync_p99", Fail, "before that was certain"},
		{"undecided under the limit warns", func(f *WALFigures) { f.P99, f.Outcome = 7*time.Millisecond, stats.Undecided }, "wal_fsync_p99", Warn, "too close"},
		{"too few iops fails", func(f *WALFigures) { f.SyncIOPS = 40 }, "sync_iops_min", Fail, "below the 50"},
		{"light-load iops warns", func(f *WALFigures) { f.SyncIOPS = 120 }, "sync_iops_min", Warn, "recommended for heavy load"},
		{"heavy-load iops passes", func(*WALFigures) {}, "sync_iops_min", Pass, "meets the 500"},
		{"tmpfs warns", func(f *WALFigures) { f.MemoryFS, f.FSType = true, "tmpfs" }, "sync_implausibly_fast", Warn, "keeps data in memory"},
		{"implausibly fast sync warns", func(f *WALFigures) { f.P50 = 3 * time.Microsecond }, "sync_implausibly_fast", Warn, "volatile cache"},
		{"spinning disk with cache warns", func(f *WALFigures) { f.Rotational = ptr(true) }, "rotational_sync_fast", Warn, "write cache acknowledged"},
		{"spinning disk flushing to media passes", func(f *WALFigures) { f.Rotational, f.P50 = ptr(true), 5*time.Millisecond }, "rotational_sync_fast", Pass, "reaching the platter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := base
			c.mod(&f)
			vs := JudgeWAL(Defaults(), f)
			var got *Verdict
			for i := range vs {
				if vs[i].Check == c.check {
					got = &vs[i]
				}
			}
			if got == nil {
				t.Fatalf("no %s verdict in %+v", c.check, vs)
			}
			if got.Status != c.want || !strings.Contains(got.Detail, c.detail) {
				t.Fatalf("%s: %s %q, want %s containing %q", c.check, got.Status, got.Detail, c.want, c.detail)
			}
			if got.Source == "" {
				t.Fatal("verdict without a source")
			}
		})
	}
}

func TestVirtualRotationalDiskIsNotJudgedAsSpinning(t *testing.T) {
	f := WALFigures{P50: 200 * time.Microsecond, P99: time.Millisecond, Outcome: stats.Pass, SyncIOPS: 3000, Rotational: ptr(true), VirtualDisk: true}
	for _, v := range JudgeWAL(Defaults(), f) {
		if v.Check == "rotational_sync_fast" {
			t.Fatal("a virtual disk's rotational flag was trusted")
		}
	}
}

func TestOverrideChangesLimitAndSource(t *testing.T) {
	th := Defaults()
	th.WALFsyncP99.Override(0.020, "--wal-p99")
	f := WALFigures{P50: time.Millisecond, P99: 15 * time.Millisecond, Outcome: stats.Pass, SyncIOPS: 1000}
	v := JudgeWAL(th, f)[0]
	if v.Status != Pass || v.Limit != 0.020 || !strings.HasPrefix(v.Source, "command line --wal-p99") {
		t.Fatalf("%+v", v)
	}
}

func TestStatusText(t *testing.T) {
	for _, s := range []Status{Pass, Warn, Fail} {
		b, _ := json.Marshal(s)
		var back Status
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Fatalf("%s: %s -> %v, %v", s, b, back, err)
		}
	}
	var s Status
	if err := json.Unmarshal([]byte(`"MAYBE"`), &s); err == nil {
		t.Fatal("unknown status accepted")
	}
	if Worst([]Verdict{{Status: Warn}, {Status: Pass}}) != Warn || Worst(nil) != Pass {
		t.Fatal("Worst")
	}
}

// How sure a capacity verdict is, in words: a sweep decided by stop
// rules at its level, one of fixed-length steps judged by rules without a
// level it never had ("0 %").
func TestCapacityConfidenceSure(t *testing.T) {
	th := Defaults()
	for _, tc := range []struct {
		name    string
		decided bool
		level   float64
		want    string
	}{
		{"stop rules, decided", true, 0.95, "decided at 95 % confidence"},
		{"stop rules, not decided", false, 0.95, "NOT decided at 95 % confidence"},
		{"fixed-length steps", true, 0, "each step judged by its rules over its whole length, not a statistical bound"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := JudgeCapacity(th.CapacityMin, th.CapacityHeavy, 400, tc.decided, tc.level, "the rules")
			if got := v.Confidence.Sure(); got != tc.want {
				t.Fatalf("Sure() = %q, want %q", got, tc.want)
			}
		})
	}
}

// capacity's one answer: undecided steps above a low answer are a WARN,
// never a FAIL; a decided low answer fails; the words count puts.
func TestJudgeEtcdRate(t *testing.T) {
	th := Defaults()
	for _, tc := range []struct {
		name      string
		rate      float64
		undecided bool
		want      Status
		words     string
	}{
		{"undecided above nothing", 0, true, Warn, "at least 0 puts/s within the limits, undecided above"},
		{"decided low", 40, false, Fail, "carries 40 puts/s within the limits, under the 150"},
		{"light", 600, false, Warn, "carries 600 puts/s"},
		{"heavy", 3000, true, Pass, "carries 3000 puts/s within the limits, at least the 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := JudgeEtcdRate(th.CapacityMin, th.CapacityHeavy, tc.rate, tc.undecided, true, 0.95, "the rules")
			if v.Status != tc.want || !strings.Contains(v.Detail, tc.words) || v.Value != tc.rate {
				t.Fatalf("got %s %q (value %v), want %s with %q", v.Status, v.Detail, v.Value, tc.want, tc.words)
			}
		})
	}
}

// TestUndecidedAdviceNamesTheCommandsFlag holds the advice of a verdict
// the run ended before deciding to the flag its command gave: no flag
// named when it gave none, never one another command has.
func TestUndecidedAdviceNamesTheCommandsFlag(t *testing.T) {
	for _, c := range []struct {
		name, runLonger string
		p99             time.Duration
		want            string
	}{
		{"check's thorough budget, over the limit", "--thorough", 11 * time.Millisecond, "run longer (--thorough) to confirm"},
		{"disk wal's runtime, close under the limit", "--runtime", 7 * time.Millisecond, "run longer (--runtime) or treat"},
		{"capacity's step runtime", "--step-runtime", 11 * time.Millisecond, "run longer (--step-runtime) to confirm"},
		{"a command without such a flag, over the limit", "", 11 * time.Millisecond, "run longer to confirm"},
		{"a command without such a flag, close under the limit", "", 7 * time.Millisecond, "run longer or treat"},
	} {
		t.Run(c.name, func(t *testing.T) {
			th := Defaults()
			th.RunLonger = c.runLonger
			vs := JudgeWAL(th, WALFigures{P50: time.Millisecond, P99: c.p99, Outcome: stats.Undecided, Level: 0.95, SyncIOPS: 2000, FSType: "ext4"})
			for _, v := range vs {
				if v.Check != th.WALFsyncP99.ID {
					continue
				}
				if !strings.Contains(v.Detail, c.want) {
					t.Errorf("detail %q, want it to say %q", v.Detail, c.want)
				}
				if c.runLonger == "" && strings.Contains(v.Detail, "--") {
					t.Errorf("detail %q names a flag though the command gave none", v.Detail)
				}
				return
			}
			t.Fatalf("no %s verdict in %+v", th.WALFsyncP99.ID, vs)
		})
	}
}

// TestShownLimitIsTheOneCrossed: a WARN shows the warn limit its figure
// did not meet, a FAIL the fail limit; a verdict saved before warn limits
// were recorded shows its limit.
func TestShownLimitIsTheOneCrossed(t *testing.T) {
	th := Defaults()
	quantile := func(p99 time.Duration, o stats.Outcome) Verdict {
		return JudgeQuantile(th.WALFsyncP99, th.WarnMargin, QuantileFigures{Value: p99, Outcome: o, Level: 0.95}, "advice")
	}
	for _, c := range []struct {
		name   string
		v      Verdict
		status Status
		shown  float64
	}{
		{"IOPS under the heavy-load 500 warns against it", judgeSyncIOPS(th, 442), Warn, 500},
		{"IOPS under the 50 needed fails against it", judgeSyncIOPS(th, 40), Fail, 50},
		{"IOPS over both passes against the limit", judgeSyncIOPS(th, 900), Pass, 50},
		{"p99 within the margin warns against the margin", quantile(9*time.Millisecond, stats.Pass), Warn, 0.008},
		{"p99 decided over fails against the limit", quantile(12*time.Millisecond, stats.Fail), Fail, 0.010},
		{"undecided p99 under both warns against the limit", quantile(7*time.Millisecond, stats.Undecided), Warn, 0.010},
		{"bandwidth under the recommended warns against it", JudgeBandwidth(th.RecoveryBW, th.RecoveryBWLarge, "bw", "bandwidth", (th.RecoveryBW.Limit+th.RecoveryBWLarge.Limit)/2), Warn, th.RecoveryBWLarge.Limit},
		{"capacity under the heavy load warns against it", JudgeCapacity(th.CapacityMin, th.CapacityHeavy, (th.CapacityMin.Limit+th.CapacityHeavy.Limit)/2, true, 0.95, "rules"), Warn, th.CapacityHeavy.Limit},
		{"an undecided etcd rate under both warns against the limit", JudgeEtcdRate(th.CapacityMin, th.CapacityHeavy, 100, true, false, 0.95, "rules"), Warn, th.CapacityMin.Limit},
		{"a saved WARN without a warn limit shows its limit", Verdict{Status: Warn, Value: 1, Limit: 1, Comparison: "<"}, Warn, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.v.Status != c.status {
				t.Fatalf("status %s, want %s (%s)", c.v.Status, c.status, c.v.Detail)
			}
			if got := c.v.ShownLimit(); math.Abs(got-c.shown) > 1e-12 {
				t.Errorf("shown limit %v, want %v", got, c.shown)
			}
		})
	}
}

// A count that must stay under 1 reads "= 0": "1 (limit < 1)" read as a
// contradiction.
func TestLimitText(t *testing.T) {
	w := 8e-3
	for _, tc := range []struct {
		v    Verdict
		want string
	}{
		{Verdict{Status: Warn, Value: 1, Comparison: "<", Limit: 1, Unit: "count"}, "= 0"},
		{Verdict{Status: Pass, Value: 0.003, Comparison: "<", Limit: 0.01, Unit: "s"}, "< 10ms"},
		{Verdict{Status: Warn, Value: 0.009, Comparison: "<", Limit: 0.01, WarnLimit: &w, Unit: "s"}, "< 8ms"},
	} {
		if got := tc.v.LimitText(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.v, got, tc.want)
		}
	}
}
