package etcdcluster

import (
	"fmt"
	"sync"
)

// logBufferBytes bounds the etcd log kept in memory for error messages.
const logBufferBytes = 256 << 10

// tailBuffer keeps the last logBufferBytes written to it and counts what it
// dropped, so that etcd's log can explain a failure without filling memory
// during a long run. It is an io.Writer (zapcore.AddSync) safe for
// concurrent use.
type tailBuffer struct {
	mu      sync.Mutex
	buf     []byte
	dropped int64
}

// Write appends p, discarding the oldest bytes beyond the limit.
func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - logBufferBytes; over > 0 {
		b.dropped += int64(over)
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// Sync does nothing: the buffer is in memory.
func (b *tailBuffer) Sync() error { return nil }

// String returns the kept log, saying how much was dropped before it.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped > 0 {
		return fmt.Sprintf("(%d earlier bytes of log dropped)\n%s", b.dropped, b.buf)
	}
	return string(b.buf)
}
