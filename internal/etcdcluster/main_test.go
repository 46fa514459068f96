package etcdcluster

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	// The members of 3-member clusters are this test binary, re-executed.
	if code, ok := MaybeRunMember(); ok {
		os.Exit(code)
	}
	if dir, ok := os.LookupEnv(orphanHelperEnv); ok {
		os.Exit(runOrphanHelper(dir))
	}
	os.Exit(m.Run())
}
