package main

import (
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"etcdbench/internal/run"
	"etcdbench/internal/verdict"
)

// TestOnlyEtcd: etcdproc's errors name no flag; each command adds its
// own, so trace (no --data-dir) never tells users to give --data-dir.
func TestOnlyEtcd(t *testing.T) {
	root := t.TempDir()
	proc := func(pid string) {
		d := filepath.Join(root, pid)
		if err := os.MkdirAll(filepath.Join(d, "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "comm"), []byte("etcd\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "cmdline"), []byte("/usr/bin/etcd\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const traceNone, walNone = "--pid PID", "--pid PID, or --data-dir DIR to read a stopped etcd's WAL"
	_, err := onlyEtcd(root, traceNone)
	if !run.IsUsage(err) || !strings.HasSuffix(err.Error(), "; give --pid PID") || strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("trace, no etcd: %v; want a usage error that names --pid, not --data-dir", err)
	}
	if _, err := onlyEtcd(root, walNone); !run.IsUsage(err) || !strings.Contains(err.Error(), "no etcd process found in "+root+"; give --pid PID, or --data-dir DIR") {
		t.Errorf("diagnose wal, no etcd: %v; want a usage error that names --pid and --data-dir", err)
	}
	proc("10")
	if pid, err := onlyEtcd(root, traceNone); err != nil || pid != 10 {
		t.Errorf("one etcd: pid %d, %v; want 10", pid, err)
	}
	proc("20")
	if _, err := onlyEtcd(root, traceNone); !run.IsUsage(err) || !strings.HasPrefix(err.Error(), "2 etcd processes: 10 (/usr/bin/etcd); 20 (/usr/bin/etcd); choose one with --pid") {
		t.Errorf("two etcds: %v; want a usage error listing both and naming --pid", err)
	}
}

func TestSpeedFlags(t *testing.T) {
	for _, tc := range []struct {
		name            string
		quick, thorough bool
		other           string
		otherGiven      bool
		want, err       string
	}{
		{"neither", false, false, "", false, "default", ""},
		{"quick", true, false, "", false, "quick", ""},
		{"thorough", false, true, "--preset", false, "thorough", ""},
		{"the other alone", false, false, "--preset", true, "default", ""},
		{"both", true, true, "", false, "", "--quick and --thorough are alternatives: give at most one"},
		{"quick and the other", true, false, "--preset", true, "", "--quick, --thorough and --preset are alternatives: give at most one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := speedFlags{quick: tc.quick, thorough: tc.thorough}
			got, err := f.name("default", tc.other, tc.otherGiven)
			switch {
			case tc.err != "" && (!run.IsUsage(err) || err.Error() != tc.err):
				t.Errorf("error %v, want the usage error %q", err, tc.err)
			case tc.err == "" && (err != nil || got != tc.want):
				t.Errorf("%q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestWithScheme(t *testing.T) {
	got, err := withScheme([]string{"a:2379", "https://b:2379", "http://c:2379", ""}, false, "--endpoints")
	if err != nil || strings.Join(got, " ") != "http://a:2379 https://b:2379 http://c:2379 " {
		t.Errorf("without TLS: %q, %v", got, err)
	}
	got, err = withScheme([]string{"a:2379", "https://b:2379"}, true, "--endpoints")
	if err != nil || strings.Join(got, " ") != "https://a:2379 https://b:2379" {
		t.Errorf("with TLS: %q, %v", got, err)
	}
	_, err = withScheme([]string{"a:2379", "http://c:2379"}, true, "--metrics-url")
	if !run.IsUsage(err) || !strings.HasPrefix(err.Error(), "--metrics-url http://c:2379 is plain HTTP") {
		t.Errorf("plain HTTP with TLS: %v, want a usage error naming the flag and the URL", err)
	}
}

func TestDirRequire(t *testing.T) {
	if err := (&dirFlag{path: "."}).require(dirWhat, ""); err != nil {
		t.Errorf("--dir given: %v", err)
	}
	var f dirFlag
	if err := f.require(dirWhat, ""); !run.IsUsage(err) || err.Error() != "--dir is required: "+dirWhat {
		t.Errorf("missing: %v", err)
	}
	if err := f.require(dirWhat, "--vary dir=A,B"); !run.IsUsage(err) || !strings.HasSuffix(err.Error(), "), or --vary dir=A,B") {
		t.Errorf("missing, with an alternative: %v", err)
	}
}

func TestP99Flags(t *testing.T) {
	for _, tc := range []struct {
		name, p99  string
		confidence float64
		changed    bool
		limit      float64 // the threshold after resolve, 0: an error
	}{
		{"defaults", "10ms", defaultConfidence, false, 0.010},
		{"given", "20ms", 0.99, true, 0.020},
		{"not a duration", "soon", defaultConfidence, true, 0},
		{"zero", "0", defaultConfidence, true, 0},
		{"confidence 1", "10ms", 1, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := p99Flags{walP99: tc.p99, confidence: tc.confidence}
			th := verdict.Defaults()
			_, err := f.resolve(func(string) bool { return tc.changed }, &th)
			switch {
			case tc.limit == 0 && !run.IsUsage(err):
				t.Errorf("error %v, want a usage error", err)
			case tc.limit != 0 && (err != nil || th.WALFsyncP99.Limit != tc.limit):
				t.Errorf("limit %v, %v; want %v", th.WALFsyncP99.Limit, err, tc.limit)
			}
		})
	}
}

// TestRunLongerFlagIsTheCommands: the advice of an undecided verdict
// names the flag that runs its own command longer, one it has (check's
// --thorough, capacity's --step-runtime), and none when the run is
// already the thorough one and has no cap on its time.
func TestRunLongerFlagIsTheCommands(t *testing.T) {
	for _, c := range []struct {
		name   string
		path   []string
		preset string
		want   string
	}{
		{"etcdbench with no command (check)", nil, "default", "--thorough"},
		{"check --quick", []string{"check"}, "quick", "--thorough"},
		{"check --thorough", []string{"check"}, "thorough", ""},
		{"capacity", []string{"capacity"}, "default", "--step-runtime"},
		{"disk capacity", []string{"disk", "capacity"}, "default", "--step-runtime"},
		{"disk wal", []string{"disk", "wal"}, "", "--runtime"},
		{"disk backend", []string{"disk", "backend"}, "default", "--runtime"},
		{"disk all", []string{"disk", "all"}, "default", "--thorough"},
		{"disk all --thorough", []string{"disk", "all"}, "thorough", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd, _, err := newRootCmd(os.Stdout, os.Stderr).Find(c.path)
			if err != nil {
				t.Fatal(err)
			}
			got := runLongerFlag(cmd, c.preset)
			if got != c.want {
				t.Fatalf("runLongerFlag(%q, %s) = %q, want %q", cmd.CommandPath(), c.preset, got, c.want)
			}
			if got != "" && cmd.Flags().Lookup(strings.TrimPrefix(got, "--")) == nil {
				t.Fatalf("%s has no flag %s", cmd.CommandPath(), got)
			}
		})
	}
}

// The disk workloads' settings show their values per budget, never "from
// the preset".
func TestDiskSettingsShowDefaults(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	for _, c := range []string{"capacity", "backend"} {
		cmd, _, err := root.Find(map[string][]string{"capacity": {"capacity"}, "backend": {"disk", "backend"}}[c])
		if err != nil {
			t.Fatal(err)
		}
		usage := cmd.Flags().FlagUsages()
		if strings.Contains(usage, "from the preset") {
			t.Errorf("%s: %s", c, usage)
		}
	}
	cmd, _, _ := root.Find([]string{"capacity"})
	if u := cmd.Flags().Lookup("resolution").Usage; !strings.Contains(u, "(default 0.1, --quick 0.2, --thorough 0.05)") {
		t.Errorf("--resolution: %q", u)
	}
}

// Help in one form: every one-line help a capitalised phrase without a
// full stop, short enough for one line of the command list; every command
// that runs something states its exit codes.
func TestHelpInOneForm(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || c.HasParent() && c.Parent().Name() == "completion" {
			return
		}
		path := c.CommandPath()
		if s := c.Short; s == "" || !unicode.IsUpper([]rune(s)[0]) || strings.HasSuffix(s, ".") || len(s) > 100 {
			t.Errorf("%s: one-line help %q: want a capitalised phrase of at most 100 characters, no full stop", path, s)
		}
		// A group whose own run only shows its help has no flags of its own.
		runs := c.RunE != nil && (!c.HasSubCommands() || c.LocalNonPersistentFlags().HasFlags())
		if runs && !strings.Contains(c.Long, "Exit codes:") {
			t.Errorf("%s runs something and its help states no exit codes", path)
		}
	}
	walk(newRootCmd(io.Discard, io.Discard))
}

// disk wal takes --quick and --thorough as every disk workload does: the
// preset's run where the command line does not set it.
func TestWALQuick(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		runtime time.Duration
		min     time.Duration
	}{
		{nil, time.Minute, 10 * time.Second},
		{[]string{"--quick"}, 20 * time.Second, 3 * time.Second},
		{[]string{"--quick", "--runtime", "7s"}, 7 * time.Second, 3 * time.Second},
		{[]string{"--thorough"}, 5 * time.Minute, 30 * time.Second},
	} {
		f := defaultWALFlags()
		fs := pflag.NewFlagSet("wal", pflag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(append([]string{"--dir", t.TempDir()}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		o, err := f.options(fs.Changed, io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if o.cfg.Runtime != tc.runtime || o.cfg.Rule.MinDuration != tc.min {
			t.Errorf("%v: runtime %v, min %v; want %v, %v", tc.args, o.cfg.Runtime, o.cfg.Rule.MinDuration, tc.runtime, tc.min)
		}
	}
	f := defaultWALFlags()
	fs := pflag.NewFlagSet("wal", pflag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse([]string{"--quick", "--thorough"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.options(fs.Changed, io.Discard); err == nil {
		t.Error("--quick and --thorough together: no usage error")
	}
}
