package disk

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestBackendGrow: the pages of a growing database come after the
// prefilled ones, the file grows by bbolt's chunk with a hole (allocated
// only where written), and past growCap the file is cut back to the
// prefilled pages, which frees the grown blocks, and grows again.
func TestBackendGrow(t *testing.T) {
	db, err := openBackendDB(filepath.Join(t.TempDir(), "db"), 64*pageSize)
	if err != nil {
		t.Fatal(err)
	}
	defer db.close()
	stat := func() unix.Stat_t {
		t.Helper()
		var st unix.Stat_t
		if err := unix.Fstat(db.fd, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	base := stat()

	pages, err := db.grow(nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 3 || pages[0] != 64 || pages[2] != 66 {
		t.Fatalf("first grown pages %v, want 64, 65, 66", pages)
	}
	st := stat()
	if st.Size != 64*pageSize+3*pageSize+growChunk {
		t.Errorf("file size %d after growing 3 pages, want the data plus one %d-byte chunk", st.Size, growChunk)
	}
	if st.Blocks != base.Blocks {
		t.Errorf("%d blocks after extending, %d before: the extension should be a hole", st.Blocks, base.Blocks)
	}
	if next, _ := db.grow(nil, 1); next[0] != 67 {
		t.Errorf("next grown page %d, want 67", next[0])
	}

	// Fill to the cap, writing every page as a commit would.
	written := int64(0)
	for db.hwm < db.pages+growCap/pageSize-maxCommitPages {
		pgs, err := db.grow(nil, maxCommitPages)
		if err != nil {
			t.Fatal(err)
		}
		for _, pg := range pgs {
			if err := pwriteFull(db.fd, db.buf, pg*pageSize); err != nil {
				t.Fatal(err)
			}
		}
		written += int64(len(pgs))
	}
	full := stat()
	if full.Size > 64*pageSize+growCap {
		t.Errorf("file size %d beyond the data and growCap", full.Size)
	}
	if full.Blocks*512 < written*pageSize {
		t.Errorf("%d bytes allocated after writing %d grown pages", full.Blocks*512, written)
	}
	again, err := db.grow([]int64{5}, maxCommitPages)
	if err != nil {
		t.Fatal(err)
	}
	if again[0] != 5 || again[1] != db.pages {
		t.Errorf("after the cap: %v..., want the dirty page 5, then the grown pages from %d again", again[:2], db.pages)
	}
	if punched := stat(); punched.Blocks >= full.Blocks {
		t.Errorf("%d blocks after starting over, %d before: the grown part was not freed", punched.Blocks, full.Blocks)
	}
}
