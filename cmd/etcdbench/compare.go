package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"

	"etcdbench/internal/report"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
)

// newCompareCmd makes `compare`: results of the same workloads side by side.
func newCompareCmd(stdout io.Writer) *cobra.Command {
	format := "text"
	cmd := &cobra.Command{
		Use:   "compare A.json B.json [C.json...]",
		Short: "Set saved results of the same workloads side by side: deltas and which is better",
		Long: `Reads two or more results saved with --output json ("-" reads standard
input) that ran the same workloads (before and after a tuning change, two
disks, two nodes) and prints every figure side by side, the delta of each run
from the first, and which run is better: lower latencies, higher rates, better
verdicts, "similar" when the difference is under 5 % or, for p99s, when their
confidence intervals overlap. -o/--output (or -f/--format, the same flag)
json prints the table as data; html (or --html FILE) a page that adds the
runs' latency CDFs overlaid. A warning heads the output when the runs of a
workload differ in a parameter that shapes the load (block size, clients,
value size...; not run length, endpoints or what tune varied): their figures
then differ for that reason too.` + exitCodesHelp,
		Example: `  etcdbench compare before.json after.json
  etcdbench compare node1.json node2.json node3.json --html nodes.html`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return run.Usagef("compare needs at least two result files: etcdbench compare A.json B.json")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			flag, err := formatFlag(cmd)
			if err != nil {
				return err
			}
			if format != "text" && format != "json" && format != "html" {
				return run.Usagef("%s %q: want text, json or html (prom: write each result's metrics with 'etcdbench report FILE -o prom')", flag, format)
			}
			files := reportFilesFrom(cmd.Context()) // --textfile is refused: -o offers no prom
			rs, err := result.ReadFiles(args)
			if err != nil {
				return run.Usage(err)
			}
			c, err := report.NewComparison(rs, args)
			if errors.Is(err, report.ErrMixedWorkloads) {
				return run.Usage(err)
			}
			if err != nil {
				return err
			}
			switch format {
			case "json":
				err = report.CompareJSON(stdout, c)
			case "html":
				err = report.CompareHTML(stdout, c)
			default:
				err = report.CompareText(stdout, c)
			}
			if err != nil {
				return err
			}
			if files.HTML != "" {
				return report.WriteFileAtomic(files.HTML, func(w io.Writer) error { return report.CompareHTML(w, c) })
			}
			return nil
		},
	}
	registerFormat(cmd.Flags(), &format, []string{"text", "json", "html"}, "write each result's metrics with 'etcdbench report FILE --textfile DIR'")
	return cmd
}
