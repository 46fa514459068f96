package capacityrun

import (
	"context"
	"errors"
	"strings"
	"testing"

	"etcdbench/internal/result"
)

// The CPU side's failure keeps the disk's answer, said in a note; an
// interruption stays an interruption.
func TestCPUSideFailed(t *testing.T) {
	var w result.Workload
	if err := cpuSideFailed(context.Background(), &w, errors.New("etcd: member0 did not\nstart")); err != nil || len(w.Notes) != 1 ||
		!strings.Contains(w.Notes[0], "not estimated: etcd: member0 did not start") {
		t.Fatalf("err %v, notes %q", err, w.Notes)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w = result.Workload{}
	if err := cpuSideFailed(ctx, &w, context.Canceled); !errors.Is(err, context.Canceled) || len(w.Notes) != 0 {
		t.Fatalf("interrupted: err %v, notes %q", err, w.Notes)
	}
	if err := cpuSideFailed(context.Background(), &w, nil); err != nil || len(w.Notes) != 0 {
		t.Fatalf("no error: %v %q", err, w.Notes)
	}
}
