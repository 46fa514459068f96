package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"etcdbench/internal/check"
	"etcdbench/internal/report"
	"etcdbench/internal/result"
)

// readmeExampleRe is the README's example output: the text report of a
// committed result, from the line that starts with from to the end.
var readmeExampleRe = regexp.MustCompile("(?s)<!-- example (\\S+) from \"([^\"]*)\" -->\n```\n(.*?)```\n<!-- /example -->")

// readmeBudgetRe is a README mention of how long a budget takes.
var readmeBudgetRe = regexp.MustCompile(`<!-- budget (\S+) -->(.*?)<!-- /budget -->`)

// TestReadmeExample keeps README.md's example output what etcdbench's
// text reporter renders from the committed result it names (a real
// `etcdbench -o json` run), cut where the marker says, and its mentions
// of a budget's time what internal/check says; -update-docs rewrites them.
func TestReadmeExample(t *testing.T) {
	root := filepath.Join("..", "..")
	path := filepath.Join(root, "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	examples := 0
	out := readmeExampleRe.ReplaceAllStringFunc(s, func(m string) string {
		examples++
		g := readmeExampleRe.FindStringSubmatch(m)
		file, from, text := g[1], g[2], g[3]
		f, err := os.Open(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := result.Read(f)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var buf bytes.Buffer
		if err := report.Text(&buf, r); err != nil {
			t.Fatal(err)
		}
		i := strings.Index(buf.String(), "\n"+from)
		if i < 0 {
			t.Fatalf("the text report of %s has no line starting with %q", file, from)
		}
		want := buf.String()[i+1:]
		if text != want && !*updateDocs {
			t.Errorf("README.md's example differs from the text report of %s (from %q): run go test ./cmd/etcdbench -run TestReadmeExample -update-docs\ngot:\n%s\nwant:\n%s", file, from, text, want)
		}
		return strings.Replace(m, "```\n"+text+"```", "```\n"+want+"```", 1)
	})
	if examples != 1 {
		t.Errorf("README.md has %d example outputs rendered from a result, want 1", examples)
	}
	budgets := 0
	out = readmeBudgetRe.ReplaceAllStringFunc(out, func(m string) string {
		budgets++
		g := readmeBudgetRe.FindStringSubmatch(m)
		bu, err := check.BudgetNamed(g[1])
		if err != nil {
			t.Errorf("README.md: %v", err)
			return m
		}
		if g[2] != bu.About && !*updateDocs {
			t.Errorf("README.md says the %s budget takes %q, internal/check %q", g[1], g[2], bu.About)
		}
		return "<!-- budget " + g[1] + " -->" + bu.About + "<!-- /budget -->"
	})
	if budgets == 0 {
		t.Errorf("README.md does not say how long the default check takes (a budget marker)")
	}
	if *updateDocs && out != s {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
