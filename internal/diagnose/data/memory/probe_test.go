package memory

import (
	"context"
	"os"
	"testing"
	"time"

	"etcdbench/internal/etcdcluster"
)

func TestMain(m *testing.M) {
	// The probe's member is this test binary, re-executed.
	if code, ok := etcdcluster.MaybeRunMember(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// A full LIST costs a member more than the bytes it returns, several at
// once more again, and a paginated LIST a page's worth.
func TestRunProbe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := RunProbe(ctx, t.TempDir(), 16<<10, 24<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", p)
	if p.ListedBytes < 24<<20 || p.IdleRSS < p.DBBytes || p.DBBytes < 24<<20 {
		t.Errorf("listed %d bytes, idle %d, db %d: want 24 MiB listed and the db resident", p.ListedBytes, p.IdleRSS, p.DBBytes)
	}
	if p.PerByte < 1 || p.PerByte > 10 || p.PerByteConcurrent < 0.5 || p.PagedPerByte <= 0 {
		t.Errorf("per listed byte: one LIST %.2f, %d at once %.2f, paged %.2f: want at least a copy of what it returns", p.PerByte, Concurrent, p.PerByteConcurrent, p.PagedPerByte)
	}
}
