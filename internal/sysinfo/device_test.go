package sysinfo

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseScheduler(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "mq-deadline active", in: "none [mq-deadline] kyber bfq \n", want: "mq-deadline"},
		{name: "none active", in: "[none] mq-deadline kyber bfq\n", want: "none"},
		{name: "bfq last", in: "mq-deadline kyber [bfq] none\n", want: "bfq"},
		{name: "only none", in: "none\n", want: "none"},
		{name: "legacy cfq", in: "noop deadline [cfq]\n", want: "cfq"},
		{name: "empty", in: "", want: ""},
		{name: "several without brackets", in: "none kyber\n", want: ""},
		{name: "unclosed bracket", in: "none [kyber", want: ""},
		{name: "empty brackets", in: "[] none", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseScheduler([]byte(tt.in)); got != tt.want {
				t.Errorf("ParseScheduler(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestIsVirtual(t *testing.T) {
	tests := []struct {
		name    string
		dev     Device
		sysPath string
		want    bool
	}{
		{name: "virtio by path", dev: Device{Name: "vda"}, sysPath: "/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda", want: true},
		{name: "virtio by driver", dev: Device{Name: "sda", Driver: "virtio_scsi"}, sysPath: "/sys/devices/x/block/sda", want: true},
		{name: "xen name", dev: Device{Name: "xvda"}, sysPath: "/sys/devices/vbd-51712/block/xvda", want: true},
		{name: "hyper-v", dev: Device{Name: "sda", Driver: "sd"}, sysPath: "/sys/devices/LNXSYSTM:00/VMBUS:00/f8b3781a/host0/target0:0:0/0:0:0:0/block/sda", want: true},
		{name: "vmware pvscsi", dev: Device{Name: "sda", Driver: "vmw_pvscsi"}, sysPath: "/sys/devices/pci/block/sda", want: true},
		{name: "aws ebs nvme", dev: Device{Name: "nvme0n1", Driver: "nvme", Model: "Amazon Elastic Block Store"}, sysPath: "/sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1", want: true},
		{name: "qemu scsi", dev: Device{Name: "sda", Driver: "sd", Model: "QEMU HARDDISK"}, sysPath: "/sys/devices/pci/block/sda", want: true},
		{name: "bare metal nvme", dev: Device{Name: "nvme0n1", Driver: "nvme", Model: "Samsung SSD 980 PRO 1TB"}, sysPath: "/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/nvme/nvme0/nvme0n1", want: false},
		{name: "dm is software", dev: Device{Name: "dm-0"}, sysPath: "/sys/devices/virtual/block/dm-0", want: false},
		{name: "loop is software", dev: Device{Name: "loop0"}, sysPath: "/sys/devices/virtual/block/loop0", want: false},
		{name: "md is software", dev: Device{Name: "md127"}, sysPath: "/sys/devices/virtual/block/md127", want: false},
		{name: "zram is software", dev: Device{Name: "zram0"}, sysPath: "/sys/devices/virtual/block/zram0", want: false},
		{name: "nbd is software", dev: Device{Name: "nbd0"}, sysPath: "/sys/devices/virtual/block/nbd0", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isVirtual(&tt.dev, tt.sysPath); got != tt.want {
				t.Errorf("isVirtual(%+v, %q) = %v, want %v", tt.dev, tt.sysPath, got, tt.want)
			}
		})
	}
}

func FuzzParseScheduler(f *testing.F) {
	for _, s := range []string{"none [mq-deadline] kyber bfq \n", "none\n", "[none] mq-deadline", "noop deadline [cfq]", "[", "]", "[]", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := ParseScheduler(data)
		if len(got) > len(data) {
			t.Fatalf("ParseScheduler(%q) = %q, longer than its input", data, got)
		}
	})
}

// TestBlockDevice: the device number of this package's own directory
// leads to a disk that /proc/diskstats counts, and an anonymous device
// number to no device, with the reason.
func TestBlockDevice(t *testing.T) {
	t.Run("anonymous", func(t *testing.T) {
		d, n := BlockDevice("/", unix.Mkdev(0, 42))
		if d != nil || len(n) != 1 || !strings.Contains(n[0], "anonymous") {
			t.Errorf("BlockDevice(0:42) = %+v, %q; want nil and the reason", d, n)
		}
	})
	t.Run("this directory", func(t *testing.T) {
		var st unix.Stat_t
		if err := unix.Stat(".", &st); err != nil {
			t.Fatal(err)
		}
		if unix.Major(st.Dev) == 0 {
			t.Skipf("this directory is on an anonymous device (%d:%d): no block device to find", unix.Major(st.Dev), unix.Minor(st.Dev))
		}
		d, n := BlockDevice("/", st.Dev)
		if d == nil {
			t.Fatalf("no device for %d:%d: %q", unix.Major(st.Dev), unix.Minor(st.Dev), n)
		}
		if _, err := ReadDiskstats("/", d.Name); err != nil {
			t.Errorf("device %q (of %d:%d): %v", d.Name, unix.Major(st.Dev), unix.Minor(st.Dev), err)
		}
	})
}

// TestBlockDeviceMaskedSysfs: inside a container /sys/dev/block is masked
// (podman) or not the host's; the device is then found by its number in
// /proc/diskstats, with its facts from /sys/class/block when that is
// there, and by name alone when it is not.
func TestBlockDeviceMaskedSysfs(t *testing.T) {
	const diskstats = " 254       0 vda 1 0 8 1 2 0 16 2 0 3 3 0 0 0 0 4 1\n 254       1 vda1 1 0 8 1 2 0 16 2 0 3 3\n   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0\n"
	files := map[string]string{
		"proc/diskstats":           diskstats,
		vdaQueue + "rotational":    "1\n",
		vdaQueue + "scheduler":     "[none] mq-deadline\n",
		vdaQueue + "write_cache":   "write back\n",
		vdaDir + "/vda1/partition": "1\n",
	}
	classLinks := map[string]string{
		"sys/class/block/vda":  "../../devices/pci0000:00/0000:00:04.0/virtio2/block/vda",
		"sys/class/block/vda1": "../../devices/pci0000:00/0000:00:04.0/virtio2/block/vda/vda1",
	}
	tests := []struct {
		name         string
		files, links map[string]string
		dev          uint64
		want         string // Device.Name; "" for none
		partition    string
		note         string // a substring of the first note; "" for none
	}{
		{"whole disk, facts from /sys/class/block", files, classLinks, unix.Mkdev(254, 0), "vda", "", ""},
		{"partition, facts from /sys/class/block", files, classLinks, unix.Mkdev(254, 1), "vda", "vda1", ""},
		{"no sysfs at all: the name alone", map[string]string{"proc/diskstats": diskstats}, nil, unix.Mkdev(254, 0), "vda", "", "found by its number 254:0 in /proc/diskstats"},
		{"not in diskstats", files, classLinks, unix.Mkdev(259, 3), "", "", "/proc/diskstats has no device 259:3"},
		{"no diskstats", nil, nil, unix.Mkdev(254, 0), "", "", "block device unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fakeRoot(t, tt.files, tt.links)
			d, n := BlockDevice(root, tt.dev)
			got := ""
			if d != nil {
				got = d.Name
			}
			if got != tt.want || (d != nil && d.Partition != tt.partition) {
				t.Errorf("BlockDevice(%d:%d) = %+v, want %q partition %q (notes %q)", unix.Major(tt.dev), unix.Minor(tt.dev), d, tt.want, tt.partition, n)
			}
			if tt.note == "" && len(n) > 0 || tt.note != "" && (len(n) == 0 || !strings.Contains(n[0], tt.note)) {
				t.Errorf("notes %q, want one with %q", n, tt.note)
			}
			if tt.want == "vda" && tt.links != nil && (d.Scheduler != "none" || !d.Virtual) {
				t.Errorf("facts not read through /sys/class/block: %+v", d)
			}
		})
	}
}

func TestDiskByNumber(t *testing.T) {
	all, err := ParseDiskstats([]byte(diskstatsSample))
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := DiskByNumber(all, 254, 1); !ok || d.Name != "vda1" {
		t.Errorf("254:1 = %+v, %v; want vda1", d, ok)
	}
	if d, ok := DiskByNumber(all, 8, 0); !ok || d.Name != "sda" || d.Major != 8 || d.Minor != 0 {
		t.Errorf("8:0 = %+v, %v; want sda", d, ok)
	}
	if _, ok := DiskByNumber(all, 8, 1); ok {
		t.Error("8:1 found")
	}
}

// TestCollectMaskedSysfs: the environment of a directory in a container
// whose /sys/dev/block is masked names the device /proc/diskstats gives
// its filesystem's number.
func TestCollectMaskedSysfs(t *testing.T) {
	root := fakeRoot(t, merge(procFiles, map[string]string{
		"proc/self/mountinfo":         mountRoot + "27 1 254:1 /var/lib/etcd-etcdbench /scratch rw,relatime - ext4 /dev/vda1 rw\n",
		"proc/diskstats":              " 254       0 vda 1 0 8 1 2 0 16 2 0 3 3 0 0 0 0 4 1\n 254       1 vda1 1 0 8 1 2 0 16 2 0 3 3\n",
		vdaDir + "/vda1/partition":    "1\n",
		vdaDir + "/queue/rotational":  "0\n",
		vdaDir + "/queue/scheduler":   "[none]\n",
		vdaDir + "/queue/write_cache": "write back\n",
	}), map[string]string{"sys/class/block/vda1": "../../devices/pci0000:00/0000:00:04.0/virtio2/block/vda/vda1"})
	f := Collect(root, "/scratch")
	if f.Device == nil || f.Device.Name != "vda" || f.Device.Partition != "vda1" {
		t.Errorf("device %+v, want vda (partition vda1); notes %q", f.Device, f.Notes)
	}
}
