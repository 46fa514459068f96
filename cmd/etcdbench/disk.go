package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/capacity/diskmodel"
	"etcdbench/internal/disk"
	"etcdbench/internal/run"
	"etcdbench/internal/verdict"
)

// diskFlags are the flags every `disk <workload>` and `disk all` share.
type diskFlags struct {
	dir        dirFlag
	preset     string
	speed      speedFlags
	out        outputFlags
	prog       progressFlags
	params     map[string]*string // the workload's own settings
	paramOrder []string
	presetName string // the preset resolve chose
}

func (f *diskFlags) register(fs *pflag.FlagSet) {
	f.dir.register(fs, "", dirUsage)
	f.out.register(fs)
	fs.StringVar(&f.preset, "preset", "default", "defaults to start from: "+presetNames())
	f.speed.register(fs, "same as --preset quick", "same as --preset thorough")
	f.prog.register(fs)
}

func presetNames() string {
	var names []string
	for _, p := range disk.Presets() {
		names = append(names, fmt.Sprintf("%s (disk all: %s)", p.Name, p.Budget))
	}
	return strings.Join(names, ", ")
}

// resolve checks the shared flags and returns the preset.
func (f *diskFlags) resolve(cmd *cobra.Command) (disk.Preset, error) {
	if err := f.dir.require(dirWhat, ""); err != nil {
		return disk.Preset{}, err
	}
	if err := f.out.check(); err != nil {
		return disk.Preset{}, err
	}
	name, err := f.speed.name(f.preset, "--preset", cmd.Flags().Changed("preset"))
	if err != nil {
		return disk.Preset{}, err
	}
	p, err := disk.PresetNamed(name)
	if err != nil {
		return p, run.Usage(err)
	}
	f.presetName = name
	return p, nil
}

// set returns the workload settings given on the command line.
func (f *diskFlags) set(cmd *cobra.Command) map[string]string {
	m := map[string]string{}
	for _, name := range f.paramOrder {
		if cmd.Flags().Changed(name) {
			m[name] = *f.params[name]
		}
	}
	return m
}

// run runs the workloads ws and reports them.
func (f *diskFlags) run(cmd *cobra.Command, ws []disk.Named, stdout, stderr io.Writer, spaceHint string) error {
	th := verdict.Defaults()
	th.RunLonger = runLongerFlag(cmd, f.presetName)
	return runDisk(cmd.Context(), disk.Suite{
		Dir: f.dir.path, Workloads: ws, Thresholds: th, Args: commandLine(cmd),
		Progress: f.prog.terminal(stderr, f.out.output), SpaceHint: spaceHint,
	}, f.out.output, stdout)
}

// build turns a spec's bad-setting errors into usage errors.
func build(spec disk.Spec, p disk.Preset, set map[string]string) (disk.Workload, error) {
	w, err := spec.Build(p, disk.NewSettings(set))
	if errors.Is(err, disk.ErrBadParam) {
		return nil, run.Usage(err)
	}
	return w, err
}

// newWorkloadCmd makes `disk <name>` from a registered spec.
func newWorkloadCmd(spec disk.Spec, stdout, stderr io.Writer) *cobra.Command {
	cmd, _ := workloadCmd(spec, stdout, stderr)
	return cmd
}

// workloadCmd is newWorkloadCmd, with the flags it parses into.
func workloadCmd(spec disk.Spec, stdout, stderr io.Writer) (*cobra.Command, *diskFlags) {
	f := &diskFlags{params: map[string]*string{}}
	cmd := &cobra.Command{
		Use:   spec.Name + " --dir DIR",
		Short: spec.Short,
		Long:  spec.Long() + exitCodesHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := f.resolve(cmd)
			if err != nil {
				return err
			}
			w, err := build(spec, p, f.set(cmd))
			if err != nil {
				return err
			}
			return f.run(cmd, []disk.Named{{Name: spec.Name, Workload: w}}, stdout, stderr, spec.SpaceHint())
		},
	}
	f.register(cmd.Flags())
	defaults := spec.DefaultsText()
	for _, prm := range spec.Params {
		f.params[prm.Name] = cmd.Flags().String(prm.Name, "", prm.Usage+defaults(prm.Name))
		f.paramOrder = append(f.paramOrder, prm.Name)
	}
	return cmd, f
}

// newAllCmd makes `disk all`: every registered workload, one report.
func newAllCmd(stdout, stderr io.Writer) *cobra.Command {
	f := &diskFlags{}
	var names []string
	for _, s := range diskmodel.Specs() {
		if s.InAll {
			names = append(names, s.Name)
		}
	}
	cmd := &cobra.Command{
		Use:   "all --dir DIR",
		Short: "Run every disk workload in turn, with one verdict table",
		Long: `Runs every disk workload on DIR, one after the other, and reports them
together with one combined verdict table. The WAL is measured idle first, then
under load (wal-under-load compares with the idle figures). --quick, the
default and --thorough choose the sizes and durations (see 'etcdbench disk
<workload> --help' for each workload's settings; 'disk all' uses the preset's).` + exitCodesHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := f.resolve(cmd)
			if err != nil {
				return err
			}
			var ws []disk.Named
			for _, spec := range diskmodel.Specs() {
				if !spec.InAll {
					continue
				}
				w, err := build(spec, p, nil)
				if err != nil {
					return err
				}
				ws = append(ws, disk.Named{Name: spec.Name, Workload: w})
			}
			hint := "free some space, or use --quick (the largest workload is the one that needs it)"
			return f.run(cmd, ws, stdout, stderr, hint)
		},
	}
	f.register(cmd.Flags())
	return cmd
}
