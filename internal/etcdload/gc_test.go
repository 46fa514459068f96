package etcdload

import (
	"runtime"
	"runtime/debug"
	"testing"

	"etcdbench/internal/inproc"
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

func TestNarrowProcs(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	// The package's shared embedded etcd may be running: counted
	// separately here, as if no member were in this process.
	defer inproc.EtcdMembers.Add(inproc.EtcdMembers.Swap(0))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	l := DefaultLoad(OpPut)
	procs, restore := narrowProcs(l)
	if procs != 1 || runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("one client: narrowProcs %d, GOMAXPROCS %d; want 1, 1", procs, runtime.GOMAXPROCS(0))
	}
	restore()
	if got := runtime.GOMAXPROCS(0); got != 4 {
		t.Errorf("GOMAXPROCS %d after restore, want 4", got)
	}

	w := DefaultLoad(OpWatch)
	w.Clients, w.Streams = 1, 2
	procs, restore = narrowProcs(w)
	if procs != 3 {
		t.Errorf("watch load, 1 client and 2 streams: %d Ps, want 3", procs)
	}
	restore()

	l.Clients = 8
	if procs, restore = narrowProcs(l); procs != 0 || runtime.GOMAXPROCS(0) != 4 {
		t.Errorf("8 clients on 4 Ps: narrowProcs %d, GOMAXPROCS %d; want unchanged", procs, runtime.GOMAXPROCS(0))
	}
	restore()

	inproc.EtcdMembers.Add(1)
	l.Clients = 1
	procs, restore = narrowProcs(l)
	inproc.EtcdMembers.Add(-1)
	restore()
	if procs != 0 {
		t.Errorf("with a member in this process: %d Ps, want GOMAXPROCS left alone", procs)
	}

	t.Setenv("GOMAXPROCS", "4")
	if procs, restore = narrowProcs(l); procs != 0 {
		t.Errorf("GOMAXPROCS set by the user: %d Ps, want it left alone", procs)
	}
	restore()
}
