package run

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/scratch"
	"etcdbench/internal/sysinfo"
)

// Run is one measurement's envelope: the result record being filled and,
// for runs that write, the scratch directory they write in.
type Run struct {
	// Result is the record every workload of the run goes into.
	Result *result.Result
	// Dir is the absolute path of the directory under test ("" without a
	// scratch directory).
	Dir string
	// Scratch is the run's private directory inside Dir (nil without one).
	Scratch *scratch.Dir
	// Stale are the scratch directories of killed runs removed on opening.
	Stale []string
}

// New starts the result record for the command line args, with no
// scratch directory: a run against an external cluster, or one that only
// reads. Its environment is this machine's, seen from the working
// directory.
func New(args []string) *Run {
	r := &Run{Result: NewResult(args)}
	r.Result.Environment = sysinfo.Collect("/", ".")
	return r
}

// NewResult starts a result record for the command line args.
func NewResult(args []string) *result.Result {
	return &result.Result{
		Schema:    result.SchemaID,
		Tool:      result.Tool{Name: "etcdbench", Version: result.Version, GoVersion: runtime.Version(), Args: args},
		StartedAt: time.Now().UTC(),
	}
}

// Open checks dir and its free space (need bytes; hint says what to do
// when it is short), creates the scratch directory in it, removing the
// ones killed runs left, and starts the result record for args with the
// environment of dir. Close must be deferred on success.
func Open(dir string, need int64, hint string, args []string) (*Run, error) {
	abs, err := scratch.Check(dir)
	if err != nil {
		return nil, err
	}
	if err := scratch.CheckFree(abs, need); err != nil {
		return nil, fmt.Errorf("%w; %s", err, hint)
	}
	sd, stale, err := scratch.Create(abs)
	if err != nil {
		return nil, err
	}
	r := &Run{Result: NewResult(args), Dir: abs, Scratch: sd, Stale: stale}
	r.Result.Environment = sysinfo.Collect("/", abs)
	return r, nil
}

// Close removes the scratch directory; when that fails and *errp is nil,
// the failure becomes *errp. Deferred as defer r.Close(&err), it removes
// the directory on every path out of the run, before anything is
// reported.
func (r *Run) Close(errp *error) {
	if r.Scratch == nil {
		return
	}
	if err := r.Scratch.Remove(); err != nil && *errp == nil {
		*errp = err
	}
}

// StaleNotes are the notes that say which stale scratch directories were
// removed.
func (r *Run) StaleNotes() []string {
	var notes []string
	for _, p := range r.Stale {
		notes = append(notes, "removed a scratch directory left by a killed run: "+p)
	}
	return notes
}

// Interrupted reports whether err ended the run because ctx was
// cancelled (Ctrl-C, SIGTERM): the run then reports what it measured.
func Interrupted(ctx context.Context, err error) bool {
	return ctx.Err() != nil && err != nil
}

// errNothingRan is returned when a run ended with no workload and no
// error.
var errNothingRan = errors.New("no workload ran")

// Finish puts the workloads wls into the result, with the stale-directory
// notes on the first, marks an interrupted run and stamps the end time.
// err is how the run ended: a run that ended in an error with nothing
// measured returns only the error; otherwise the result is returned with
// err (an interrupted run's partial result goes with the context's error).
// Callers that drop partial workloads on an error do so before Finish.
func (r *Run) Finish(ctx context.Context, wls []result.Workload, err error) (*result.Result, error) {
	interrupted := Interrupted(ctx, err)
	if len(wls) == 0 && !interrupted {
		if err == nil {
			err = errNothingRan
		}
		return nil, err
	}
	if len(wls) > 0 {
		wls[0].Notes = append(wls[0].Notes, r.StaleNotes()...)
	}
	r.Result.Workloads = wls
	r.Result.Interrupted = interrupted
	r.Result.Finish(time.Now().UTC())
	return r.Result, err
}
