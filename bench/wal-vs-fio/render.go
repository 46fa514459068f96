package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"etcdbench/bench/internal/cmp"
)

// renderRound prints one round's runs and ratios.
func renderRound(w io.Writer, r round, total int) error {
	fmt.Fprintf(w, "round %d/%d (in this order: %s)\n", r.N, total, strings.Join(r.Order, ", "))
	const row = "%-18s %7s %8s %8s %8s %8s %8s %8s\n"
	fmt.Fprintf(w, row, "run", "syncs", "p50", "p99", "wall", "runtime", "CPU", "CPU/sync")
	ms := []measurement{r.Fio, r.Etcd}
	if r.Control != nil {
		ms = append(ms, *r.Control)
	}
	if r.Adaptive != nil {
		ms = append(ms, *r.Adaptive)
	}
	fd, fr := cmp.FmtDur, cmp.FmtRatio
	for i, m := range ms {
		fmt.Fprintf(w, row, m.Tool, strconv.FormatInt(m.Syncs, 10), fd(m.P50), fd(m.P99),
			fd(m.Wall), fd(m.Runtime), fd(m.CPU), fd(m.CPUPerSync()))
		if i == 1 {
			x := roundRatios(r)
			fmt.Fprintf(w, row, "  etcdbench/fio", fr(cmp.Ratio(r.Etcd.Syncs, r.Fio.Syncs)), fr(x.P50), fr(x.P99),
				fr(cmp.Ratio(r.Etcd.Wall, r.Fio.Wall)), fr(cmp.Ratio(r.Etcd.Runtime, r.Fio.Runtime)),
				fr(cmp.Ratio(r.Etcd.CPU, r.Fio.CPU)), fr(x.CPUPerSync))
		}
		if i == 2 && r.Control != nil {
			c := *r.Control
			fmt.Fprintf(w, row, "  control/fio", fr(cmp.Ratio(c.Syncs, r.Fio.Syncs)), fr(cmp.Ratio(c.P50, r.Fio.P50)), fr(cmp.Ratio(c.P99, r.Fio.P99)),
				fr(cmp.Ratio(c.Wall, r.Fio.Wall)), fr(cmp.Ratio(c.Runtime, r.Fio.Runtime)),
				fr(cmp.Ratio(c.CPU, r.Fio.CPU)), fr(cmp.Ratio(c.CPUPerSync(), r.Fio.CPUPerSync())))
		}
	}
	if r.Adaptive != nil && r.Adaptive.Stop != "" {
		fmt.Fprintf(w, "  adaptive stop: %s\n", r.Adaptive.Stop)
	}
	_, err := fmt.Fprintln(w)
	return err
}

// renderSummary prints the medians, the targets and whether they are met.
func renderSummary(w io.Writer, s summary) error {
	extra := []cmp.Extra{
		{Name: "syncs", Fio: strconv.FormatInt(s.Syncs[0], 10), Etcd: strconv.FormatInt(s.Syncs[1], 10)},
		{Name: "wall time", Fio: cmp.FmtDur(s.Wall[0]), Etcd: cmp.FmtDur(s.Wall[1])},
		{Name: "CPU time", Fio: cmp.FmtDur(s.CPU[0]), Etcd: cmp.FmtDur(s.CPU[1])},
	}
	if err := cmp.RenderSummary(w, s.Rounds, s.Rows, extra); err != nil {
		return err
	}
	if a := s.Adaptive; a != nil {
		fmt.Fprintf(w, "\nADAPTIVE mode (median): %d syncs in %s (wall %s), vs fio's fixed %d syncs in %s wall\n",
			a.Syncs, cmp.FmtDur(a.Runtime), cmp.FmtDur(a.Wall), a.FioSyncs, cmp.FmtDur(a.FioWall))
		fmt.Fprintf(w, "  stopped because: %s\n", strings.Join(a.Stops, "; "))
	}
	if err := renderPooled(w, s.Rounds, s.Pooled); err != nil {
		return err
	}
	return cmp.RenderFooter(w, s.Rows, targetSource)
}
