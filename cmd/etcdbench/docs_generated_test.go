package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"etcdbench/internal/capacity/diskmodel"
	"etcdbench/internal/check"
)

// A generated block is a part of a page that says something the code
// knows (which commands take which flags, what a budget runs), written
// from the code between two markers, as the flag tables are: prose that
// would otherwise drift from the command tree.
type generatedBlock struct {
	page string // under docs/
	name string
	text func(root *cobra.Command) string
}

// generatedBlocks are the blocks of docs/ generated from the code.
var generatedBlocks = []generatedBlock{
	{"check.md", "budgets", budgetsSummary},
	{"check.md", "budgets in detail", budgetsDetail},
	{"reports.md", "formats of every command", formatsTable},
	{"disk.md", "shared flags of the workloads", diskSharedFlags},
}

func generatedMarkers(name string) (begin, end string) {
	return "<!-- generated " + name + ": by go test ./cmd/etcdbench -run TestDocsGenerated -update-docs -->",
		"<!-- end of generated " + name + " -->"
}

// budgetsSummary is check.md's first table of check's budgets.
func budgetsSummary(*cobra.Command) string {
	var b strings.Builder
	b.WriteString("| budget | flag | runs | time |\n| --- | --- | --- | --- |\n")
	for _, bu := range check.Budgets() {
		fmt.Fprintf(&b, "| %s | %s | %s; etcd put %s, range %s%s | %s |\n", bu.Name, budgetFlag(bu.Name),
			strings.Join(bu.Disk, ", "), bu.Put.Duration, bu.Range.Duration, etcdSide(bu, false), bu.About)
	}
	return b.String()
}

// budgetsDetail is check.md's second table of check's budgets.
func budgetsDetail(*cobra.Command) string {
	var b strings.Builder
	b.WriteString("| budget | flag | disk preset | disk workloads | embedded etcd: put / range / capacity | time |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, bu := range check.Budgets() {
		wls := make([]string, len(bu.Disk))
		for i, w := range bu.Disk {
			wls[i] = w
			if set := bu.Settings[w]; len(set) > 0 {
				var kv []string
				for k, v := range set {
					kv = append(kv, "--"+k+" "+v)
				}
				slices.Sort(kv)
				wls[i] += " (" + strings.Join(kv, ", ") + ")"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s / %s%s | %s |\n", bu.Name, budgetFlag(bu.Name), bu.DiskPreset,
			strings.Join(wls, ", "), bu.Put.Duration, bu.Range.Duration, etcdSide(bu, true), bu.About)
	}
	return b.String()
}

// etcdSide names a budget's etcd side of capacity, with its steps when
// detailed.
func etcdSide(bu check.Budget, detailed bool) string {
	s := bu.EtcdCapacity
	switch {
	case s == nil:
		return ""
	case !detailed:
		return ", capacity's etcd side"
	}
	hold := s.MaxHold
	if hold == 0 {
		hold = 10 * time.Second
	}
	return fmt.Sprintf(" / capacity's etcd side (steps %v held up to %v, factor %g, resolution %g)", s.Step, hold, s.Factor, s.Resolution)
}

func budgetFlag(name string) string {
	if name == "default" {
		return ""
	}
	return "`--" + name + "`"
}

// formatsTable is reports.md's table of the -o formats and report files
// of every command that writes a report, from the command tree.
func formatsTable(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString("| command | `-o` | `--html FILE` | `--textfile DIR` |\n| --- | --- | --- | --- |\n")
	yes := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "refused"
	}
	var none []string
	for _, c := range documented(root) {
		f := commandFormats(c)
		if f == nil {
			none = append(none, "`"+c.CommandPath()+"`")
			continue
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", c.CommandPath(), strings.Join(f, ", "),
			yes(slices.Contains(f, "html")), yes(slices.Contains(f, "prom")))
	}
	fmt.Fprintf(&b, "\n%s write no report: they refuse `--html` and `--textfile` (exit 2).\n", strings.Join(none, " and "))
	return b.String()
}

// diskSharedFlags says which of the shared flags each disk workload's
// command takes.
func diskSharedFlags(root *cobra.Command) string {
	shared := []string{"output", "preset", "quick", "thorough", "no-progress"}
	var b strings.Builder
	b.WriteString("| command | " + "`--" + strings.Join(shared, "` | `--") + "` |\n| --- |" + strings.Repeat(" --- |", len(shared)) + "\n")
	names := []string{"all"}
	for _, s := range diskmodel.Specs() {
		names = append(names, s.Name)
	}
	for _, n := range names {
		c, _, err := root.Find([]string{"disk", n})
		if err != nil || c.Name() != n {
			continue
		}
		fmt.Fprintf(&b, "| `disk %s` |", n)
		for _, f := range shared {
			mark := " - |"
			if c.LocalFlags().Lookup(f) != nil {
				mark = " yes |"
			}
			b.WriteString(mark)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestDocsGenerated keeps the generated blocks of docs/ (generatedBlocks)
// as the code says; -update-docs rewrites them.
func TestDocsGenerated(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	for _, g := range generatedBlocks {
		path := filepath.Join("..", "..", "docs", g.page)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		begin, end := generatedMarkers(g.name)
		block := begin + "\n" + g.text(root) + end
		re := regexp.MustCompile(regexp.QuoteMeta(begin) + `(?s).*?` + regexp.QuoteMeta(end))
		switch s := string(b); {
		case !re.MatchString(s):
			t.Errorf("%s has no generated block %q: put its markers where it goes:\n%s\n%s", path, g.name, begin, end)
		case re.FindString(s) == block:
		case *updateDocs:
			if err := os.WriteFile(path, []byte(re.ReplaceAllLiteralString(s, block)), 0o644); err != nil {
				t.Fatal(err)
			}
		default:
			t.Errorf("%s: the generated block %q is out of date: run go test ./cmd/etcdbench -run TestDocsGenerated -update-docs", path, g.name)
		}
	}
}
