package etcdload

import (
	"runtime/debug"
	"testing"
)

func TestRaiseGCRestores(t *testing.T) {
	t.Setenv("GOGC", "") // empty counts as unset
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	restore := raiseGC()
	if got := debug.SetGCPercent(loadGCPercent); got != loadGCPercent {
		t.Errorf("during the load GC percent = %d, want %d", got, loadGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after the load GC percent = %d, want 100 again", got)
	}
}

func TestRaiseGCKeepsUserGOGC(t *testing.T) {
	t.Setenv("GOGC", "50")
	old := debug.SetGCPercent(50)
	defer debug.SetGCPercent(old)
	restore := raiseGC()
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("with GOGC=50 set, GC percent = %d during the load, want 50", got)
	}
	restore()
}

func TestRaiseGCKeepsHigherOrOff(t *testing.T) {
	t.Setenv("GOGC", "")
	old := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(old)
	restore := raiseGC()
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("GC off: GC percent = %d during the load, want -1 (off)", got)
	}
	restore()
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("GC off: GC percent = %d after the load, want -1 (off)", got)
	}
}
