package cmp

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Column is one column of a round's table.
type Column struct {
	Head  string
	Value func(Measurement) string
}

// RenderRound prints one round of a paired comparison: a line per run in
// the order they ran, then a line per pair with its ratios etcdbench/fio.
func RenderRound(w io.Writer, r Round, total int, cols []Column, pairs []Pair, ms []Metric) error {
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
		fmt.Fprintf(w, "  etcdbench/fio, %s: %s\n", p.Name, strings.Join(parts, ", "))
	}
	_, err := fmt.Fprintln(w)
	return err
}
