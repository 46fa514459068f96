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
