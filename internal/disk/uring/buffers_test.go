package uring

import (
	"testing"
	"unsafe"
)

func TestAlignedBuffers(t *testing.T) {
	tests := []struct {
		name    string
		n, size int
		wantErr bool
	}{
		{"one page", 1, 4096, false},
		{"depth 8 of 4K", 8, 4096, false},
		{"large blocks", 3, 64 << 10, false},
		{"zero buffers", 0, 4096, true},
		{"negative size", 1, -4096, true},
		{"unaligned size", 2, 512, true},
		{"overflow", 1 << 62, 4096, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bufs, unmap, err := AlignedBuffers(tt.n, tt.size)
			if tt.wantErr {
				if err == nil {
					_ = unmap()
					t.Fatalf("AlignedBuffers(%d, %d) succeeded, want an error", tt.n, tt.size)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(bufs) != tt.n {
				t.Fatalf("got %d buffers, want %d", len(bufs), tt.n)
			}
			for i, b := range bufs {
				if len(b) != tt.size || cap(b) != tt.size {
					t.Errorf("buffer %d: len %d cap %d, want both %d", i, len(b), cap(b), tt.size)
				}
				if addr := uintptr(unsafe.Pointer(&b[0])); addr%directAlign != 0 {
					t.Errorf("buffer %d at %#x is not %d-aligned", i, addr, directAlign)
				}
				b[0], b[len(b)-1] = 1, 2 // writable end to end
			}
			for i := range 2 {
				if err := unmap(); err != nil {
					t.Fatalf("unmap #%d: %v", i+1, err)
				}
			}
		})
	}
}
