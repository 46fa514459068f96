package cmp

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Column is one column of a round's table.
type Column struct {
	Head  string
	Value func(Measurement) string
}

// Labels name the two sides of a comparison's pairs in its tables.
type Labels struct {
	Subject string // the Etcd side of a Pair, e.g. "etcdbench"
	Base    string // the Fio side, e.g. "fio"
}

// DefaultLabels are etcdbench against fio.
var DefaultLabels = Labels{Subject: "etcdbench", Base: "fio"}

func (l Labels) orDefault() Labels {
	if l.Subject == "" || l.Base == "" {
		return DefaultLabels
	}
	return l
}

// RenderRound prints one round of a paired comparison: a line per run in
// the order they ran, then a line per pair with its ratios etcdbench/fio.
func RenderRound(w io.Writer, r Round, total int, cols []Column, pairs []Pair, ms []Metric) error {
	return RenderRoundLabeled(w, r, total, cols, pairs, ms, DefaultLabels)
}

// RenderRoundLabeled is RenderRound with other names for the two sides.
func RenderRoundLabeled(w io.Writer, r Round, total int, cols []Column, pairs []Pair, ms []Metric, l Labels) error {
	l = l.orDefault()
	fmt.Fprintf(w, "round %d/%d (in this order)\n", r.N, total)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	heads := []string{"run"}
	for _, c := range cols {
		heads = append(heads, c.Head)
	}
	fmt.Fprintln(tw, strings.Join(heads, "\t")+"\t")
	for _, name := range r.Order {
		m := r.Runs[name]
		cells := []string{name}
		for _, c := range cols {
			cells = append(cells, c.Value(m))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range pairs {
		if _, ok := r.Runs[p.Etcd]; !ok {
			continue
		}
		var parts []string
		for i, x := range Ratios(r, p, ms) {
			parts = append(parts, ms[i].Name+" "+FmtRatio(x))
		}
		fmt.Fprintf(w, "  %s/%s, %s: %s\n", l.Subject, l.Base, p.Name, strings.Join(parts, ", "))
	}
	_, err := fmt.Fprintln(w)
	return err
}

// DurColumn is a column that prints a duration of the run with FmtDur.
func DurColumn(head string, f func(Measurement) time.Duration) Column {
	return Column{Head: head, Value: func(m Measurement) string { return FmtDur(f(m)) }}
}

// TimeColumns are the times every paired comparison shows of a run: the
// tool's timed part, fork to exit, the child's CPU, the CPU of fio's
// prepare-only run (its start-up) and etcdbench's own CPU of its timed
// part.
func TimeColumns() []Column {
	return []Column{
		DurColumn("runtime", func(m Measurement) time.Duration { return m.Runtime }),
		DurColumn("wall", func(m Measurement) time.Duration { return m.Wall }),
		DurColumn("CPU", func(m Measurement) time.Duration { return m.CPU }),
		DurColumn("fio start-up CPU", func(m Measurement) time.Duration {
			if m.Base == nil {
				return 0
			}
			return m.Base.CPU
		}),
		DurColumn("etcdbench self CPU", func(m Measurement) time.Duration { return m.SelfCPU }),
	}
}
