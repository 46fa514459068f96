package uring

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestRawSyscalls runs reads through a ring that calls io_uring_enter as a
// raw system call, as etcdbench's mixed workload does.
func TestRawSyscalls(t *testing.T) {
	if err := Probe(); err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	path := filepath.Join(t.TempDir(), "f")
	want := make([]byte, 8192)
	for i := range want {
		want[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := New(4)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.UseRawSyscalls()
	bufs, unmap, err := AlignedBuffers(2, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	for i := range 2 {
		if !r.PrepRead(int(f.Fd()), bufs[i], int64(i)*4096, uint64(i)) {
			t.Fatal("SQ full")
		}
	}
	if _, err := r.Submit(2); err != nil {
		t.Fatal(err)
	}
	cqes := make([]CQE, 2)
	got := 0
	for got < 2 {
		if err := r.WaitCQE(); err != nil {
			t.Fatal(err)
		}
		n := r.Reap(cqes)
		for _, c := range cqes[:n] {
			if c.Res != 4096 {
				t.Fatalf("completion %+v", c)
			}
			got++
		}
	}
	for i := range 2 {
		if string(bufs[i]) != string(want[i*4096:(i+1)*4096]) {
			t.Fatalf("block %d differs", i)
		}
	}
}
