package sysinfo

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseMountInfo(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Mount
		wantErr string // substring; "" means no error
	}{
		{
			name: "plain line",
			in:   "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n",
			want: []Mount{{ID: 27, ParentID: 1, MajorMinor: "254:0", Root: "/", MountPoint: "/", MountOptions: "rw,relatime", FSType: "ext4", Source: "/dev/vda", SuperOptions: "rw,discard"}},
		},
		{
			name: "optional fields",
			in:   "36 35 98:0 /mnt1 /mnt2 rw,noatime shared:1 master:2 - ext3 /dev/root rw,errors=continue",
			want: []Mount{{ID: 36, ParentID: 35, MajorMinor: "98:0", Root: "/mnt1", MountPoint: "/mnt2", MountOptions: "rw,noatime", FSType: "ext3", Source: "/dev/root", SuperOptions: "rw,errors=continue"}},
		},
		{
			name: "octal escapes",
			in:   `40 27 0:30 /a\134b /srv/my\040data\011x rw - tmpfs my\040src rw`,
			want: []Mount{{ID: 40, ParentID: 27, MajorMinor: "0:30", Root: `/a\b`, MountPoint: "/srv/my data\tx", MountOptions: "rw", FSType: "tmpfs", Source: "my src", SuperOptions: "rw"}},
		},
		{
			name: "backslash without octal digits is kept",
			in:   `40 27 0:30 / /x\9 rw - tmpfs \04 rw`,
			want: []Mount{{ID: 40, ParentID: 27, MajorMinor: "0:30", Root: "/", MountPoint: `/x\9`, MountOptions: "rw", FSType: "tmpfs", Source: `\04`, SuperOptions: "rw"}},
		},
		{
			name: "empty source",
			in:   "41 27 0:31 / /y rw - tmpfs  rw,size=4k",
			want: []Mount{{ID: 41, ParentID: 27, MajorMinor: "0:31", Root: "/", MountPoint: "/y", MountOptions: "rw", FSType: "tmpfs", Source: "", SuperOptions: "rw,size=4k"}},
		},
		{
			name: "blank lines skipped",
			in:   "\n22 27 0:21 / /proc rw - proc proc rw\n\n",
			want: []Mount{{ID: 22, ParentID: 27, MajorMinor: "0:21", Root: "/", MountPoint: "/proc", MountOptions: "rw", FSType: "proc", Source: "proc", SuperOptions: "rw"}},
		},
		{name: "empty input", in: "", want: nil},
		{name: "no separator", in: "22 27 0:21 / /proc rw - proc proc rw\n23 27 0:22 / /sys rw sysfs sysfs rw\n", wantErr: "line 2"},
		{name: "separator too early", in: "22 27 0:21 / - proc proc rw", wantErr: "line 1"},
		{name: "bad id", in: "x 27 0:21 / /proc rw - proc proc rw", wantErr: "mount ID"},
		{name: "bad parent", in: "1 y 0:21 / /proc rw - proc proc rw", wantErr: "parent ID"},
		{name: "bad device", in: "1 2 021 / /proc rw - proc proc rw", wantErr: "major:minor"},
		{name: "missing super options", in: "1 2 0:21 / /proc rw - proc proc", wantErr: "want 3"},
		{name: "extra field after separator", in: "1 2 0:21 / /proc rw - proc proc rw extra", wantErr: "want 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMountInfo([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrMalformedMountInfo) {
					t.Fatalf("err = %v, want ErrMalformedMountInfo mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseMountInfoSamples(t *testing.T) {
	tests := []struct {
		file      string
		path      string
		wantCount int
		want      Mount
	}{
		{
			file:      "mountinfo-vm.txt",
			path:      "/var/lib/etcd",
			wantCount: 20,
			want:      Mount{ID: 27, ParentID: 1, MajorMinor: "254:0", Root: "/", MountPoint: "/", MountOptions: "rw,relatime", FSType: "ext4", Source: "/dev/vda", SuperOptions: "rw,discard,resv_strict,resuid=65534,resgid=65534"},
		},
		{
			file:      "mountinfo-container.txt",
			path:      "/var/lib/etcd data/member/wal",
			wantCount: 14,
			want:      Mount{ID: 620, ParentID: 612, MajorMinor: "259:2", Root: "/var/lib/docker/volumes/etcd data/_data", MountPoint: "/var/lib/etcd data", MountOptions: "rw,relatime", FSType: "ext4", Source: "/dev/nvme0n1p2", SuperOptions: "rw,errors=remount-ro"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			mounts, err := ParseMountInfo(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(mounts) != tt.wantCount {
				t.Errorf("got %d mounts, want %d", len(mounts), tt.wantCount)
			}
			got, ok := MountFor(mounts, tt.path)
			if !ok || got != tt.want {
				t.Errorf("MountFor(%q) = %+v, %v\nwant %+v", tt.path, got, ok, tt.want)
			}
		})
	}
}

func TestMountFor(t *testing.T) {
	mounts := []Mount{
		{ID: 1, MountPoint: "/"},
		{ID: 2, MountPoint: "/var"},
		{ID: 3, MountPoint: "/var/li"},
		{ID: 4, MountPoint: "/var/lib/etcd"},
		{ID: 5, MountPoint: "/mnt"},
		{ID: 6, MountPoint: "/mnt"},
		{ID: 7, MountPoint: "/mnt/a"},
	}
	tests := []struct {
		name   string
		mounts []Mount
		path   string
		wantID int // 0 means no mount
	}{
		{name: "root", mounts: mounts, path: "/etc", wantID: 1},
		{name: "root itself", mounts: mounts, path: "/", wantID: 1},
		{name: "nested", mounts: mounts, path: "/var/lib/etcd/member", wantID: 4},
		{name: "exact mount point", mounts: mounts, path: "/var/lib/etcd", wantID: 4},
		{name: "prefix trap", mounts: mounts, path: "/var/lib", wantID: 2},
		{name: "prefix trap inside", mounts: mounts, path: "/var/lib/x", wantID: 2},
		{name: "component match", mounts: mounts, path: "/var/li/x", wantID: 3},
		{name: "stacked last wins", mounts: mounts, path: "/mnt/b", wantID: 6},
		{name: "deeper beats stacked", mounts: mounts, path: "/mnt/a/b", wantID: 7},
		{name: "unclean path", mounts: mounts, path: "/var/lib/etcd/../etcd//x/", wantID: 4},
		{name: "relative path matches nothing", mounts: mounts, path: "var/lib", wantID: 0},
		{name: "no mounts", mounts: nil, path: "/", wantID: 0},
		{name: "no root mount", mounts: []Mount{{ID: 9, MountPoint: "/data"}}, path: "/etc", wantID: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := MountFor(tt.mounts, tt.path)
			if ok != (tt.wantID != 0) || got.ID != tt.wantID {
				t.Errorf("MountFor(%q) = ID %d, %v; want ID %d", tt.path, got.ID, ok, tt.wantID)
			}
		})
	}
}

func TestIsMemoryFS(t *testing.T) {
	tests := []struct {
		fsType string
		want   bool
	}{
		{"tmpfs", true},
		{"ramfs", true},
		{"devtmpfs", true},
		{"rootfs", true},
		{"hugetlbfs", true},
		{"ext4", false},
		{"xfs", false},
		{"overlay", false},
		{"nfs4", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.fsType, func(t *testing.T) {
			if got := IsMemoryFS(tt.fsType); got != tt.want {
				t.Errorf("IsMemoryFS(%q) = %v, want %v", tt.fsType, got, tt.want)
			}
		})
	}
}

func FuzzParseMountInfo(f *testing.F) {
	for _, name := range []string{"mountinfo-vm.txt", "mountinfo-container.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`40 27 0:30 /a\134b /srv/my\040data rw shared:1 - tmpfs  rw`))
	f.Fuzz(func(t *testing.T, data []byte) {
		mounts, err := ParseMountInfo(data)
		if err != nil {
			if !errors.Is(err, ErrMalformedMountInfo) {
				t.Fatalf("error does not wrap ErrMalformedMountInfo: %v", err)
			}
			return
		}
		for _, m := range mounts {
			if m.MountPoint == "" || m.FSType == "" {
				t.Fatalf("accepted mount with empty mount point or type: %+v", m)
			}
			if _, _, ok := splitMajorMinor(m.MajorMinor); !ok {
				t.Fatalf("accepted bad device %q", m.MajorMinor)
			}
			MountFor(mounts, m.MountPoint)
		}
	})
}
