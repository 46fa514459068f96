package report

import (
	"fmt"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/units"
)

// dataChartResources is how many resources the bytes chart draws, the
// largest (by all revisions); the table lists every one.
const dataChartResources = 6

// dataResourceRows are the resources as table rows.
func dataResourceRows(d *result.Data) [][]string {
	var rows [][]string
	for _, r := range d.Resources {
		rows = append(rows, []string{r.Resource, fmt.Sprint(r.Keys), units.FormatBytes(r.Bytes), fmt.Sprint(r.Revisions), units.FormatBytes(r.BytesAllRevisions)})
	}
	return rows
}

var (
	dataResourceHead = []string{"resource", "keys", "bytes", "revisions", "bytes, all revisions"}
	dataKeyHead      = []string{"key", "revisions", "bytes"}
)

func dataKeyRows(ks []result.DataKey) [][]string {
	var rows [][]string
	for _, k := range ks {
		rows = append(rows, []string{k.Key, fmt.Sprint(k.Revisions), units.FormatBytes(k.Bytes)})
	}
	return rows
}

// dataLines are the db, the leases and the predictions in words, one
// line each.
func dataLines(d *result.Data) []string {
	db := d.DB
	out := []string{
		fmt.Sprintf("db: %s (file %s), %s in use, %s free in %d pages of %s, fill %.0f %%; revision %d, compacted at %d; %d keys live, %d revisions kept (%d deletions)",
			units.FormatBytes(db.SizeBytes), units.FormatBytes(db.FileBytes), units.FormatBytes(db.InUseBytes), units.FormatBytes(db.FreeBytes), db.FreePages,
			units.FormatBytes(db.PageSize), 100*db.Fill, db.Revision, db.CompactedRevision, d.Keys, d.Revisions, d.Tombstones),
	}
	if db.QuotaBytes > 0 {
		out = append(out, fmt.Sprintf("quota: %s, the db is %.0f %% of it", units.FormatBytes(db.QuotaBytes), 100*float64(db.SizeBytes)/float64(db.QuotaBytes)))
	}
	l := d.Leases
	out = append(out, fmt.Sprintf("leases: %d, %d live keys attached; TTLs %s .. %s, median %s", l.Count, l.KeysAttached,
		units.FormatDuration(time.Duration(l.TTLMinNs)), units.FormatDuration(time.Duration(l.TTLMaxNs)), units.FormatDuration(time.Duration(l.TTLMedianNs))))
	if p := d.Predicted; p != nil {
		out = append(out,
			fmt.Sprintf("predicted restart %s (%s)", units.FormatDuration(seconds(p.RestartSeconds)), p.RestartFrom),
			fmt.Sprintf("predicted defragmentation %s, the member blocked (%s)", units.FormatDuration(seconds(p.DefragSeconds)), p.DefragFrom),
			fmt.Sprintf("predicted snapshot send %s (%s)", units.FormatDuration(seconds(p.SnapshotSendSeconds)), p.SnapshotSendFrom))
	}
	return out
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// textData writes the data report: the lines, the resources and the top
// keys.
func textData(ew *errWriter, d *result.Data) {
	for _, l := range dataLines(d) {
		ew.printf("  %s\n", l)
	}
	table := func(title string, head []string, rows [][]string) {
		if len(rows) == 0 {
			return
		}
		ew.printf("\n  %s\n", title)
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  %s\t\n", strings.Join(head, "\t"))
		for _, r := range rows {
			fmt.Fprintf(tw, "  %s\t\n", strings.Join(r, "\t"))
		}
		if err := tw.Flush(); err != nil && ew.err == nil {
			ew.err = err
		}
	}
	table("resources", dataResourceHead, dataResourceRows(d))
	table("keys with the most revisions", dataKeyHead, dataKeyRows(d.TopKeys))
	table("largest keys", dataKeyHead, dataKeyRows(d.TopKeysBySize))
}

// dataTables are the data report's tables for the HTML page.
func dataTables(d *result.Data) []htmlTable {
	return []htmlTable{
		{Title: "Resources", Head: dataResourceHead, Rows: dataResourceRows(d), Note: "bytes are key + value; live at the latest revision, and of every revision kept since the last compaction"},
		{Title: "Keys with the most revisions", Head: dataKeyHead, Rows: dataKeyRows(d.TopKeys)},
		{Title: "Largest keys", Head: dataKeyHead, Rows: dataKeyRows(d.TopKeysBySize)},
	}
}

// dataChart draws the bytes of the largest resources: live at the latest
// revision beside all revisions kept, on a log scale.
func dataChart(id string, wl *result.Workload) *chart {
	d := wl.Data
	if d == nil || len(d.Resources) == 0 {
		return nil
	}
	rs := d.Resources[:min(len(d.Resources), dataChartResources)]
	hi := 1.0
	for _, r := range rs {
		hi = math.Max(hi, float64(r.BytesAllRevisions))
	}
	ymin, ymax := logRange(1, hi)
	c := &chart{
		id: id, title: "bytes per resource: live against all revisions kept",
		x: axis{min: 0, max: float64(len(rs)), format: fmtSeconds},
		y: axis{min: ymin, max: ymax, log: true, label: "bytes (log scale)", format: func(v float64) string { return units.FormatBytes(int64(v)) }},
	}
	if len(d.Resources) > len(rs) {
		c.note = fmt.Sprintf("the %d largest of %d resources; the table lists all", len(rs), len(d.Resources))
	}
	series := []struct {
		label string
		get   func(result.DataResource) int64
	}{
		{"live (latest revision)", func(r result.DataResource) int64 { return r.Bytes }},
		{"all revisions kept", func(r result.DataResource) int64 { return r.BytesAllRevisions }},
	}
	for i, r := range rs {
		c.x.ticks = append(c.x.ticks, float64(i)+0.5)
		name := r.Resource
		if len([]rune(name)) > 10 {
			name = string([]rune(name)[:9]) + "…"
		}
		c.x.tickText = append(c.x.tickText, name)
	}
	w := 0.8 / float64(len(series))
	for j, s := range series {
		color := palette[j%len(palette)]
		c.lines = append(c.lines, line{name: s.label, color: color}) // legend only
		for i, r := range rs {
			v := s.get(r)
			if v <= 0 {
				continue
			}
			x0 := float64(i) + 0.1 + float64(j)*w
			c.bars = append(c.bars, bar{x0: x0, x1: x0 + w, y: float64(v), color: color,
				title: fmt.Sprintf("%s %s: %s", r.Resource, s.label, units.FormatBytes(v))})
		}
	}
	return c
}
