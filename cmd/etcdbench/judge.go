package main

import (
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"etcdbench/internal/fio"
	"etcdbench/internal/run"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// newJudgeCmd makes `judge`: fio's JSON output judged like the WAL check.
func newJudgeCmd(stdout, _ io.Writer) *cobra.Command {
	var (
		of    outputFlags
		p99   p99Flags
		walBS = strconv.Itoa(fio.WALWriteSize)
	)
	cmd := &cobra.Command{
		Use:   "judge FIO.json",
		Short: "Judge fio's JSON output by the WAL check's verdicts, and how its job differs from etcd's WAL",
		Long: `Reads the output of fio --output-format=json (or json+, which carries the full
latency histograms; "-" reads standard input) from any job file: the jobs of
each reporting group ran together and are merged (numjobs with or without
group_reporting), their sync latencies into one distribution and their syncs
into one rate. It then gives the verdicts of 'etcdbench disk wal': the fdatasync
p99 against 10 ms (decided with confidence bounds), the synced IOPS per
writer, and whether the syncs can have reached a device; and it lists the fio
options that make the result unlike etcd's WAL (direct=1, libaio, a bs far
from the WAL batches of --wal-bs, several writers...).` + exitCodesHelp,
		Example: `  fio --rw=write --ioengine=sync --fdatasync=1 --directory=/var/lib/etcd \
      --size=22m --bs=2300 --name=mytest --output-format=json+ > fio.json
  etcdbench judge fio.json
  etcdbench judge fio.json --wal-bs 8k   # the batch size etcdbench diagnose wal found`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return run.Usagef("judge takes one file: etcdbench judge FIO.json")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := of.check(); err != nil {
				return err
			}
			th := verdict.Defaults()
			th.RunLonger = "fio --runtime" // judge ran nothing: the longer run is fio's
			if _, err := p99.resolve(cmd.Flags().Changed, &th); err != nil {
				return err
			}
			wal := fio.DefaultWALSize
			if cmd.Flags().Changed("wal-bs") {
				n, err := units.ParseSize(walBS)
				if err != nil || n <= 0 || n > 64<<20 {
					return run.Usagef("--wal-bs %q: want a size between 1 byte and 64m, such as 2300 or 8k", walBS)
				}
				wal = fio.WALSize{Bytes: n, Source: "--wal-bs " + walBS}
			}
			b, err := readInput(args[0])
			if err != nil {
				return err
			}
			fo, err := fio.Parse(b)
			if err != nil {
				return run.Usagef("%s: %v (want the output of fio --output-format=json)", args[0], err)
			}
			res, err := fio.Judge(fo, fio.JudgeOptions{Thresholds: th, Confidence: p99.confidence, Source: args[0], Args: commandLineWith(cmd, args), WALSize: wal})
			if err != nil { // no syncs, a failed job, bad bins: all in the file given
				return run.Usagef("%s: %v", args[0], err)
			}
			return conclude(cmd.Context(), stdout, of.output, res, nil)
		},
	}
	of.register(cmd.Flags())
	p99.register(cmd.Flags())
	cmd.Flags().StringVar(&walBS, "wal-bs", walBS, "the size of etcd's WAL batches (bytes, or 8k, 1m... as disk wal --bs) that fio's bs is compared with: the average your etcd writes (etcdbench diagnose wal) or the Kubernetes figure")
	return cmd
}

// readInput reads a file, or standard input for "-"; failure is a usage
// error naming the file.
func readInput(path string) ([]byte, error) {
	var (
		b   []byte
		err error
	)
	if path == "-" {
		b, err = io.ReadAll(os.Stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, run.Usagef("%v", err)
	}
	return b, nil
}

// commandLineWith is commandLine with the positional arguments, for
// commands whose input is a file.
func commandLineWith(cmd *cobra.Command, args []string) []string {
	return append(commandLine(cmd), args...)
}
