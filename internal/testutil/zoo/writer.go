package zoo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// competitorWrap is where the competing writer's file starts over, so
// that it stays small.
const competitorWrap = 64 << 20

// CompetingWriter is the directory itself with another writer on the same
// filesystem: perSec times a second it writes size bytes to a file of its
// own and fdatasyncs it, until the place is closed.
func CompetingWriter(perSec int, size int) Storage {
	return Storage{Name: "competing-writer",
		About: fmt.Sprintf("the directory itself, another writer appending %d KiB + fdatasync %d times a second to a file beside it", size>>10, perSec),
		setup: func(ctx context.Context, dir string, p *Place) error {
			w, err := startWriter(ctx, filepath.Join(dir, "competing-writer"), perSec, size)
			if err != nil {
				return err
			}
			p.Competitor = w
			p.onClose(w.stop)
			return nil
		}}
}

// Writer is a competing writer's goroutine.
type Writer struct {
	syncs  atomic.Int64
	cancel context.CancelFunc
	done   chan error
}

// Syncs is how many write+fdatasync pairs the writer has done.
func (w *Writer) Syncs() int64 { return w.syncs.Load() }

func startWriter(ctx context.Context, path string, perSec, size int) (*Writer, error) {
	if perSec <= 0 || size <= 0 {
		return nil, fmt.Errorf("competing writer: rate %d/s and size %d must be positive", perSec, size)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w := &Writer{cancel: cancel, done: make(chan error, 1)}
	go func() {
		err := w.loop(ctx, f, time.Second/time.Duration(perSec), size)
		w.done <- errors.Join(err, f.Close(), os.Remove(path))
	}()
	return w, nil
}

// loop writes and syncs every period (ticks missed while a sync was
// slow are dropped, as a rate-limited client's would be).
func (w *Writer) loop(ctx context.Context, f *os.File, period time.Duration, size int) error {
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i)
	}
	var off int64
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if _, err := f.WriteAt(buf, off); err != nil {
			return fmt.Errorf("competing writer: %w", err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return fmt.Errorf("competing writer: fdatasync: %w", err)
		}
		w.syncs.Add(1)
		if off += int64(size); off >= competitorWrap {
			off = 0
		}
	}
}

func (w *Writer) stop() error {
	w.cancel()
	return <-w.done
}
