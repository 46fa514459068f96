package sysinfo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"etcdbench/internal/testutil/loopmount"
)

func TestStackFixtures(t *testing.T) {
	const (
		sdaDir = "sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda"
		sdbDir = "sys/devices/pci0000:00/0000:00:1f.2/ata2/host1/target1:0:0/1:0:0:0/block/sdb"
		md0    = "sys/devices/virtual/block/md0"
		dm0    = "sys/devices/virtual/block/dm-0"
		loop0  = "sys/devices/virtual/block/loop0"
		loop1  = "sys/devices/virtual/block/loop1"
	)
	disk := func(dir, rot, cache string) map[string]string {
		return map[string]string{
			dir + "/queue/rotational":  rot + "\n",
			dir + "/queue/scheduler":   "[mq-deadline] none\n",
			dir + "/queue/write_cache": cache + "\n",
			dir + "/sda1/partition":    "1\n",
			dir + "/sdb1/partition":    "1\n",
		}
	}
	soft := func(dir string) map[string]string {
		return map[string]string{dir + "/queue/rotational": "1\n", dir + "/queue/scheduler": "none\n", dir + "/queue/write_cache": "write back\n"}
	}
	disks := merge(disk(sdaDir, "1", "write back"), disk(sdbDir, "0", "write through"))
	tests := []struct {
		name       string
		mountinfo  string
		files      map[string]string
		links      map[string]string
		dir        string
		chain      string
		bottom     []string // names of the bottom devices
		unresolved string   // in Stack.Unresolved
		judged     string   // JudgedDevice's name; "" when not ok
		rotational *bool    // JudgedDevice's Rotational
	}{
		{
			name:      "md raid1 over two disks",
			mountinfo: "30 1 9:0 / /var/lib/etcd rw - ext4 /dev/md0 rw\n",
			files:     merge(disks, soft(md0), map[string]string{md0 + "/md/level": "raid1\n"}),
			links: map[string]string{
				"sys/dev/block/9:0":   "../../devices/virtual/block/md0",
				md0 + "/slaves/sda1":  "../../../../../../" + sdaDir + "/sda1",
				md0 + "/slaves/sdb1":  "../../../../../../" + sdbDir + "/sdb1",
				"sys/class/block/md0": "../../devices/virtual/block/md0",
			},
			dir:   "/var/lib/etcd",
			chain: "md0 (raid1) -> [sda1 on sda, sdb1 on sdb]", bottom: []string{"sda", "sdb"},
			judged: "md0 (raid1) -> [sda1 on sda, sdb1 on sdb]", rotational: new(bool),
		},
		{
			name:      "dm-crypt over a partition of a spinning disk",
			mountinfo: "30 1 253:0 / /var/lib/etcd rw - xfs /dev/mapper/crypt rw\n",
			files:     merge(disks, soft(dm0), map[string]string{dm0 + "/dm/uuid": "CRYPT-LUKS2-abc-crypt\n", dm0 + "/dm/name": "crypt\n"}),
			links: map[string]string{
				"sys/dev/block/253:0": "../../devices/virtual/block/dm-0",
				dm0 + "/slaves/sda1":  "../../../../../../" + sdaDir + "/sda1",
			},
			dir:   "/var/lib/etcd",
			chain: "dm-0 (dm-crypt crypt) -> sda1 on sda", bottom: []string{"sda"},
			judged: "sda", rotational: ptrBool(true),
		},
		{
			name: "loop on a loop on a disk",
			mountinfo: "27 1 8:1 / / rw - ext4 /dev/sda1 rw\n" +
				"30 27 7:1 / /images rw - xfs /dev/loop1 rw\n" +
				"31 27 7:0 / /var/lib/etcd rw - ext4 /dev/loop0 rw,nobarrier\n",
			files: merge(disks, soft(loop0), soft(loop1), map[string]string{
				loop0 + "/loop/backing_file": "/images/inner.img\n",
				loop1 + "/loop/backing_file": "/outer.img (deleted)\n",
			}),
			links: map[string]string{
				"sys/dev/block/7:0": "../../devices/virtual/block/loop0",
				"sys/dev/block/7:1": "../../devices/virtual/block/loop1",
				"sys/dev/block/8:1": "../../../" + sdaDir + "/sda1",
			},
			dir:   "/var/lib/etcd",
			chain: "loop0 -> file /images/inner.img on xfs (/dev/loop1) -> loop1 -> deleted file /outer.img on ext4 (/dev/sda1) -> sda1 on sda", bottom: []string{"sda"},
			judged: "sda", rotational: ptrBool(true),
		},
		{
			name:      "loop whose file is on tmpfs",
			mountinfo: "27 1 0:30 / /dev/shm rw - tmpfs tmpfs rw\n31 1 7:0 / /var/lib/etcd rw - ext4 /dev/loop0 rw\n",
			files:     merge(soft(loop0), map[string]string{loop0 + "/loop/backing_file": "/dev/shm/x.img\n"}),
			links:     map[string]string{"sys/dev/block/7:0": "../../devices/virtual/block/loop0"},
			dir:       "/var/lib/etcd",
			chain:     "loop0 -> file /dev/shm/x.img on tmpfs (tmpfs) (memory, no device)",
		},
		{
			name:      "loop file from another mount namespace",
			mountinfo: "31 1 7:0 / /var/lib/etcd rw - ext4 /dev/loop0 rw\n",
			files:     merge(soft(loop0), map[string]string{loop0 + "/loop/backing_file": "relative.img\n"}),
			links:     map[string]string{"sys/dev/block/7:0": "../../devices/virtual/block/loop0"},
			dir:       "/var/lib/etcd",
			chain:     "loop0 -> file relative.img -> ?", unresolved: "no mount in this namespace holds relative.img",
		},
		{
			name:      "loop without its loop directory",
			mountinfo: "31 1 7:0 / /var/lib/etcd rw - ext4 /dev/loop0 rw\n",
			files:     soft(loop0),
			links:     map[string]string{"sys/dev/block/7:0": "../../devices/virtual/block/loop0"},
			dir:       "/var/lib/etcd",
			chain:     "loop0 -> ?", unresolved: "loop0's backing file unknown",
		},
		{
			name:      "loop on itself",
			mountinfo: "31 1 7:0 / / rw - ext4 /dev/loop0 rw\n",
			files:     merge(soft(loop0), map[string]string{loop0 + "/loop/backing_file": "/disk.img\n"}),
			links:     map[string]string{"sys/dev/block/7:0": "../../devices/virtual/block/loop0"},
			dir:       "/",
			chain:     "loop0 -> file /disk.img on ext4 (/dev/loop0) -> loop0 -> ?", unresolved: "loop0 lies below itself",
		},
		{
			name:      "dm without slaves",
			mountinfo: "30 1 253:0 / /var/lib/etcd rw - xfs /dev/dm-0 rw\n",
			files:     soft(dm0),
			links:     map[string]string{"sys/dev/block/253:0": "../../devices/virtual/block/dm-0"},
			dir:       "/var/lib/etcd",
			chain:     "dm-0 -> ?", unresolved: "devices under dm-0 unknown",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fakeRoot(t, merge(procFiles, map[string]string{"proc/self/mountinfo": tt.mountinfo}, tt.files), tt.links)
			f := Collect(root, tt.dir)
			if f.Stack == nil {
				t.Fatalf("no stack; device %s, notes %q", toJSON(t, f.Device), f.Notes)
			}
			if f.Stack.Chain != tt.chain {
				t.Errorf("chain %q\nwant  %q", f.Stack.Chain, tt.chain)
			}
			var bottom []string
			for _, d := range f.Stack.Bottom {
				bottom = append(bottom, d.Name)
			}
			if strings.Join(bottom, ",") != strings.Join(tt.bottom, ",") {
				t.Errorf("bottom %q, want %q", bottom, tt.bottom)
			}
			if !strings.Contains(f.Stack.Unresolved, tt.unresolved) || (tt.unresolved == "") != (f.Stack.Unresolved == "") {
				t.Errorf("unresolved %q, want %q", f.Stack.Unresolved, tt.unresolved)
			}
			if tt.unresolved != "" && !strings.Contains(strings.Join(f.Notes, "\n"), "device rules (rotational, write cache, virtual) are not applied") {
				t.Errorf("notes %q do not say the device rules are skipped", f.Notes)
			}
			d, ok := f.JudgedDevice()
			if ok != (tt.judged != "") || d.Name != tt.judged {
				t.Fatalf("JudgedDevice = %q, %v; want %q", d.Name, ok, tt.judged)
			}
			if ok && (d.Rotational == nil) != (tt.rotational == nil) || (d.Rotational != nil && tt.rotational != nil && *d.Rotational != *tt.rotational) {
				t.Errorf("judged rotational %v, want %v", d.Rotational, tt.rotational)
			}
		})
	}
}

func ptrBool(b bool) *bool { return &b }

func TestJudgedDeviceOfOldResults(t *testing.T) {
	if _, ok := (Facts{Device: &Device{Name: "loop0"}}).JudgedDevice(); ok {
		t.Error("a loop device without a stack was judged by its own defaults")
	}
	if d, ok := (Facts{Device: &Device{Name: "nvme0n1"}}).JudgedDevice(); !ok || d.Name != "nvme0n1" {
		t.Errorf("a plain disk: %q, %v", d.Name, ok)
	}
}

func TestParseBackingFile(t *testing.T) {
	for _, c := range []struct {
		in, path    string
		deleted, ok bool
	}{
		{"/var/tmp/a.img\n", "/var/tmp/a.img", false, true},
		{"/var/tmp/a b.img (deleted)\n", "/var/tmp/a b.img", true, true},
		{"\n", "", false, false},
		{"", "", false, false},
	} {
		p, d, ok := ParseBackingFile([]byte(c.in))
		if p != c.path || d != c.deleted || ok != c.ok {
			t.Errorf("ParseBackingFile(%q) = %q, %v, %v; want %q, %v, %v", c.in, p, d, ok, c.path, c.deleted, c.ok)
		}
	}
}

func FuzzParseBackingFile(f *testing.F) {
	for _, s := range []string{"/a.img\n", "/a (deleted)\n", "", " (deleted)"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, _, ok := ParseBackingFile(b)
		if ok && strings.TrimSpace(p) == "" {
			t.Errorf("ok with an empty path from %q", b)
		}
		if !ok && p != "" {
			t.Errorf("not ok but path %q", p)
		}
	})
}

// TestStackRealLoop resolves real loop devices: an ext4 image on this
// machine's disk, and an xfs image inside that ext4 (a loop on a loop).
// The bottom must be the device that holds the test's temporary
// directory, and the rules must read it, not the loop device's defaults.
func TestStackRealLoop(t *testing.T) {
	outer := loopmount.Mount(t, "", "ext4", "", 600<<20)
	host := Collect("/", filepath.Dir(outer.Image))
	hostDev, hostOK := host.JudgedDevice()

	f := Collect("/", outer.Dir)
	t.Logf("outer: %s", toJSON(t, f.Stack))
	loop := filepath.Base(outer.Loop)
	if f.Device == nil || f.Device.Name != loop || f.Stack == nil {
		t.Fatalf("device %s, stack %s; want %s with a stack", toJSON(t, f.Device), toJSON(t, f.Stack), loop)
	}
	want := loop + " -> file " + outer.Image + " on " + host.Filesystem.Type + " (" + host.Filesystem.Source + ")"
	if !strings.HasPrefix(f.Stack.Chain, want) {
		t.Errorf("chain %q, want it to start %q", f.Stack.Chain, want)
	}
	if len(f.Stack.Files) != 1 || f.Stack.Files[0].Filesystem.Type != host.Filesystem.Type {
		t.Errorf("files %s, want the image on %s", toJSON(t, f.Stack.Files), host.Filesystem.Type)
	}
	judged, ok := f.JudgedDevice()
	if ok != hostOK || judged.Name != hostDev.Name {
		t.Errorf("judged device %q (%v), want the host's %q (%v); notes %q", judged.Name, ok, hostDev.Name, hostOK, f.Notes)
	}
	if ok && judged.Rotational != nil && hostDev.Rotational != nil && *judged.Rotational != *hostDev.Rotational {
		t.Errorf("judged rotational %v, host's %v", *judged.Rotational, *hostDev.Rotational)
	}

	innerDir := filepath.Join(outer.Dir, "images")
	if err := os.Mkdir(innerDir, 0o755); err != nil {
		t.Fatal(err)
	}
	inner := loopmount.Mount(t, innerDir, "xfs", "", 320<<20)
	g := Collect("/", inner.Dir)
	t.Logf("inner: %s", toJSON(t, g.Stack))
	if g.Stack == nil || !strings.Contains(g.Stack.Chain, " on ext4 ("+outer.Loop+") -> "+loop+" -> file "+outer.Image) {
		t.Errorf("chain %s does not go through %s and its file", toJSON(t, g.Stack), loop)
	}
	if d, ok := g.JudgedDevice(); ok != hostOK || d.Name != hostDev.Name {
		t.Errorf("inner judged device %q (%v), want %q", d.Name, ok, hostDev.Name)
	}
}
