// Package cmptest holds helpers for the tests of the bench/ comparisons.
package cmptest

import (
	"os"
	"path/filepath"
	"testing"
)

// ReadFixture returns the file name in the test's testdata directory,
// failing the test when it cannot be read.
func ReadFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
