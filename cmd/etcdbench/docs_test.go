package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated flag tables in docs/")

// docsPage is the reference page of a command: docs/<family>.md, the
// family being the word after etcdbench.
func docsPage(c *cobra.Command) string {
	words := strings.Fields(c.CommandPath())
	family := "check" // etcdbench alone runs check
	if len(words) > 1 {
		family = words[1]
	}
	switch family {
	case "report", "compare", "judge":
		family = "reports"
	}
	return filepath.Join("..", "..", "docs", family+".md")
}

// flagTable is the generated reference of c's own flags.
func flagTable(c *cobra.Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| flag | default | meaning |\n| --- | --- | --- |\n")
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name := "`--" + f.Name + "`"
		if f.Shorthand != "" {
			name = "`-" + f.Shorthand + "`, " + name
		}
		def := "-"
		if f.DefValue != "" && f.DefValue != "[]" && f.DefValue != "false" && f.DefValue != "0" {
			def = "`" + f.DefValue + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, def, strings.ReplaceAll(f.Usage, "|", "\\|"))
	})
	if c.HasParent() {
		b.WriteString("\n" + reportFilesSentence(c) + "\n")
	}
	return b.String()
}

// reportFilesSentence says which of the root's --html and --textfile c
// takes: those of the formats its -o offers (reportFilesAccepted).
func reportFilesSentence(c *cobra.Command) string {
	formats := commandFormats(c)
	html, prom := slices.Contains(formats, "html"), slices.Contains(formats, "prom")
	switch {
	case html && prom:
		return "And the global `--html FILE` and `--textfile DIR` of every command that writes a report ([reports](reports.md))."
	case html:
		return "And the global `--html FILE` ([reports](reports.md)); it offers no prom, so `--textfile` is refused."
	}
	return "It writes no report: the global `--html` and `--textfile` are refused (exit 2)."
}

// commandFormats are the report formats c's -o offers (none: no -o).
func commandFormats(c *cobra.Command) []string {
	if o := c.LocalFlags().Lookup("output"); o != nil {
		return o.Annotations[formatsAnnotation]
	}
	return nil
}

func markers(path string) (begin, end string) {
	return "<!-- flags of `" + path + "`: generated from the command tree by go test ./cmd/etcdbench -run TestDocsFlags -update-docs -->",
		"<!-- end of the flags of `" + path + "` -->"
}

// documented are the commands whose flags the reference lists: every
// runnable one (a group only when it takes flags of its own, as
// `diagnose --endpoints`).
func documented(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		if c.Runnable() && (c.HasParent() || c.Name() == "etcdbench") && !(c.HasSubCommands() && c.HasParent() && !c.LocalNonPersistentFlags().HasAvailableFlags()) {
			out = append(out, c)
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	return out
}

// TestDocsFlags keeps docs/ the reference of every command and flag: each
// runnable command has a table of its flags, generated from the command
// tree, in its family's page. A new command or flag without its table
// fails; -update-docs writes the tables (the prose around them is
// written by hand).
func TestDocsFlags(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	pages := map[string]string{}
	read := func(p string) string {
		if s, ok := pages[p]; ok {
			return s
		}
		b, err := os.ReadFile(p)
		if err != nil && !*updateDocs {
			t.Fatalf("%v: every command family needs its reference page", err)
		}
		pages[p] = string(b)
		return pages[p]
	}
	for _, c := range documented(root) {
		page := docsPage(c)
		s := read(page)
		begin, end := markers(c.CommandPath())
		block := begin + "\n" + flagTable(c) + end
		re := regexp.MustCompile(regexp.QuoteMeta(begin) + `(?s).*?` + regexp.QuoteMeta(end))
		switch {
		case re.MatchString(s) && re.FindString(s) == block:
		case !*updateDocs:
			t.Errorf("%s: the flag table of %q is missing or out of date: run go test ./cmd/etcdbench -run TestDocsFlags -update-docs", page, c.CommandPath())
		case re.MatchString(s):
			pages[page] = re.ReplaceAllLiteralString(s, block)
		default:
			if !strings.Contains(s, "\n## Flags\n") {
				s = strings.TrimRight(s, "\n") + "\n\n## Flags\n"
			}
			pages[page] = strings.TrimRight(s, "\n") + "\n\n### `" + c.CommandPath() + "`\n\n" + block + "\n"
		}
	}
	if *updateDocs {
		for p, s := range pages {
			if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := len(documented(root)); n < 20 {
		t.Errorf("only %d commands found in the tree", n)
	}
}

// TestDocsLinks checks that every relative link of README.md and docs/
// (and bench/'s and deploy/'s pages) points at a file that exists.
func TestDocsLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	var pages []string
	for _, glob := range []string{"*.md", "docs/*.md", "bench/*.md", "bench/*/*.md", "deploy/*/*.md", "deploy/*/*/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, m...)
	}
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	n := 0
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			n++
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", p, target)
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d relative links found in %d pages: the test is not reading the docs", n, len(pages))
	}
}

// The front door and the command line stay small: README.md is the answer
// and the commands (the rest is in docs/), and this package holds flags
// and wiring, its policy in the packages below it.
func TestFrontDoorAndThinCmd(t *testing.T) {
	const readmeMax, cmdMax = 12 << 10, 3100
	st, err := os.Stat(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > readmeMax {
		t.Errorf("README.md is %d bytes, over %d: move detail into docs/", st.Size(), readmeMax)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(b), "\n")
	}
	if lines > cmdMax {
		t.Errorf("cmd/etcdbench has %d lines outside its tests, over %d: move policy into the packages it wires", lines, cmdMax)
	}
}
