package diagnose

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

// LogsSpec is one `diagnose logs`: an etcd log, read from a file or from
// standard input.
type LogsSpec struct {
	// Path is the log file, or "-" for Stdin.
	Path  string
	Stdin io.Reader
	Args  []string
}

// Logs reads the log, diagnoses it with the rules and returns the
// diagnosis as a result. A log that cannot be opened, is a directory, is
// empty or holds no etcd log line is a usage error.
func Logs(ctx context.Context, s LogsSpec) (*result.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sum, err := ReadLogFile(s.Path, s.Stdin)
	if err != nil {
		return nil, err
	}
	res := run.NewResult(s.Args)
	ev := Evidence{Logs: sum, Notes: sum.Notes()}
	rules := Rules()
	fs := Diagnose(ev, verdict.DiagnoseDefaults(), rules)
	w := Workload("diagnose-logs", ev, fs, rules)
	w.Parameters["log"] = s.Path
	w.Notes = append(w.Notes, "the environment describes the machine etcdbench ran on, not the one that wrote the log")
	res.Environment = sysinfo.Collect("/", ".")
	res.Workloads = []result.Workload{w}
	res.Finish(time.Now().UTC())
	return res, nil
}

// ReadLogFile reads and summarises an etcd log: the file at path, or
// stdin for "-". A log that cannot be opened, is a directory, is empty or
// holds no etcd log line is a usage error.
func ReadLogFile(path string, stdin io.Reader) (*LogSummary, error) {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, run.Usagef("reading the log %s: %v", path, err)
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return nil, run.Usagef("%s is a directory: give a log file, or - for standard input (journalctl -u etcd | etcdbench diagnose logs -)", path)
		}
		r = f
	}
	sum, err := ReadLogs(r)
	if err != nil {
		return nil, fmt.Errorf("reading the log %s: %w", path, err)
	}
	if sum.Lines == 0 {
		return nil, run.Usagef("the log %s is empty", path)
	}
	if sum.Formats["other"] == sum.Lines {
		return nil, run.Usagef("no line of %s is an etcd log line (zap JSON, capnslog text or journalctl output of either)", path)
	}
	return sum, nil
}
