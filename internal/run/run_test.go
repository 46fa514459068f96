package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/scratch"
)

func TestOpenCloseRemovesScratch(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir, 1, "free some space", []string{"etcdbench", "x"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Dir != dir || r.Result.Environment.Dir == "" || r.Result.Tool.Args[1] != "x" || r.Result.StartedAt.IsZero() {
		t.Errorf("run %+v: want the directory, its environment, the command line and a start", r)
	}
	if err := os.WriteFile(filepath.Join(r.Scratch.Path, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var runErr error
	r.Close(&runErr)
	if runErr != nil {
		t.Fatal(runErr)
	}
	if _, err := os.Stat(r.Scratch.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("scratch %s still there after Close: %v", r.Scratch.Path, err)
	}
}

func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "nope"), 1, "", nil); !errors.Is(err, scratch.ErrNotExist) {
		t.Errorf("missing directory: %v, want ErrNotExist", err)
	}
	_, err := Open(dir, 1<<62, "free some space, or use --quick", nil)
	if !errors.Is(err, scratch.ErrNoSpace) || !strings.Contains(err.Error(), "use --quick") {
		t.Errorf("too little space: %v, want ErrNoSpace with the hint", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused Open left %d entries in %s", len(entries), dir)
	}
}

func TestOpenRemovesStale(t *testing.T) {
	dir := t.TempDir()
	// A scratch directory whose owner is gone: a pid that cannot exist.
	stale := filepath.Join(dir, scratch.Prefix+"stale")
	if err := os.Mkdir(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	m := fmt.Sprintf(`{"tool":"etcdbench","pid":%d,"start_ticks":1,"boot_id":"x","created":"2020-01-01T00:00:00Z"}`, 1<<30)
	if err := os.WriteFile(filepath.Join(stale, scratch.MarkerName), []byte(m), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, 1, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(&err)
	if len(r.Stale) != 1 {
		t.Fatalf("stale %q, want the killed run's directory", r.Stale)
	}
	res, ferr := r.Finish(context.Background(), []result.Workload{{Name: "w"}}, nil)
	if ferr != nil || !strings.Contains(strings.Join(res.Workloads[0].Notes, " "), "left by a killed run") {
		t.Errorf("finish: %v, notes %q: want the stale directory said", ferr, res.Workloads[0].Notes)
	}
}

func TestFinish(t *testing.T) {
	boom := errors.New("boom")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name            string
		ctx             context.Context
		wls             []result.Workload
		err             error
		wantResult      bool
		wantErr         error
		wantInterrupted bool
	}{
		{"done", context.Background(), []result.Workload{{Name: "w"}}, nil, true, nil, false},
		{"nothing ran", context.Background(), nil, nil, false, errNothingRan, false},
		{"failed with nothing", context.Background(), nil, boom, false, boom, false},
		{"failed after some: the caller decides to keep it", context.Background(), []result.Workload{{Name: "w"}}, boom, true, boom, false},
		{"interrupted keeps what it has", canceled, []result.Workload{{Name: "w"}}, context.Canceled, true, context.Canceled, true},
		{"interrupted before anything", canceled, nil, context.Canceled, true, context.Canceled, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{Result: NewResult(nil)}
			res, err := r.Finish(tc.ctx, tc.wls, tc.err)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("err %v, want %v", err, tc.wantErr)
			}
			if (res != nil) != tc.wantResult {
				t.Fatalf("result %v, want one: %v", res, tc.wantResult)
			}
			if res != nil && (res.Interrupted != tc.wantInterrupted || res.FinishedAt.Before(res.StartedAt)) {
				t.Errorf("interrupted %v (want %v), finished %v", res.Interrupted, tc.wantInterrupted, res.FinishedAt)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	err := fmt.Errorf("resolving: %w", Usagef("--rate %q: want a positive number", "x"))
	if !IsUsage(err) || err.Error() != `resolving: --rate "x": want a positive number` {
		t.Errorf("%v: want a usage error kept through wrapping", err)
	}
	if IsUsage(errors.New("disk full")) || Usage(nil) != nil {
		t.Error("a plain error is not a usage error; Usage(nil) is nil")
	}
	if !errors.Is(Usage(scratch.ErrNotDir), scratch.ErrNotDir) {
		t.Error("Usage hides the sentinel it wraps")
	}
}

func TestProgress(t *testing.T) {
	var nilProgress *Progress // no terminal: every method does nothing
	nilProgress.Start(0, "x")
	nilProgress.Show("y")
	nilProgress.Clear()
	if NewProgress(nil, 3) != nil || nilProgress.Requests() != nil {
		t.Error("no writer should give no progress line")
	}
	var b bytes.Buffer
	p := NewProgress(&b, 3)
	p.Start(1, "wal")
	p.Show("12 samples")
	p.Requests()(2*time.Second, 7)
	p.Clear()
	for _, want := range []string{"[2/3] wal", "[2/3] wal 12 samples", "[2/3] wal    2s  7 requests sent", "\r\033[K"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("progress output %q lacks %q", b.String(), want)
		}
	}
	if Terminal(&b, false, "text") != nil || Terminal(os.Stderr, true, "text") != nil || Terminal(os.Stderr, false, "json") != nil {
		t.Error("a live line only on a terminal, not turned off, with a text report")
	}
}
