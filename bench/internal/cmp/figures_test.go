package cmp

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the figures and tables the figure pages (README.md, bench/README.md, ...) quote from their result files")

// The figures README.md and bench/README.md quote come from committed
// result files (bench/<name>/results/<date>.json, Result), through
// markers the rendered page does not show:
//
//	<!-- figure bench/wal-vs-fio/results/2026-11-25.json fdatasync_p99_ratio -->0.97<!-- /figure -->
//	<!-- figure FILE KEY %.0f -->1650<!-- /figure -->   (a format other than %.2f)
//	<!-- figure FILE rounds %.0f -->3<!-- /figure -->   (the run's rounds; load_start, load_end: its load average)
//	<!-- table FILE -->            (the file's summary table, in a code block)
//	```
//	...
//	```
//	<!-- /table -->
var (
	figureRe = regexp.MustCompile(`<!-- figure (\S+) (\S+)(?: (\S+))? -->(.*?)<!-- /figure -->`)
	tableRe  = regexp.MustCompile("(?s)<!-- table (\\S+) -->\n(.*?)<!-- /table -->")
)

// figurePages are the pages whose figures must come from result files
// (a bench's own README quotes them too, where it gives per-round
// figures).
var figurePages = []string{"README.md", "bench/README.md", "bench/capacity-vs-etcd/README.md", "bench/exporter-overhead/README.md", "bench/memory-vs-etcd/README.md", "bench/suite-time/README.md", "docs/capacity.md", "docs/exporter.md"}

// TestDocsFigures fails when a quoted figure or table differs from its
// result file, and when a code block of bench/README.md's latest results
// is not quoted from one; -update-docs rewrites the text from the files.
func TestDocsFigures(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	results := map[string]Result{}
	read := func(path string) (Result, error) {
		if r, ok := results[path]; ok {
			return r, nil
		}
		r, err := ReadResult(filepath.Join(root, path))
		results[path] = r
		return r, err
	}
	n := 0
	for _, page := range figurePages {
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		out := figureRe.ReplaceAllStringFunc(s, func(m string) string {
			n++
			g := figureRe.FindStringSubmatch(m)
			path, key, format, text := g[1], g[2], g[3], g[4]
			if format == "" {
				format = "%.2f"
			}
			r, err := read(path)
			if err != nil {
				t.Errorf("%s: %v", page, err)
				return m
			}
			v, ok := quoted(r, key)
			if !ok {
				t.Errorf("%s quotes %s of %s, which has no such figure", page, key, path)
				return m
			}
			want := fmt.Sprintf(format, v)
			if text != want && !*updateDocs {
				t.Errorf("%s says %q where %s's %s is %s: run go test ./bench/internal/cmp -run TestDocsFigures -update-docs, or correct the file", page, text, path, key, want)
			}
			return strings.Replace(m, "-->"+text+"<!--", "-->"+want+"<!--", 1)
		})
		out = tableRe.ReplaceAllStringFunc(out, func(m string) string {
			n++
			g := tableRe.FindStringSubmatch(m)
			path, text := g[1], g[2]
			r, err := read(path)
			if err != nil {
				t.Errorf("%s: %v", page, err)
				return m
			}
			want := "```\n" + r.Table + "```\n"
			if r.Table == "" {
				t.Errorf("%s quotes the table of %s, which has none", page, path)
			} else if text != want && !*updateDocs {
				t.Errorf("%s's table from %s differs from the file's:\n%s\nwant:\n%s", page, path, text, want)
			}
			return "<!-- table " + path + " -->\n" + want + "<!-- /table -->"
		})
		if page == "bench/README.md" {
			checkTablesQuoted(t, page, out)
		}
		if *updateDocs && out != s {
			if err := os.WriteFile(filepath.Join(root, page), []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d quoted figures and tables found: the test is not reading the pages", n)
	}
}

// quoted is the value of key in r: a figure, or what the file says of
// its run (rounds; load_start and load_end, the 1-minute load average at
// the run's start and end).
func quoted(r Result, key string) (float64, bool) {
	switch key {
	case "rounds":
		return float64(r.Rounds), r.Rounds > 0
	case "load_start", "load_end":
		if r.Load == nil {
			return 0, false
		}
		if key == "load_start" {
			return r.Load[0], true
		}
		return r.Load[1], true
	}
	v, ok := r.Figures[key]
	return v, ok
}

// checkTablesQuoted fails for a code block in the latest results of
// bench/README.md that is not quoted from a result file.
func checkTablesQuoted(t *testing.T, page, s string) {
	t.Helper()
	_, latest, ok := strings.Cut(s, "\n## Latest results\n")
	if !ok {
		t.Errorf("%s has no \"## Latest results\" section", page)
		return
	}
	quoted := tableRe.ReplaceAllString(latest, "")
	if i := strings.Index(quoted, "```"); i >= 0 {
		end := min(len(quoted), i+200)
		t.Errorf("%s: a table of the latest results is not quoted from a result file (<!-- table FILE -->):\n%s", page, quoted[i:end])
	}
}
