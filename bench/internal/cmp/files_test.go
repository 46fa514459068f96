package cmp

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestLayout(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	const size = 2*mib + 100
	if err := Layout(p, size); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != size || bytes.Count(b[:mib], []byte{0}) > mib/2 {
		t.Errorf("file of %d bytes, want %d random ones", len(b), size)
	}
	if err := Layout(p, 1); err == nil {
		t.Error("Layout overwrote an existing file")
	}
}

func TestWarmAndTempSub(t *testing.T) {
	dir := t.TempDir()
	if err := WarmPageCache(dir, mib); err != nil {
		t.Fatal(err)
	}
	sub, done, err := TempSub(dir, "fio-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	done(&err)
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
