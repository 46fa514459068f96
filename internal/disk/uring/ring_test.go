package uring

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

func TestNopRoundTrip(t *testing.T) {
	requireUring(t)
	tests := []struct {
		name     string
		userData uint64
	}{
		{"zero", 0},
		{"small", 42},
		{"all bits", ^uint64(0)},
	}
	r := newRing(t, 4)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !r.PrepNop(tt.userData) {
				t.Fatal("PrepNop on an empty ring returned false")
			}
			n, err := r.Submit(1)
			if err != nil || n != 1 {
				t.Fatalf("Submit(1) = %d, %v; want 1, nil", n, err)
			}
			var c [2]CQE
			if got := r.Reap(c[:]); got != 1 {
				t.Fatalf("Reap = %d completions, want 1", got)
			}
			if c[0].UserData != tt.userData || c[0].Res != 0 {
				t.Fatalf("CQE = %+v, want UserData %#x Res 0", c[0], tt.userData)
			}
		})
	}
}

func TestWriteThenReadBack4K(t *testing.T) {
	requireUring(t)
	fd, direct := openDirect(t, filepath.Join(t.TempDir(), "block"))
	t.Logf("O_DIRECT: %v", direct)
	bufs, unmap, err := AlignedBuffers(2, 4096)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unmap() })
	wbuf, rbuf := bufs[0], bufs[1]
	blockPattern(wbuf, 3)
	r := newRing(t, 4)

	const off = 3 * 4096 // not at 0, to catch an ignored offset
	if !r.PrepWrite(fd, wbuf, off, 1) {
		t.Fatal("PrepWrite returned false")
	}
	if c := submitOne(t, r); c.UserData != 1 || c.Res != 4096 {
		t.Fatalf("write CQE = %+v, want UserData 1 Res 4096", c)
	}
	if !r.PrepRead(fd, rbuf, off, 2) {
		t.Fatal("PrepRead returned false")
	}
	if c := submitOne(t, r); c.UserData != 2 || c.Res != 4096 {
		t.Fatalf("read CQE = %+v, want UserData 2 Res 4096", c)
	}
	if !bytes.Equal(rbuf, wbuf) {
		t.Fatal("bytes read back differ from bytes written")
	}
}

// submitOne submits what is prepared, waits for one completion, returns it.
func submitOne(t *testing.T, r *Ring) CQE {
	t.Helper()
	if n, err := r.Submit(1); err != nil || n != 1 {
		t.Fatalf("Submit(1) = %d, %v; want 1, nil", n, err)
	}
	return reapN(t, r, 1)[0]
}

func TestRandomReadsAtDepth8(t *testing.T) {
	requireUring(t)
	const (
		depth  = 8
		blocks = 256 // 1 MiB
	)
	path := filepath.Join(t.TempDir(), "data")
	writeBlocks(t, path, blocks)
	fd, _ := openDirect(t, path)
	bufs, unmap, err := AlignedBuffers(depth, 4096)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unmap() })

	r := newRing(t, depth)
	rng := rand.New(rand.NewPCG(1, 2))
	want := rng.Perm(blocks)[:depth] // distinct blocks, in random order
	for slot, blk := range want {
		// userData carries the slot; the test, not the ring, knows which
		// block each slot asked for.
		if !r.PrepRead(fd, bufs[slot], int64(blk)*4096, uint64(slot)) {
			t.Fatalf("PrepRead of slot %d returned false with %d entries", slot, r.Entries())
		}
	}
	if n, err := r.Submit(depth); err != nil || n != depth {
		t.Fatalf("Submit(%d) = %d, %v", depth, n, err)
	}
	seen := make([]bool, depth)
	expect := make([]byte, 4096)
	for _, c := range reapN(t, r, depth) {
		if c.UserData >= depth || seen[c.UserData] {
			t.Fatalf("unexpected or repeated UserData %d", c.UserData)
		}
		seen[c.UserData] = true
		if c.Res != 4096 {
			t.Fatalf("slot %d: Res = %d, want 4096", c.UserData, c.Res)
		}
		blockPattern(expect, want[c.UserData])
		if !bytes.Equal(bufs[c.UserData], expect) {
			t.Fatalf("slot %d: contents are not block %d", c.UserData, want[c.UserData])
		}
	}
}

func TestPrepOnFullSQReturnsFalse(t *testing.T) {
	requireUring(t)
	buf := make([]byte, 512)
	tests := []struct {
		name string
		prep func(r *Ring) bool
	}{
		{"nop", func(r *Ring) bool { return r.PrepNop(7) }},
		{"read", func(r *Ring) bool { return r.PrepRead(-1, buf, 0, 7) }},
		{"write", func(r *Ring) bool { return r.PrepWrite(-1, buf, 0, 7) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRing(t, 4)
			entries := int(r.Entries())
			for i := range entries {
				if !tt.prep(r) {
					t.Fatalf("prep %d of %d returned false", i+1, entries)
				}
			}
			if tt.prep(r) {
				t.Fatalf("prep %d on a %d-entry SQ returned true", entries+1, entries)
			}
			if n, err := r.Submit(uint32(entries)); err != nil || n != entries {
				t.Fatalf("Submit = %d, %v; want %d, nil", n, err, entries)
			}
			if !tt.prep(r) {
				t.Fatal("prep after Submit emptied the SQ returned false")
			}
			reapN(t, r, entries)
		})
	}
}

func TestBadFDCompletesWithEBADF(t *testing.T) {
	requireUring(t)
	buf := make([]byte, 4096)
	tests := []struct {
		name string
		prep func(r *Ring) bool
	}{
		{"read", func(r *Ring) bool { return r.PrepRead(-1, buf, 0, 9) }},
		{"write", func(r *Ring) bool { return r.PrepWrite(-1, buf, 0, 9) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRing(t, 2)
			if !tt.prep(r) {
				t.Fatal("prep returned false")
			}
			if _, err := r.Submit(1); err != nil {
				t.Fatalf("Submit returned a Go error for a per-request failure: %v", err)
			}
			c := reapN(t, r, 1)[0]
			if c.UserData != 9 || c.Res != -int32(unix.EBADF) {
				t.Fatalf("CQE = %+v, want UserData 9 Res %d (-EBADF)", c, -int32(unix.EBADF))
			}
		})
	}
}

func TestCloseIsIdempotentAndDisablesRing(t *testing.T) {
	requireUring(t)
	r, err := New(2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := r.Close(); err != nil {
			t.Fatalf("Close #%d: %v", i+1, err)
		}
	}
	if r.PrepNop(1) || r.PrepRead(0, make([]byte, 1), 0, 1) {
		t.Error("Prep* on a closed ring returned true")
	}
	if _, err := r.Submit(0); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit on a closed ring: %v, want ErrClosed", err)
	}
	if err := r.WaitCQE(); !errors.Is(err, ErrClosed) {
		t.Errorf("WaitCQE on a closed ring: %v, want ErrClosed", err)
	}
	if n := r.Reap(make([]CQE, 1)); n != 0 {
		t.Errorf("Reap on a closed ring = %d, want 0", n)
	}
}

func TestHotPathDoesNotAllocate(t *testing.T) {
	requireUring(t)
	path := filepath.Join(t.TempDir(), "data")
	writeBlocks(t, path, 4)
	fd, _ := openDirect(t, path)
	bufs, unmap, err := AlignedBuffers(1, 4096)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unmap() })
	r := newRing(t, 4)
	cqes := make([]CQE, 4)
	var failed int
	allocs := testing.AllocsPerRun(200, func() {
		r.PrepRead(fd, bufs[0], 4096, 5)
		if _, err := r.Submit(1); err != nil {
			failed++
		}
		if r.Reap(cqes) != 1 || cqes[0].Res != 4096 {
			failed++
		}
	})
	if failed > 0 {
		t.Fatalf("%d Prep+Submit+Reap cycles failed", failed)
	}
	if allocs != 0 {
		t.Fatalf("Prep+Submit+Reap allocates %.1f times per cycle, want 0", allocs)
	}
}

func TestProbeWrapsErrUnsupported(t *testing.T) {
	if err := Probe(); err != nil && !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Probe() = %v, want nil or an error wrapping ErrUnsupported", err)
	}
}

func TestCQOverflowIsNotLost(t *testing.T) {
	requireUring(t)
	r := newRing(t, 2)
	entries := int(r.Entries())
	const rounds = 4 // CQ holds 2*entries; this posts 4*entries completions
	for round := range rounds {
		for i := range entries {
			if !r.PrepNop(uint64(round*entries + i)) {
				t.Fatalf("round %d: PrepNop %d returned false", round, i)
			}
		}
		if _, err := r.Submit(0); err != nil {
			t.Fatalf("round %d: Submit: %v", round, err)
		}
	}
	if atomic.LoadUint32(r.sqFlags)&sqCQOverflow == 0 {
		t.Fatal("CQ did not overflow; the test no longer exercises Reap's flush")
	}
	total := rounds * entries
	seen := make([]bool, total)
	cqes := make([]CQE, 3) // smaller than the CQ, so Reap is called often
	got := 0
	for tries := 0; got < total && tries < 100; tries++ {
		n := r.Reap(cqes) // only Reap, so its overflow flush is what runs
		for _, c := range cqes[:n] {
			if c.UserData >= uint64(total) || seen[c.UserData] {
				t.Fatalf("unexpected or repeated UserData %d", c.UserData)
			}
			seen[c.UserData] = true
		}
		got += n
	}
	if got != total {
		t.Fatalf("reaped %d of %d completions; overflowed ones were lost", got, total)
	}
}
