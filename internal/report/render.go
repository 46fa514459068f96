package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"etcdbench/internal/result"
)

// Formats are the report formats Render writes, as -o/--output names
// them.
var Formats = []string{"text", "json", "html", "prom"}

// Render writes rs to w in format (text, json, html or prom): one result
// as its own report, several as one document (text reports one after the
// other, a JSON array, one HTML page with a section per result named by
// sources, one Prometheus exposition).
func Render(w io.Writer, format string, rs []*result.Result, sources []string) error {
	switch format {
	case "json":
		if len(rs) == 1 {
			return JSON(w, rs[0])
		}
		return JSONAll(w, rs)
	case "html":
		if len(rs) == 1 {
			return HTML(w, rs[0])
		}
		return HTMLAll(w, rs, sources)
	case "prom":
		return Prom(w, rs...)
	}
	for i, r := range rs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := Text(w, r); err != nil {
			return err
		}
	}
	return nil
}

// Files are the report files a command writes besides its report on
// stdout: the root's --html FILE, --json FILE and --textfile DIR.
type Files struct {
	// HTML is a file for the HTML report, written atomically ("": none).
	HTML string
	// JSON is a file for the JSON report, written atomically ("": none):
	// where a program (the exporter's --capacity) reads it while it is
	// replaced, and a container without a shell cannot redirect stdout.
	JSON string
	// Textfile is node_exporter's textfile directory for the results'
	// metrics ("": none).
	Textfile string
}

// Check catches a report file that cannot be written before a run that
// may be long: --html or --json in a directory that does not exist or
// naming a directory, --textfile not a directory.
func (f Files) Check() error {
	for _, file := range []struct{ flag, path, example string }{{"--html", f.HTML, "report.html"}, {"--json", f.JSON, "result.json"}} {
		if file.path == "" {
			continue
		}
		dir := filepath.Dir(file.path)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("%s %s: directory %s does not exist", file.flag, file.path, dir)
		}
		if st, err := os.Stat(file.path); err == nil && st.IsDir() {
			return fmt.Errorf("%s %s is a directory: give a file name such as %s", file.flag, file.path, file.example)
		}
	}
	if f.Textfile != "" {
		if st, err := os.Stat(f.Textfile); err != nil || !st.IsDir() {
			return fmt.Errorf("--textfile %s: not a directory (give node_exporter's --collector.textfile.directory)", f.Textfile)
		}
	}
	return nil
}

// Write writes the report files asked for: one HTML page of rs (named by
// sources when there are several) and each result's metrics.
func (f Files) Write(rs []*result.Result, sources []string) error {
	if f.HTML != "" {
		if err := WriteFileAtomic(f.HTML, func(w io.Writer) error { return Render(w, "html", rs, sources) }); err != nil {
			return err
		}
	}
	if f.JSON != "" {
		if err := WriteFileAtomic(f.JSON, func(w io.Writer) error { return Render(w, "json", rs, sources) }); err != nil {
			return err
		}
	}
	if f.Textfile != "" {
		for _, r := range rs {
			if _, err := WriteTextfile(f.Textfile, r); err != nil {
				return err
			}
		}
	}
	return nil
}
