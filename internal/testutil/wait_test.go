package testutil

import (
	"testing"
	"time"
)

func TestPoll(t *testing.T) {
	n := 0
	if !Poll(10*time.Second, func() bool { n++; return n == 3 }) || n != 3 {
		t.Errorf("Poll stopped after %d calls, want 3 (the first that holds)", n)
	}
	start := time.Now()
	if Poll(50*time.Millisecond, func() bool { return false }) {
		t.Error("Poll of a condition that never holds returned true")
	}
	if el := time.Since(start); el < 50*time.Millisecond {
		t.Errorf("Poll gave up after %v, before its timeout", el)
	}
}
