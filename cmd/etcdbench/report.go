package main

import (
	"errors"
	"io"
	"os"

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
			rs, err := readResults(args)
			if err != nil {
				return err
			}
			if err := oneTextfileEach(cmd, rs, args); err != nil {
				return err
			}
			return emit(cmd.Context(), stdout, format, rs, args)
		},
	}
	registerFormat(cmd.Flags(), &format, report.Formats, "")
	return cmd
}

// oneTextfileEach refuses --textfile for results that would be written to
// the same file (the same command on the same directory): the later would
// replace the earlier, and one exposition cannot hold both.
func oneTextfileEach(cmd *cobra.Command, rs []*result.Result, sources []string) error {
	if reportFilesFrom(cmd.Context()).Textfile == "" {
		return nil
	}
	seen := map[string]string{}
	for i, r := range rs {
		name := report.PromFileName(r)
		if first, ok := seen[name]; ok {
			return run.Usagef("--textfile: %s and %s would both be written to %s (the same command on the same directory): give one of them", first, sources[i], name)
		}
		seen[name] = sources[i]
	}
	return nil
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

// renderAll writes the results read from sources. One result is rendered
// as every command renders its own (emit). Several make one document:
// text one report after the other, json an array, html one page with a
// section per result, prom one exposition (a metric family may appear only
// once); --html gets that page, --textfile each result's metrics.
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
			return nil, run.Usagef("%v", err)
		}
		defer f.Close()
		in = f
	}
	r, err := result.Read(in)
	if errors.Is(err, result.ErrSchema) {
		return nil, run.Usagef("%s: %v (save one with -o json)", path, err)
	}
	if err != nil {
		return nil, run.Usagef("reading %s: %v", path, err)
	}
	return r, nil
}
