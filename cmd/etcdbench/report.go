package main

import (
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/report"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
)

// newReportCmd makes `report`: saved results rendered again in any format.
func newReportCmd(stdout io.Writer) *cobra.Command {
	format := "text"
	cmd := &cobra.Command{
		Use:   "report RESULT.json...",
		Short: "Render saved results (-o json of any command) again: text, json, html or prom",
		Long: `Reads results saved with --output json by any etcdbench command ("-" reads
standard input) and renders them again (-o/--output, or -f/--format: the same
flag). Several files give one document: text prints one report after the
other, json one array of results, html one page with a section per result,
prom one Prometheus exposition. --html FILE writes that page as well, and
--textfile DIR each result's metrics, as for every command.` + exitCodesHelp,
		Example: `  etcdbench disk wal --dir /var/lib/etcd -o json > wal.json
  etcdbench report wal.json
  etcdbench report wal.json -o html > wal.html
  etcdbench report node1.json node2.json --html nodes.html
  etcdbench report wal.json --textfile /var/lib/node_exporter/textfile`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return run.Usagef("missing result file: etcdbench report RESULT.json...")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			flag, err := formatFlag(cmd)
			if err != nil {
				return err
			}
			if err := checkFormat(flag, format, report.Formats); err != nil {
				return err
			}
			rs, err := result.ReadFiles(args)
			if err != nil {
				return run.Usage(err)
			}
			if reportFilesFrom(cmd.Context()).Textfile != "" {
				if err := report.OneTextfileEach(rs, args); err != nil {
					return run.Usage(err)
				}
			}
			return emit(cmd.Context(), stdout, format, rs, args)
		},
	}
	registerFormat(cmd.Flags(), &format, report.Formats, "")
	return cmd
}

// registerFormat registers -o/--output offering formats, as every command
// has (outputFlags.registerFormats; noProm says why prom is not among
// them), and -f/--format, the spelling report and compare had first: two
// names of one report format.
func registerFormat(fs *pflag.FlagSet, format *string, formats []string, noProm string) {
	fs.StringVarP(format, "output", "o", *format, "report format: "+formatsUsage(formats))
	annotateFormats(fs, "output", formats, noProm)
	fs.StringVarP(format, "format", "f", *format, "the same as -o/--output")
}

// formatFlag returns the spelling of the format flag given on the command
// line, for messages; giving both is a usage error.
func formatFlag(cmd *cobra.Command) (string, error) {
	o, f := cmd.Flags().Changed("output"), cmd.Flags().Changed("format")
	switch {
	case o && f:
		return "", run.Usagef("-o/--output and -f/--format are the same flag: give one")
	case f:
		return "--format", nil
	}
	return "--output", nil
}
