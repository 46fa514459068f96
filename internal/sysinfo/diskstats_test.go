package sysinfo

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

const diskstatsSample = ` 254       0 vda 110413 10456 5459178 98903 4161395 894202 28902376 301175 0 275028 509921 22792 48 127096880 3387 1604658 106455
 254       1 vda1 1000 0 8000 10 2000 0 16000 20 1 30 40
   8       0 sda 5 0 40 1 6 0 48 2 0 3 3 0 0 0 0
`

func TestParseDiskstats(t *testing.T) {
	all, err := ParseDiskstats([]byte(diskstatsSample))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		want DiskStats
	}{
		{"vda", DiskStats{Name: "vda", Major: 254, ReadIOs: 110413, ReadSectors: 5459178, ReadMs: 98903, WriteIOs: 4161395, WriteSectors: 28902376, WriteMs: 301175,
			InFlight: 0, IOMs: 275028, WeightedMs: 509921, FlushIOs: 1604658, FlushMs: 106455}},
		{"vda1", DiskStats{Name: "vda1", Major: 254, Minor: 1, ReadIOs: 1000, ReadSectors: 8000, ReadMs: 10, WriteIOs: 2000, WriteSectors: 16000, WriteMs: 20, InFlight: 1, IOMs: 30, WeightedMs: 40}},
		{"sda", DiskStats{Name: "sda", Major: 8, ReadIOs: 5, ReadSectors: 40, ReadMs: 1, WriteIOs: 6, WriteSectors: 48, WriteMs: 2, IOMs: 3, WeightedMs: 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := all[c.name]; got != c.want {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
	for _, bad := range []string{"8 0 sda 1 2 3", "8 x sda 1 2 3 4 5 6 7 8 9 10 11", "-8 0 sda 1 2 3 4 5 6 7 8 9 10 11", "8 0 sda 1 2 3 4 5 6 7 8 9 10 x"} {
		if _, err := ParseDiskstats([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestReadDiskstats(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "proc", "diskstats"), []byte(diskstatsSample), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := ReadDiskstats(root, "vda"); err != nil || d.WriteIOs != 4161395 {
		t.Fatalf("%+v, %v", d, err)
	}
	if _, err := ReadDiskstats(root, "nvme9n9"); !errors.Is(err, ErrNoDevice) {
		t.Fatalf("err = %v", err)
	}
}

func FuzzParseDiskstats(f *testing.F) {
	f.Add([]byte(diskstatsSample))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseDiskstats(b) // must not panic
	})
}
