package main

import (
	"fmt"
	"slices"
	"strings"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/units"
)

// op is one operation the bench compares: its name, how to read its
// prediction and its measurement from an observation, and whether the
// goal judges it (the others are its evidence: the same prediction
// against neighbouring figures).
type op struct {
	Name      string
	Slug      string // in figure names
	Predicted func(observation) float64
	Measured  func(observation) float64
	Judged    bool
}

func restartPredicted(o observation) float64 { return o.Predicted.RestartSeconds }
func defragPredicted(o observation) float64  { return o.Predicted.DefragSeconds }
func sendPredicted(o observation) float64    { return o.Predicted.SnapshotSendSeconds }

// ops are the rows of each etcd and db: the snapshot's prediction is of a
// send to a new member, judged against the leader's own metric of it.
var ops = []op{
	{"restart", "restart", restartPredicted, func(o observation) float64 { return o.Restart }, true},
	{"defrag", "defrag", defragPredicted, func(o observation) float64 { return o.Defrag }, true},
	{"snapshot send (leader's metric)", "snapshot_send", sendPredicted, func(o observation) float64 { return o.Send }, true},
	{"snapshot receive (new member's metric)", "snapshot_receive", sendPredicted, func(o observation) float64 { return o.Receive }, false},
	{"new member's fsync of the db (in its receive)", "snapshot_receive_fsync", sendPredicted, func(o observation) float64 { return o.ReceiveFsync }, false},
	{"new member's start to sent", "snapshot_send_wall", sendPredicted, func(o observation) float64 { return o.SendWall }, false},
	{"snapshot save (etcdctl)", "snapshot_save", sendPredicted, func(o observation) float64 { return o.Snapshot }, false},
}

// render is the table of predicted against measured per etcd, db and
// operation (medians over rounds, ratio predicted/measured with its
// range), the analysis' time and memory, and the figures it quotes.
func render(obs []observation, ans []analysis) (string, map[string]float64) {
	type key struct{ etcd, target string }
	var keys []key
	groups := map[key][]observation{}
	for _, o := range obs {
		k := key{o.Etcd, o.Target}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], o)
	}
	slices.SortStableFunc(keys, func(a, b key) int { return strings.Compare(a.etcd, b.etcd) })
	var b strings.Builder
	fmt.Fprintf(&b, "| etcd | db (in use) | revisions | WAL entries | operation | predicted | measured (range) | ratio (range) | within %.1fx |\n|---|---|---|---|---|---|---|---|---|\n", ratioGoal)
	figs := map[string]float64{}
	within, total := 0, 0
	for _, k := range keys {
		g := groups[k]
		s := g[0]
		for _, op := range ops {
			var pred, meas, ratios []float64
			for _, o := range g {
				pred, meas = append(pred, op.Predicted(o)), append(meas, op.Measured(o))
				ratios = append(ratios, op.Predicted(o)/op.Measured(o))
			}
			mlo, mhi := cmp.MinMax(meas)
			rlo, rhi := cmp.MinMax(ratios)
			r := cmp.Median(ratios)
			ok := r <= ratioGoal && r >= 1/ratioGoal
			verdict := "(not judged)"
			if op.Judged {
				total++
				if ok {
					within++
				}
				verdict = cmp.YesNo(ok)
			}
			fmt.Fprintf(&b, "| %s | %s (%s) | %d | %d | %s | %.2f s | %.2f s (%.2f-%.2f) | %.2f (%.2f-%.2f) | %s |\n",
				k.etcd, units.FormatBytes(s.DBBytes), units.FormatBytes(s.InUseBytes), s.Revisions, s.WALEntries, op.Name,
				cmp.Median(pred), cmp.Median(meas), mlo, mhi, r, rlo, rhi, verdict)
			slug := cmp.Slug(k.etcd+" "+k.target) + "_" + op.Slug
			figs[slug+"_ratio"], figs[slug+"_measured_s"], figs[slug+"_predicted_s"] = r, cmp.Median(meas), cmp.Median(pred)
		}
	}
	fmt.Fprintf(&b, "\n%d of %d medians within %.1fx (%s)\n", within, total, ratioGoal, goalSource)
	figs["within"], figs["compared"] = float64(within), float64(total)
	if len(ans) > 0 {
		b.WriteString(renderAnalyses(ans, figs))
	}
	return b.String(), figs
}

// renderAnalyses is the analysis' wall time and peak memory per etcd's
// largest db, medians over rounds with their ranges, against the goals.
func renderAnalyses(ans []analysis, figs map[string]float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n| analysis (--predict=false) | db | wall (range) | max RSS (range) | peak anonymous memory (range) | goals met |\n|---|---|---|---|---|---|\n")
	var etcds []string
	by := map[string][]analysis{}
	for _, a := range ans {
		if _, ok := by[a.Etcd]; !ok {
			etcds = append(etcds, a.Etcd)
		}
		by[a.Etcd] = append(by[a.Etcd], a)
	}
	for _, e := range etcds {
		var wall, rss, anon []float64
		for _, a := range by[e] {
			wall, rss, anon = append(wall, a.Wall), append(rss, float64(a.MaxRSS)), append(anon, float64(a.MaxAnon))
		}
		alo, ahi := cmp.MinMax(anon)
		wlo, whi := cmp.MinMax(wall)
		rlo, rhi := cmp.MinMax(rss)
		w, r := cmp.Median(wall), cmp.Median(rss)
		fmt.Fprintf(&b, "| %s | %s | %.1f s (%.1f-%.1f) | %s (%s-%s) | %s (%s-%s) | %s |\n", e, units.FormatBytes(by[e][0].DBBytes), w, wlo, whi,
			units.FormatBytes(int64(r)), units.FormatBytes(int64(rlo)), units.FormatBytes(int64(rhi)),
			units.FormatBytes(int64(cmp.Median(anon))), units.FormatBytes(int64(alo)), units.FormatBytes(int64(ahi)),
			goals(whi <= analysisWall, rhi <= analysisRSS, ahi <= analysisRSS))
		slug := cmp.Slug(e + " analysis")
		figs[slug+"_wall_s"], figs[slug+"_max_rss_mb"], figs[slug+"_max_anon_mb"] = w, r/1e6, cmp.Median(anon)/1e6
	}
	fmt.Fprintf(&b, "\n(%s; every round must meet them; max RSS counts the db's pages the analysis mapped, anonymous memory what it allocated)\n", speedSource)
	return b.String()
}

// goals says which of the analysis' goals every round met.
func goals(wall, rss, anon bool) string {
	switch {
	case wall && rss:
		return "yes"
	case wall && anon:
		return "time; memory only without the mapped db"
	case wall:
		return "time only"
	case rss:
		return "memory only"
	}
	return "NO"
}
