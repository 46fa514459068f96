package sysinfo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fakeRoot builds a directory tree standing in for "/": files maps paths
// below the root to contents, links maps paths to (relative) symlink targets.
func fakeRoot(t *testing.T, files, links map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, target := range links {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// merge returns the union of maps; later maps win.
func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

var procFiles = map[string]string{
	"proc/sys/kernel/osrelease": "6.1.0-18-amd64\n",
	"proc/sys/kernel/hostname":  "etcd-1\n",
	"proc/cpuinfo":              "processor\t: 0\nmodel name\t: AMD EPYC 7B13\n",
	"proc/meminfo":              "MemTotal:        8000000 kB\nMemFree: 1 kB\n",
}

const (
	vdaDir    = "sys/devices/pci0000:00/0000:00:04.0/virtio2/block/vda"
	vdaQueue  = vdaDir + "/queue/"
	dmDir     = "sys/devices/virtual/block/dm-0"
	mountRoot = "22 1 0:21 / /proc rw - proc proc rw\n"
)

func TestCollect(t *testing.T) {
	vdaFiles := map[string]string{
		vdaQueue + "rotational":                              "1\n",
		vdaQueue + "scheduler":                               "none [mq-deadline] kyber bfq\n",
		vdaQueue + "write_cache":                             "write back\n",
		vdaDir + "/vda1/partition":                           "1\n",
		vdaDir + "/vda2/partition":                           "2\n",
		"sys/devices/pci0000:00/0000:00:04.0/virtio2/vendor": "0x1af4\n",
	}
	vdaLinks := map[string]string{
		"sys/dev/block/253:1": "../../devices/pci0000:00/0000:00:04.0/virtio2/block/vda/vda1",
		vdaDir + "/device":    "../../../virtio2",
		"sys/devices/pci0000:00/0000:00:04.0/virtio2/driver": "../../../../bus/virtio/drivers/virtio_blk",
	}
	yes := true
	tests := []struct {
		name      string
		files     map[string]string
		links     map[string]string
		dir       string
		wantFS    Filesystem
		wantDev   *Device
		wantNotes []string // substrings, in order; nil means no notes at all
		wantChain string   // Stack.Chain; "" means no Stack
	}{
		{
			name: "ext4 on a partition of a paravirtual disk",
			files: merge(procFiles, vdaFiles, map[string]string{
				"proc/self/mountinfo": mountRoot + "27 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,errors=remount-ro\n" +
					"30 27 0:25 / /var/lib/etcd/tmp rw - tmpfs tmpfs rw\n",
			}),
			links:   vdaLinks,
			dir:     "/var/lib/etcd/",
			wantFS:  Filesystem{Type: "ext4", Source: "/dev/vda1", MountPoint: "/", MountOptions: "rw,relatime", SuperOptions: "rw,errors=remount-ro", MajorMinor: "253:1"},
			wantDev: &Device{Name: "vda", Partition: "vda1", Rotational: &yes, Scheduler: "mq-deadline", WriteCache: "write back", Virtual: true, Driver: "virtio_blk"},
		},
		{
			name: "device mapper with slaves",
			files: merge(procFiles, vdaFiles, map[string]string{
				"proc/self/mountinfo":        mountRoot + "27 1 253:1 / / rw - ext4 /dev/vda1 rw\n28 27 254:0 / /var/lib/etcd rw,noatime - xfs /dev/mapper/vg-etcd rw,attr2\n",
				dmDir + "/queue/rotational":  "0\n",
				dmDir + "/queue/scheduler":   "none\n",
				dmDir + "/queue/write_cache": "write through\n",
				dmDir + "/dm/name":           "vg-etcd\n",
			}),
			links: merge(vdaLinks, map[string]string{
				"sys/dev/block/254:0":  "../../devices/virtual/block/dm-0",
				dmDir + "/slaves/vda2": "../../../../pci0000:00/0000:00:04.0/virtio2/block/vda/vda2",
				dmDir + "/slaves/vda1": "../../../../pci0000:00/0000:00:04.0/virtio2/block/vda/vda1",
			}),
			dir:       "/var/lib/etcd/member",
			wantFS:    Filesystem{Type: "xfs", Source: "/dev/mapper/vg-etcd", MountPoint: "/var/lib/etcd", MountOptions: "rw,noatime", SuperOptions: "rw,attr2", MajorMinor: "254:0"},
			wantDev:   &Device{Name: "dm-0", Rotational: new(bool), Scheduler: "none", WriteCache: "write through", Slaves: []string{"vda1", "vda2"}},
			wantChain: "dm-0 (device-mapper vg-etcd) -> [vda1 on vda, vda2 on vda]",
		},
		{
			name: "tmpfs has no device and needs no note",
			files: merge(procFiles, map[string]string{
				"proc/self/mountinfo": mountRoot + "27 1 253:1 / / rw - ext4 /dev/vda1 rw\n31 27 0:25 / /tmp rw,nosuid - tmpfs tmpfs rw,size=100k\n",
			}),
			dir:    "/tmp/x",
			wantFS: Filesystem{Type: "tmpfs", Source: "tmpfs", MountPoint: "/tmp", MountOptions: "rw,nosuid", SuperOptions: "rw,size=100k", MajorMinor: "0:25"},
		},
		{
			name: "overlay in a container",
			files: merge(procFiles, map[string]string{
				"proc/self/mountinfo": "612 540 0:52 / / rw,relatime - overlay overlay rw,lowerdir=/l\n",
			}),
			dir:       "/data",
			wantFS:    Filesystem{Type: "overlay", Source: "overlay", MountPoint: "/", MountOptions: "rw,relatime", SuperOptions: "rw,lowerdir=/l", MajorMinor: "0:52"},
			wantNotes: []string{"no block device: overlay filesystem (container); device facts unavailable"},
		},
		{
			name: "nfs is noted",
			files: merge(procFiles, map[string]string{
				"proc/self/mountinfo": "40 1 0:60 / / rw - nfs4 srv:/export rw,vers=4.2\n",
			}),
			dir:       "/data",
			wantFS:    Filesystem{Type: "nfs4", Source: "srv:/export", MountPoint: "/", MountOptions: "rw", SuperOptions: "rw,vers=4.2", MajorMinor: "0:60"},
			wantNotes: []string{"no block device: nfs4 filesystem (source srv:/export, device 0:60)"},
		},
		{
			name: "btrfs anonymous device found through its source",
			files: merge(procFiles, vdaFiles, map[string]string{
				"proc/self/mountinfo": "40 1 0:45 /@ / rw - btrfs /dev/vda1 rw,ssd,subvol=/@\n",
			}),
			links: merge(vdaLinks, map[string]string{
				"sys/class/block/vda1": "../../devices/pci0000:00/0000:00:04.0/virtio2/block/vda/vda1",
			}),
			dir:     "/var/lib/etcd",
			wantFS:  Filesystem{Type: "btrfs", Source: "/dev/vda1", MountPoint: "/", MountOptions: "rw", SuperOptions: "rw,ssd,subvol=/@", MajorMinor: "0:45"},
			wantDev: &Device{Name: "vda", Partition: "vda1", Rotational: &yes, Scheduler: "mq-deadline", WriteCache: "write back", Virtual: true, Driver: "virtio_blk"},
		},
		{
			name: "loop device notes its backing file",
			files: merge(procFiles, vdaFiles, map[string]string{
				"proc/self/mountinfo":                               "40 1 7:0 / / rw - ext4 /dev/loop0 rw\n41 40 253:1 / /var/tmp rw - ext4 /dev/vda1 rw\n",
				"sys/devices/virtual/block/loop0/queue/rotational":  "0\n",
				"sys/devices/virtual/block/loop0/queue/scheduler":   "[none] mq-deadline\n",
				"sys/devices/virtual/block/loop0/queue/write_cache": "write back\n",
				"sys/devices/virtual/block/loop0/loop/backing_file": "/var/tmp/disk.img\n",
			}),
			links:     merge(vdaLinks, map[string]string{"sys/dev/block/7:0": "../../devices/virtual/block/loop0"}),
			dir:       "/",
			wantFS:    Filesystem{Type: "ext4", Source: "/dev/loop0", MountPoint: "/", MountOptions: "rw", SuperOptions: "rw", MajorMinor: "7:0"},
			wantDev:   &Device{Name: "loop0", Rotational: new(bool), Scheduler: "none", WriteCache: "write back"},
			wantNotes: []string{"loop device loop0 is backed by file /var/tmp/disk.img"},
			wantChain: "loop0 -> file /var/tmp/disk.img on ext4 (/dev/vda1) -> vda1 on vda",
		},
		{
			name: "missing queue files are explained",
			files: merge(procFiles, map[string]string{
				"proc/self/mountinfo": "27 1 8:0 / / rw - ext4 /dev/sda rw\n",
				"sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/device/model": "Samsung SSD 870 \n",
			}),
			links: map[string]string{
				"sys/dev/block/8:0": "../../devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda",
			},
			dir:     "/var/lib/etcd",
			wantFS:  Filesystem{Type: "ext4", Source: "/dev/sda", MountPoint: "/", MountOptions: "rw", SuperOptions: "rw", MajorMinor: "8:0"},
			wantDev: &Device{Name: "sda", Model: "Samsung SSD 870"},
			wantNotes: []string{
				"rotational flag unknown: open ", "I/O scheduler unknown: open ", "write cache mode unknown: open ",
			},
		},
		{
			name: "dangling sysfs node",
			files: merge(procFiles, map[string]string{
				"proc/self/mountinfo": "27 1 8:0 / / rw - ext4 /dev/sda rw\n",
			}),
			dir:       "/",
			wantFS:    Filesystem{Type: "ext4", Source: "/dev/sda", MountPoint: "/", MountOptions: "rw", SuperOptions: "rw", MajorMinor: "8:0"},
			wantNotes: []string{"block device unknown: lstat "},
		},
		{
			name:  "empty root explains everything",
			files: map[string]string{},
			dir:   "/",
			wantNotes: []string{
				"filesystem unknown: open ", "kernel release unknown: open ", "CPU model unknown: open ",
				"total memory unknown: open ", "hostname unknown: open ",
			},
		},
		{
			name: "malformed mountinfo and meminfo",
			files: merge(procFiles, map[string]string{
				"proc/self/mountinfo": "garbage\n",
				"proc/meminfo":        "MemFree: 1 kB\n",
				"proc/cpuinfo":        "processor\t: 0\n",
			}),
			dir: "/",
			wantNotes: []string{
				"filesystem unknown: ", "CPU model unknown: no \"model name\" line in ", "total memory unknown: ",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fakeRoot(t, tt.files, tt.links)
			got := Collect(root, tt.dir)
			if got.Filesystem != tt.wantFS {
				t.Errorf("Filesystem = %+v\nwant %+v", got.Filesystem, tt.wantFS)
			}
			if !reflect.DeepEqual(got.Device, tt.wantDev) {
				t.Errorf("Device = %s\nwant %s", toJSON(t, got.Device), toJSON(t, tt.wantDev))
			}
			switch {
			case tt.wantChain == "" && got.Stack != nil:
				t.Errorf("Stack = %s, want none", toJSON(t, got.Stack))
			case tt.wantChain != "" && (got.Stack == nil || got.Stack.Chain != tt.wantChain):
				t.Errorf("Stack = %s, want chain %q", toJSON(t, got.Stack), tt.wantChain)
			}
			if got.Dir != filepath.Clean(tt.dir) {
				t.Errorf("Dir = %q, want %q", got.Dir, filepath.Clean(tt.dir))
			}
			if len(got.Notes) != len(tt.wantNotes) {
				t.Fatalf("Notes = %q\nwant %d notes like %q", got.Notes, len(tt.wantNotes), tt.wantNotes)
			}
			for i, want := range tt.wantNotes {
				if !strings.Contains(got.Notes[i], want) {
					t.Errorf("Notes[%d] = %q, want it to contain %q", i, got.Notes[i], want)
				}
			}
			if sameProc(tt.files) {
				want := Facts{Kernel: "6.1.0-18-amd64", Hostname: "etcd-1", CPUModel: "AMD EPYC 7B13", MemTotalBytes: 8000000 * 1024}
				if got.Kernel != want.Kernel || got.Hostname != want.Hostname || got.CPUModel != want.CPUModel || got.MemTotalBytes != want.MemTotalBytes {
					t.Errorf("machine facts = %q %q %q %d, want %q %q %q %d", got.Kernel, got.Hostname, got.CPUModel, got.MemTotalBytes,
						want.Kernel, want.Hostname, want.CPUModel, want.MemTotalBytes)
				}
			}
			if got.CPUs < 1 {
				t.Errorf("CPUs = %d", got.CPUs)
			}
		})
	}
}

// sameProc reports whether a fixture carries procFiles unchanged.
func sameProc(files map[string]string) bool {
	for k, v := range procFiles {
		if files[k] != v {
			return false
		}
	}
	return true
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCollectRealMachine runs against the real /proc and /sys: a temporary
// directory always sits on some filesystem, and every Linux kernel has a
// release string.
func TestCollectRealMachine(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	f := Collect("/", link)
	t.Logf("facts: %s", toJSON(t, f))
	want, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.Dir != want {
		t.Errorf("Dir = %q, want symlink resolved to %q", f.Dir, want)
	}
	if f.Filesystem.Type == "" {
		t.Errorf("Filesystem.Type is empty; notes: %q", f.Notes)
	}
	if f.Kernel == "" {
		t.Errorf("Kernel is empty; notes: %q", f.Notes)
	}
	if f.Hostname == "" {
		t.Errorf("Hostname is empty; notes: %q", f.Notes)
	}
}
