// Package cmptest holds helpers for the tests of the bench/ comparisons.
package cmptest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"etcdbench/internal/etcdload/metrics"
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

// PromHist is Prometheus text of a histogram called name with etcd's
// disk buckets (1 ms doubling to 32 ms, then +Inf): counts are the seven
// cumulative bucket counts, the last the count.
func PromHist(name string, counts ...int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# TYPE %s histogram\n", name)
	for i, le := range []string{"0.001", "0.002", "0.004", "0.008", "0.016", "0.032", "+Inf"} {
		fmt.Fprintf(&b, "%s_bucket{le=%q} %d\n", name, le, counts[i])
	}
	fmt.Fprintf(&b, "%s_sum 0\n%s_count %d\n", name, name, counts[len(counts)-1])
	return b.String()
}

// Metrics parses Prometheus text, failing the test when it cannot.
func Metrics(t testing.TB, text string) metrics.Families {
	t.Helper()
	f, err := metrics.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return f
}
