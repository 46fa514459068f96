package testutil

import (
	"os"
	"testing"
)

// Missing says that a test cannot run here because something it needs
// is missing (a package, root, tracefs): it skips t with the message on
// a developer's machine, and fails t with it under CI (CI=true, which
// .ci/run sets), where the missing thing is CI's to install: a CI run
// must not pass with the test skipped. testing.Short's skips are not
// this: they stay skips everywhere.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf("CI=true, so not skipped: "+format, args...)
	}
	t.Skipf(format, args...)
}

// InCI says whether the tests run under CI (CI=true, as .ci/run and most
// CI services set it).
func InCI() bool { return os.Getenv("CI") == "true" }
