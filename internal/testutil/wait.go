package testutil

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds and fails the test, saying what it
// waited for, when timeout passes first. Tests that start real things
// wait on a condition with a deadline this way, never on a fixed sleep:
// a busy machine makes them slower, not red. The polls start 10 ms apart
// and back off to 250 ms, so that a condition that queries a server does
// not load it.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// Poll polls cond as WaitFor does and reports whether it held before
// timeout passed, for callers that say more than WaitFor when it did not.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	every := 10 * time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(every)
		every = min(2*every, 250*time.Millisecond)
	}
	return true
}
