package sysinfo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Settle on a fixture whose device is idle settles after the quiet
// time; one whose counter moves at every read does not within the bound;
// an unknown device is flushed and not waited on.
func TestSettle(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	idle := "   8       0 sda 1 0 2 3 100 0 800 4 0 5 6 0 0 0 0 0 0\n"
	if err := os.WriteFile(filepath.Join(root, "proc", "diskstats"), []byte(idle), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ok, err := Settle(context.Background(), root, t.TempDir(), "sda", 200*time.Millisecond, 5*time.Second)
	if err != nil || !ok || time.Since(start) < 200*time.Millisecond {
		t.Errorf("idle device: settled %v after %v, %v", ok, time.Since(start), err)
	}
	busy := "   8       0 sda 1 0 2 3 100 0 800 4 1 5 6 0 0 0 0 0 0\n" // one I/O in flight, always
	if err := os.WriteFile(filepath.Join(root, "proc", "diskstats"), []byte(busy), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := Settle(context.Background(), root, t.TempDir(), "sda", 100*time.Millisecond, 300*time.Millisecond); err != nil || ok {
		t.Errorf("busy device: settled %v, %v; want not within the bound", ok, err)
	}
	if ok, err := Settle(context.Background(), root, t.TempDir(), "", time.Second, time.Second); err != nil || !ok {
		t.Errorf("no device: %v, %v", ok, err)
	}
}
