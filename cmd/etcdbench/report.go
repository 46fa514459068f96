package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"etcdbench/internal/report"
	"etcdbench/internal/result"
)

// newReportCmd makes `report`: saved results rendered again in any format.
func newReportCmd(stdout io.Writer) *cobra.Command {
	format := "text"
	cmd := &cobra.Command{
		Use:   "report RESULT.json...",
		Short: "Render saved results (-o json of any command) again: text, json, html or prom",
		Long: `Reads results saved with --output json by any etcdbench command ("-" reads
standard input) and renders them again. text and json print one report per
file; prom merges them into one Prometheus exposition; html takes one file
(use 'etcdbench compare' to set several side by side). --html FILE and
--textfile DIR write those outputs as well, as for every command.`,
		Example: `  etcdbench disk wal --dir /var/lib/etcd -o json > wal.json
  etcdbench report wal.json
  etcdbench report wal.json --format html > wal.html
  etcdbench report wal.json --textfile /var/lib/node_exporter/textfile`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("missing result file: etcdbench report RESULT.json...")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat("--format", format); err != nil {
				return err
			}
			rs, err := readResults(args)
			if err != nil {
				return err
			}
			if len(rs) > 1 && (format == "html" || reportFilesFrom(cmd.Context()).html != "") {
				return usagef("an HTML report shows one result: give one file, or use 'etcdbench compare' for several")
			}
			return renderAll(cmd, stdout, format, rs)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	cmd.Flags().StringVarP(&format, "format", "f", format, "text, json, html or prom")
	return cmd
}

// renderAll writes several results: prom as one exposition (a metric
// family may appear only once), the other formats one after the other. The
// --html and --textfile files are written for each.
func renderAll(cmd *cobra.Command, w io.Writer, format string, rs []*result.Result) error {
	if format == "prom" && len(rs) > 1 {
		if err := report.Prom(w, rs...); err != nil {
			return err
		}
		for _, r := range rs {
			if err := reportFilesFrom(cmd.Context()).write(r); err != nil {
				return err
			}
		}
		return nil
	}
	for i, r := range rs {
		if i > 0 && format == "text" {
			fmt.Fprintln(w)
		}
		if err := emit(cmd.Context(), w, format, r); err != nil {
			return err
		}
	}
	return nil
}

// readResults reads saved results; a file that cannot be read or is not a
// result is a usage error naming it.
func readResults(paths []string) ([]*result.Result, error) {
	var rs []*result.Result
	for _, p := range paths {
		r, err := readResult(p)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

func readResult(path string) (*result.Result, error) {
	var in io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, usagef("%v", err)
		}
		defer f.Close()
		in = f
	}
	r, err := result.Read(in)
	if errors.Is(err, result.ErrSchema) {
		return nil, usagef("%s is not an etcdbench result (save one with -o json): %v", path, err)
	}
	if err != nil {
		return nil, usagef("reading %s: %v", path, err)
	}
	return r, nil
}
