package tune

import (
	"context"
	"fmt"
	"io"
	"time"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdrun"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/scratch"
	"etcdbench/internal/session"
)

// Options are how a plan is measured.
type Options struct {
	// SaveDir, when set, is an existing directory every run's result is
	// saved in as JSON.
	SaveDir string
	// Args is the command line, recorded in every result.
	Args []string
	// Progress is a terminal for the progress lines, or nil.
	Progress io.Writer
}

// CheckSpace checks, before the first run, that every directory has room
// for the largest embedded etcd that will run in it.
func (p Plan) CheckSpace() error {
	need := map[string]int64{}
	for _, c := range p.Combinations {
		m := max(c.Config.Embedded.Members, 1)
		need[c.Config.Dir] = max(need[c.Config.Dir], session.EmbeddedSpace(m))
	}
	for dir, n := range need {
		if err := scratch.CheckFree(dir, n); err != nil {
			return fmt.Errorf("%w; free some space for the embedded etcd", err)
		}
	}
	return nil
}

// Measure runs every combination's rounds, each on a fresh embedded etcd
// whose scratch directory is gone before the next starts, saves each run
// when asked, and returns the summary and the whole tune as one result
// (every run's workload and the summary's), with how the tune ended.
// Without a finished run it returns only the error.
func (p Plan) Measure(ctx context.Context, o Options) (Summary, *result.Result, error) {
	total := len(p.Combinations) * p.Rounds
	tuneID := time.Now().UTC().Format("20060102T150405Z")
	// No scratch directory of its own: each run has one, gone before the
	// next starts.
	r := &run.Run{Result: run.NewResult(o.Args)}
	started := 0
	runOne := func(ctx context.Context, c Combination, sl Slot) (*etcdrun.Measurement, error) {
		l := c.Config.Load
		l.RunID = etcdload.NewRunID()
		started++
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "tune: run %d of %d: round %d, %s (%s)\n", started, total, sl.Round, c.ID(), c.Label())
		}
		// Three members: after the load, the leader is killed and the
		// time to a new one measured (the timeouts' worth).
		return etcdrun.MeasureRun(ctx, etcdrun.Spec{Load: l, Embedded: c.Config.Embedded, Dir: c.Config.Dir, Args: o.Args, Progress: o.Progress, Failover: c.Config.Embedded.Members == 3})
	}
	done := func(r Run) error {
		if o.SaveDir == "" {
			return nil
		}
		path, err := Save(o.SaveDir, FileName(tuneID, p.Combinations[r.Combination], r.Round), r.Result)
		if err == nil && o.Progress != nil {
			fmt.Fprintf(o.Progress, "tune: run %d of %d saved as %s\n", r.Order, total, path)
		}
		return err
	}
	runs, err := p.Execute(ctx, runOne, done)
	if len(runs) == 0 {
		return Summary{}, nil, err
	}
	sum := Summarize(p.Load, p.Combinations, p.Rounds, runs)
	wls, env := Combine(sum, runs)
	r.Result.Environment = env
	res, err := r.Finish(ctx, wls, err)
	return sum, res, err
}
