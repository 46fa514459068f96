package disk

import (
	"testing"
	"time"
)

// The comparison with the idle p99 reads as a slowdown only when it is
// one: a ratio under 1 is said as faster.
func TestIdleCompared(t *testing.T) {
	for _, tc := range []struct {
		idle, loaded time.Duration
		want         string
	}{
		{time.Millisecond, 3 * time.Millisecond, "idle p99 1ms, 3.0x slower under load"},
		{30491 * time.Microsecond, 12 * time.Millisecond, "idle p99 30.49ms, 2.5x faster under load"},
		{time.Millisecond, 1010 * time.Microsecond, "idle p99 1ms, about the same under load"},
	} {
		if got := idleCompared(tc.idle, tc.loaded); got != tc.want {
			t.Errorf("idle %v, loaded %v: %q, want %q", tc.idle, tc.loaded, got, tc.want)
		}
	}
}
