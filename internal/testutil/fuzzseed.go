package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// WriteFuzzSeed writes one seed of the fuzz target fuzz as
// testdata/fuzz/FUZZ/NAME in the package under test, in go test's corpus
// format: typ is the argument's Go type ("[]byte", "string") and quoted its
// value as a Go literal (strconv.Quote).
func WriteFuzzSeed(t testing.TB, fuzz, name, quoted, typ string) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", fuzz)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf("go test fuzz v1\n%s(%s)\n", typ, quoted)
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
