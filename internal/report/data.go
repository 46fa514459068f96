package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/units"
)

// dataChartResources is how many resources the bytes chart draws, the
// largest (by all revisions); the table lists every one.
const dataChartResources = 6

// dataResourceRows are the resources as table rows, with what a LIST
// of each costs the member's memory when that was predicted.
func dataResourceRows(d *result.Data) [][]string {
	var rows [][]string
	for _, r := range d.Resources {
		row := []string{r.Resource, fmt.Sprint(r.Keys), units.FormatBytes(r.Bytes), fmt.Sprint(r.Revisions), units.FormatBytes(r.BytesAllRevisions)}
		if d.Memory != nil {
			row = append(row, units.FormatBytes(r.ListMemoryBytes), units.FormatBytes(r.ListMemoryPagedBytes))
		}
		rows = append(rows, row)
	}
	return rows
}

// dataResourceHeadOf is the resources' table head.
func dataResourceHeadOf(d *result.Data) []string {
	head := []string{"resource", "keys", "bytes", "revisions", "bytes, all revisions"}
	if d.Memory != nil {
		head = append(head, "full LIST's memory", "paged LIST's memory")
	}
	return head
}

var dataKeyHead = []string{"key", "revisions", "bytes"}

func dataKeyRows(ks []result.DataKey) [][]string {
	var rows [][]string
	for _, k := range ks {
		rows = append(rows, []string{k.Key, fmt.Sprint(k.Revisions), units.FormatBytes(k.Bytes)})
	}
	return rows
}

// dataLines are the db and the leases in words, one line each (the
// predictions, with what each comes from, are the workload's figures).
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
	if m := d.Memory; m != nil {
		fits, limit := "how many full LISTs fit is not known", fmt.Sprintf("its limit not known (%s; give it with --memory-limit)", m.LimitFrom)
		if m.ConcurrentFullLists >= 0 {
			fits, limit = fmt.Sprintf("%d full LISTs of %s at once fit", m.ConcurrentFullLists, m.Resource), fmt.Sprintf("limit %s (%s)", units.FormatBytes(m.LimitBytes), m.LimitFrom)
		}
		out = append(out,
			fmt.Sprintf("memory: %s; %s, idle %s (%s)", fits, limit, units.FormatBytes(m.IdleBytes), m.IdleFrom),
			fmt.Sprintf("memory per LIST: one full LIST of %s peaks at %s; from %s", m.Resource, units.FormatBytes(m.FullListPeakBytes), m.ProbeFrom))
	}
	return out
}

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
	table("resources", dataResourceHeadOf(d), dataResourceRows(d))
	table("keys with the most revisions", dataKeyHead, dataKeyRows(d.TopKeys))
	table("largest keys", dataKeyHead, dataKeyRows(d.TopKeysBySize))
}

// dataTables are the data report's tables for the HTML page.
func dataTables(d *result.Data) []htmlTable {
	return []htmlTable{
		{Title: "Resources", Head: dataResourceHeadOf(d), Rows: dataResourceRows(d), Note: "bytes are key + value; live at the latest revision, and of every revision kept since the last compaction; a LIST's memory is what it adds to the member's resident memory at its peak (predicted)"},
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
	resourceBars(c, rs, 0, []resourceSeries{
		{"live (latest revision)", func(r result.DataResource) int64 { return r.Bytes }},
		{"all revisions kept", func(r result.DataResource) int64 { return r.BytesAllRevisions }},
	})
	return c
}

// dataMemoryChart draws, for the resources that cost most, the member's
// resident memory at the peak of one full LIST (idle memory beneath)
// and of a paginated one, against its memory limit.
func dataMemoryChart(id string, wl *result.Workload) *chart {
	d := wl.Data
	if d == nil || d.Memory == nil || len(d.Resources) == 0 {
		return nil
	}
	m := d.Memory
	rs := slices.Clone(d.Resources)
	slices.SortStableFunc(rs, func(a, b result.DataResource) int { return cmp.Compare(b.ListMemoryBytes, a.ListMemoryBytes) })
	rs = rs[:min(len(rs), dataChartResources)]
	hi := float64(max(m.LimitBytes, m.IdleBytes))
	for _, r := range rs {
		hi = math.Max(hi, float64(m.IdleBytes+r.ListMemoryBytes))
	}
	c := &chart{
		id: id, title: "the member's memory at the peak of one LIST, against its limit",
		x:    axis{min: 0, max: float64(len(rs)), format: fmtSeconds},
		y:    axis{min: 0, max: hi * 1.1, label: "resident memory", format: func(v float64) string { return units.FormatBytes(int64(v)) }},
		note: fmt.Sprintf("idle %s (%s); the limit %s (%s)", units.FormatBytes(m.IdleBytes), m.IdleFrom, units.FormatBytes(m.LimitBytes), m.LimitFrom),
	}
	if m.LimitBytes > 0 {
		c.hmarks = append(c.hmarks, mark{at: float64(m.LimitBytes), label: "limit " + units.FormatBytes(m.LimitBytes), color: colorThreshold})
	}
	resourceBars(c, rs, m.IdleBytes, []resourceSeries{
		{"one full LIST", func(r result.DataResource) int64 { return r.ListMemoryBytes }},
		{"one paginated LIST", func(r result.DataResource) int64 { return r.ListMemoryPagedBytes }},
	})
	return c
}

// resourceSeries is a figure of each resource, drawn as a bar each.
type resourceSeries struct {
	label string
	get   func(result.DataResource) int64
}

// resourceBars names rs on c's x axis and draws each series as a bar per
// resource, side by side, at base plus its figure (a figure of 0 or less
// draws none).
func resourceBars(c *chart, rs []result.DataResource, base int64, series []resourceSeries) {
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
			c.bars = append(c.bars, bar{x0: x0, x1: x0 + w, y: float64(base + v), color: color,
				title: fmt.Sprintf("%s, %s: %s", r.Resource, s.label, units.FormatBytes(base+v))})
		}
	}
}
