package verdict

import (
	"strings"
	"testing"
	"time"

	"etcdbench/internal/stats"
)

func TestJudgeStorage(t *testing.T) {
	layer := func(fsType, mountOpts, superOpts string) StorageLayer {
		return StorageLayer{Where: "the directory's filesystem", FSType: fsType, Source: "/dev/x", MountOptions: mountOpts, SuperOptions: superOpts}
	}
	cases := []struct {
		name   string
		layers []StorageLayer
		want   []string // check IDs, in order
		detail string   // in the first verdict's detail
	}{
		{"plain ext4", []StorageLayer{layer("ext4", "rw,relatime", "rw,data=ordered")}, nil, ""},
		{"ext4 barrier=0 shows as nobarrier", []StorageLayer{layer("ext4", "rw,relatime", "rw,nobarrier")}, []string{CheckMountFlushDisabled}, "fast because writes are not made durable"},
		{"ext4 barrier=0 spelled out", []StorageLayer{layer("ext4", "rw", "rw,barrier=0")}, []string{CheckMountFlushDisabled}, "barrier=0"},
		{"ext4 barrier=1 is fine", []StorageLayer{layer("ext4", "rw", "rw,barrier=1")}, nil, ""},
		{"ext4 data=writeback still flushes", []StorageLayer{layer("ext4", "rw", "rw,data=writeback,journal_async_commit")}, nil, ""},
		{"btrfs nobarrier", []StorageLayer{layer("btrfs", "rw", "rw,ssd,nobarrier,subvol=/")}, []string{CheckMountFlushDisabled}, "btrfs"},
		{"xfs nobarrier (before 4.19)", []StorageLayer{layer("xfs", "rw", "rw,attr2,nobarrier")}, []string{CheckMountFlushDisabled}, "4.19"},
		{"f2fs fsync_mode=nobarrier", []StorageLayer{layer("f2fs", "rw", "rw,fsync_mode=nobarrier")}, []string{CheckMountFlushDisabled}, "non-inode"},
		{"an option of another filesystem does not count", []StorageLayer{layer("vfat", "rw", "rw,nobarrier,flush")}, nil, ""},
		{"a substring does not count", []StorageLayer{layer("ext4", "rw", "rw,nobarrier2")}, nil, ""},
		{"the backing file's filesystem counts", []StorageLayer{layer("xfs", "rw", "rw"), {Where: "the filesystem holding loop0's backing file /img", FSType: "ext4", SuperOptions: "rw,nobarrier"}}, []string{CheckMountFlushDisabled}, "loop0's backing file"},
		{"nfs warns", []StorageLayer{layer("nfs4", "rw", "rw,vers=4.2")}, []string{CheckNetworkFS}, "network"},
		{"fuse warns", []StorageLayer{layer("fuse.sshfs", "rw", "rw")}, []string{CheckNetworkFS}, "user-space daemon"},
		{"cifs warns", []StorageLayer{layer("cifs", "rw", "rw")}, []string{CheckNetworkFS}, ""},
		{"overlay warns", []StorageLayer{layer("overlay", "rw", "rw,lowerdir=/l,upperdir=/u")}, []string{CheckContainerLayer}, "writable layer"},
		{"tmpfs is left to the timing rule", []StorageLayer{layer("tmpfs", "rw", "rw")}, nil, ""},
		{"the FAIL comes first", []StorageLayer{layer("overlay", "rw", "rw"), {Where: "loop0's file", FSType: "ext4", SuperOptions: "nobarrier"}}, []string{CheckMountFlushDisabled, CheckContainerLayer}, "fast because"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs := JudgeStorage(StorageFigures{Layers: c.layers})
			var got []string
			for _, v := range vs {
				got = append(got, v.Check)
				if v.Source == "" || v.Detail == "" {
					t.Errorf("%s: source %q, detail %q", v.Check, v.Source, v.Detail)
				}
				want := Warn
				if v.Check == CheckMountFlushDisabled {
					want = Fail
				}
				if v.Status != want || IsDurabilityFailure(v) != (want == Fail) {
					t.Errorf("%s: %s, want %s", v.Check, v.Status, want)
				}
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Fatalf("checks %q, want %q", got, c.want)
			}
			if len(vs) > 0 && !strings.Contains(vs[0].Detail, c.detail) {
				t.Errorf("detail %q does not say %q", vs[0].Detail, c.detail)
			}
		})
	}
}

func TestMountRulesHaveSources(t *testing.T) {
	for _, r := range MountRules() {
		if len(r.FSTypes) == 0 || r.Option == "" || r.Effect == "" || !strings.Contains(r.Source, r.Option[:strings.IndexAny(r.Option+"=", "=")]) {
			t.Errorf("rule %+v lacks a filesystem, option, effect or a source that names it", r)
		}
	}
}

// TestJudgeWALPutsDurabilityFirst: with barrier=0 the WAL looks fast; the
// mount rule's FAIL must come before the p99 PASS, and the timing rule
// must not say fdatasync reaches stable storage.
func TestJudgeWALPutsDurabilityFirst(t *testing.T) {
	f := WALFigures{P50: 88 * time.Microsecond, P99: 168 * time.Microsecond, Outcome: stats.Pass, Level: 0.95, SyncIOPS: 14212, FSType: "ext4",
		Storage: StorageFigures{Layers: []StorageLayer{{Where: "the directory's filesystem", FSType: "ext4", Source: "/dev/loop0", SuperOptions: "rw,nobarrier"}}}}
	vs := JudgeWAL(Defaults(), f)
	if vs[0].Check != CheckMountFlushDisabled || vs[0].Status != Fail {
		t.Fatalf("first verdict %s %s, want %s FAIL", vs[0].Check, vs[0].Status, CheckMountFlushDisabled)
	}
	if Worst(vs) != Fail {
		t.Errorf("worst %s", Worst(vs))
	}
	for _, v := range vs {
		if v.Check == "sync_implausibly_fast" && v.Status == Pass {
			t.Errorf("%s passes although no flush is sent: %s", v.Check, v.Detail)
		}
	}
	f.Storage = StorageFigures{}
	for _, v := range JudgeWAL(Defaults(), f) {
		if v.Check == "sync_implausibly_fast" && v.Status != Pass {
			t.Errorf("without the option: %s %s", v.Check, v.Status)
		}
	}
}

func FuzzMatchMountRules(f *testing.F) {
	f.Add("ext4", "rw,relatime", "rw,nobarrier")
	f.Add("btrfs", "", "nobarrier,,")
	f.Fuzz(func(t *testing.T, fsType, mountOpts, superOpts string) {
		for _, r := range MatchMountRules(fsType, mountOpts, superOpts) {
			if !strings.Contains(mountOpts+","+superOpts, r.Option) || !contains(r.FSTypes, fsType) {
				t.Errorf("%q %q %q matched %+v", fsType, mountOpts, superOpts, r)
			}
		}
	})
}
