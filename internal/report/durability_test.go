package report

import (
	"bytes"
	"strings"
	"testing"

	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

// undurable is sample's run on an ext4 loop image mounted barrier=0, with
// a backend workload before it whose FAIL must not come first.
func undurable(t *testing.T) *result.Result {
	r := sample(t)
	r.Environment.Filesystem = sysinfo.Filesystem{Type: "ext4", Source: "/dev/loop0", MountPoint: "/mnt", MountOptions: "rw,relatime", SuperOptions: "rw,nobarrier", MajorMinor: "7:0"}
	r.Environment.Device = &sysinfo.Device{Name: "loop0", Scheduler: "none", WriteCache: "write back"}
	r.Environment.Stack = &sysinfo.Stack{Chain: "loop0 -> file /var/tmp/disk.img on ext4 (/dev/vda) -> vda",
		Bottom: []sysinfo.Device{{Name: "vda", Scheduler: "mq-deadline", WriteCache: "write back", Virtual: true, Driver: "virtio_blk"}}}
	wal := &r.Workloads[0]
	storage := verdict.JudgeStorage(verdict.StorageFigures{Layers: []verdict.StorageLayer{{Where: "the directory's filesystem", FSType: "ext4", Source: "/dev/loop0", SuperOptions: "rw,nobarrier"}}})
	wal.Verdicts = append(storage, wal.Verdicts...)
	backend := result.Workload{Name: "backend", Description: "bbolt commits", Verdicts: []verdict.Verdict{
		{Check: "backend_commit_p99", Title: "backend commit p99", Status: verdict.Fail, Value: 0.03, Unit: "s", Limit: 0.025, Comparison: "<", Detail: "slow", Source: "etcd FAQ"},
	}}
	r.Workloads = []result.Workload{backend, *wal}
	r.Finish(r.FinishedAt)
	return r
}

func TestDurabilityFailureComesFirst(t *testing.T) {
	r := undurable(t)
	var b bytes.Buffer
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if !strings.HasPrefix(text, "FAIL  wal: fdatasync flushes the disk cache (fast because writes are not made durable)") {
		t.Errorf("the text report does not open with the durability FAIL:\n%s", text[:min(len(text), 400)])
	}
	table := text[strings.Index(text, "\nverdicts\n"):]
	if i, j := strings.Index(table, "fdatasync flushes the disk cache"), strings.Index(table, "backend commit p99"); i < 0 || j < 0 || i > j {
		t.Errorf("the verdict table does not list the durability FAIL before the other FAIL:\n%s", table)
	}
	if !strings.Contains(text, "  storage     loop0 -> file /var/tmp/disk.img on ext4 (/dev/vda) -> vda; vda, driver virtio_blk, virtual disk, scheduler mq-deadline, write cache write back\n") {
		t.Errorf("the environment lacks the storage chain")
	}
	var h bytes.Buffer
	if err := HTML(&h, r); err != nil {
		t.Fatal(err)
	}
	page := h.String()
	if i, j := strings.Index(page, "fdatasync flushes the disk cache"), strings.Index(page, "backend commit p99"); i < 0 || j < 0 || i > j {
		t.Errorf("the HTML verdicts do not list the durability FAIL first")
	}
	if !strings.Contains(page, "storage chain") {
		t.Errorf("the HTML environment lacks the storage chain")
	}
	// Without the option nothing moves: sample's golden report is unchanged
	// (TestTextGolden), and no headline is printed.
	b.Reset()
	if err := Text(&b, sample(t)); err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(b.String(), "FAIL") {
		t.Errorf("a headline without a durability FAIL")
	}
}
