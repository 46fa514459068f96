package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"etcdbench/bench/internal/cmp"
)

// merged prints the table of the --from files, their rounds merged by
// storage (in the order first seen), and saves it with --results.
func merged(o options, stdout io.Writer) error {
	var rows []row
	var started time.Time
	ramdisk := false
	index := map[string]int{}
	for _, f := range strings.Split(o.From, ",") {
		var in resultsFile
		b, err := os.ReadFile(o.Abs(f))
		if err == nil {
			err = json.Unmarshal(b, &in)
		}
		if err != nil {
			return cmp.UsageError{Err: fmt.Errorf("--from %s: %w", f, err)}
		}
		if started.IsZero() || in.Started.Before(started) {
			started = in.Started
		}
		ramdisk = ramdisk || in.Params.RAMDisk > 0
		for _, r := range in.Rows {
			i, ok := index[r.Storage]
			if !ok {
				index[r.Storage], i = len(rows), len(rows)
				rows = append(rows, row{Storage: r.Storage, About: r.About, Skipped: r.Skipped})
			}
			rows[i].Rounds = append(rows[i].Rounds, r.Rounds...)
		}
	}
	for i := range rows {
		sort.SliceStable(rows[i].Rounds, func(a, b int) bool { return rows[i].Rounds[a].N < rows[i].Rounds[b].N })
	}
	var table bytes.Buffer
	if err := printTable(io.MultiWriter(stdout, &table), rows); err != nil {
		return err
	}
	if ramdisk {
		o.RAMDisk = 1
	}
	return saveResult(o, rows, table.String(), started)
}

// saveResult writes the --results file: the table as printed and, per
// storage, the estimate's median and its ratio to each real etcd's
// highest passing rate (median, min, max over the rounds) and how far the
// two real etcds disagree (truthsRatios: median, max); how many
// estimates lie in their real etcd's range (summary.inRange) and how many
// meet the goal (summary.meets); and the paired rounds' figures
// (pairedFigures).
func saveResult(o options, rows []row, table string, started time.Time) error {
	if o.Results == "" {
		return nil
	}
	figures := map[string]float64{}
	rounds, within, ratios, undefined, inRange, met := 0, 0, 0, 0, 0, 0
	for _, r := range rows {
		if r.Skipped != "" {
			continue
		}
		s := summarize(r)
		rounds = max(rounds, len(r.Rounds))
		st := cmp.Slug(r.Storage)
		if len(s.estimate) > 0 {
			figures[st+"_estimate"] = median(s.estimate)
		}
		if v := truthsRatios(r); len(v) > 0 && !math.IsInf(median(v), 0) {
			figures[st+"_etcds_disagree"] = median(v)
			if hi := slices.Max(v); !math.IsInf(hi, 0) {
				figures[st+"_etcds_disagree_max"] = hi
			}
		}
		for _, k := range kindNames {
			if in, ok := s.inRange(k); ok && in {
				inRange++
			}
			if m, _, ok := s.meets(k); ok && m {
				met++
			}
			v := s.ratios[k]
			if len(v) == 0 {
				continue
			}
			lo, hi := slices.Min(v), slices.Max(v)
			m := median(v)
			if math.IsNaN(m) {
				undefined++
				continue
			}
			// A median of +Inf (an estimate where the real etcd carried
			// nothing) counts as a miss; JSON has no Inf, so it has no
			// figure.
			ratios++
			if m <= goal && m >= 1/goal {
				within++
			}
			key := st + "_" + cmp.Slug(k) + "_ratio"
			for k, x := range map[string]float64{key: m, key + "_min": lo, key + "_max": hi} {
				if !math.IsInf(x, 0) {
					figures[k] = x
				}
			}
		}
	}
	figures["ratios"], figures["ratios_within_goal"], figures["ratios_undefined"] = float64(ratios), float64(within), float64(undefined)
	for k, v := range pairedFigures(summarizePaired(rows)) {
		figures[k] = v
	}
	figures["estimates_in_truth_range"], figures["goal_met"] = float64(inRange), float64(met)
	source := "measured: " + strings.Join(append([]string{"bench/" + name + "/run"}, o.Args...), " ")
	dir := o.Dir
	if dir == "" {
		dir = os.TempDir()
	}
	machine := cmp.Machine(dir)
	if o.RAMDisk > 0 {
		machine += ", the storages on an ext4 RAM disk (a loop device over /dev/shm)"
	}
	res := cmp.Result{Bench: name, Source: source, Machine: machine, Rounds: rounds, Figures: figures, Table: strings.TrimLeft(table, "\n")}
	load, err := cmp.LoadAverage()
	if err != nil {
		return err
	}
	return cmp.SaveResult(o.Abs(o.Results), res, load, started)
}
