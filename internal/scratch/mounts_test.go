package scratch

import (
	"slices"
	"testing"

	"etcdbench/internal/sysinfo"
)

func TestMountsBelow(t *testing.T) {
	ms := []sysinfo.Mount{{MountPoint: "/"}, {MountPoint: "/d/.etcdbench-x/etcd-slow/member0"}, {MountPoint: "/d/.etcdbench-x"},
		{MountPoint: "/d/.etcdbench-xy"}, {MountPoint: "/d/.etcdbench-x/a/b/c"}}
	got := mountsBelow(ms, "/d/.etcdbench-x")
	want := []string{"/d/.etcdbench-x/etcd-slow/member0", "/d/.etcdbench-x/a/b/c", "/d/.etcdbench-x"}
	if !slices.Equal(got, want) {
		t.Errorf("mountsBelow: %q, want %q (deepest first, not the sibling)", got, want)
	}
}
