package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"time"

	"etcdbench/internal/units"
)

// halo keeps a reference line's label readable over bars and grid lines.
const halo = ` stroke="#fff" stroke-width="3" stroke-linejoin="round" paint-order="stroke"`

// The charts are drawn by hand as inline SVG: no script, no library, no
// network. A chart has a fixed viewBox and scales with the page (CSS width
// 100%), so the same markup reads on a phone and on a desktop.

const (
	chartW, chartH           = 520, 270
	padL, padR, padT, padB   = 80, 24, 40, 44
	plotW, plotH             = chartW - padL - padR, chartH - padT - padB
	maxChartPoints           = 600 // longer series are thinned to this many points
	colorThreshold           = "#c0392b"
	colorStall               = "#e74c3c"
	colorGrid                = "#d5d8dc"
	colorAxis                = "#566573"
	svgFont                  = "font-family=\"system-ui,-apple-system,'Segoe UI',Roboto,sans-serif\""
	svgNS                    = "http://www.w3.org/2000/svg"
	axisTimeLabel            = "seconds since the start"
	axisLatencyLabel         = "latency (log scale)"
	cdfNinesMax              = 5 // the CDF's y axis ends at 99.999 %
	histogramBinsPerDecade   = 10
	percentileStepsPerDecade = 20
	titleY, titleLineH       = 16, 17 // the title's first baseline and its line height
	legendBelowTitle         = 17     // from the title's last baseline to the legend's
	// titleChars is how many characters of the 14px bold title fit between
	// the plot's left edge and the chart's right edge (about 8.6 each).
	titleChars = (chartW - padL - 8) * 10 / 86
)

// palette colours the lines of a chart; CDFs of compared runs take them in
// order.
var palette = []string{"#2471a3", "#d68910", "#229954", "#8e44ad", "#17a589", "#cb4335", "#5d6d7e", "#a04000"}

// axis maps data values to one dimension of the plot.
type axis struct {
	min, max float64
	log      bool
	label    string
	format   func(float64) string
	ticks    []float64 // computed when nil
	tickText []string  // labels for ticks, when not format(tick)
}

func (a *axis) pos(v float64, length float64) float64 {
	lo, hi := a.min, a.max
	if a.log {
		if v <= 0 {
			v = lo
		}
		v, lo, hi = math.Log10(v), math.Log10(lo), math.Log10(hi)
	}
	if hi <= lo {
		return 0
	}
	f := (v - lo) / (hi - lo)
	return math.Max(0, math.Min(1, f)) * length
}

// niceTicks returns about n round values (1, 2, 5 times a power of ten)
// covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if hi <= lo {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	var t []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		t = append(t, math.Round(v/step)*step)
	}
	return t
}

// decadeTicks returns the powers of ten within [lo, hi].
func decadeTicks(lo, hi float64) []float64 {
	var t []float64
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		v := math.Pow(10, e)
		if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
			t = append(t, v)
		}
	}
	return t
}

// logRange widens [lo, hi] to whole decades for a log axis.
func logRange(lo, hi float64) (float64, float64) {
	if lo <= 0 {
		lo = 1
	}
	if hi < lo {
		hi = lo
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

// line is one polyline of a chart.
type line struct {
	name   string
	color  string
	points [][2]float64
	dashed bool
}

// bar is one vertical bar from x0 to x1 with height y.
type bar struct {
	x0, x1, y float64
	color     string
	title     string // tooltip
	faint     bool   // paler: a bar that stands for less than the others (a partial second)
}

// mark is a reference line across the plot at a value of one axis.
type mark struct {
	at    float64
	label string
	color string
	// inLegend names the line in the legend instead of on the plot, for a
	// line that runs through bars its label would cover.
	inLegend bool
}

// chart is one SVG figure.
type chart struct {
	id, title string
	x, y      axis
	lines     []line
	bars      []bar
	vmarks    []mark // vertical lines at x values
	hmarks    []mark // horizontal lines at y values
	bands     [][2]float64
	note      string // shown under the plot, e.g. what a red band means
}

// svg renders the chart. Every string from the result is escaped.
func (c *chart) svg() string {
	var b strings.Builder
	esc := html.EscapeString
	titles := wrapWords(c.title, titleChars)
	extra := titleLineH * (len(titles) - 1) // a long title takes more lines and pushes the plot down
	fmt.Fprintf(&b, `<svg xmlns="%s" class="chart" id="%s" viewBox="0 0 %d %d" role="img" aria-label="%s" %s font-size="13">`,
		svgNS, esc(c.id), chartW, chartH+extra, esc(c.title), svgFont)
	fmt.Fprintf(&b, `<title>%s</title>`, esc(c.title))
	for i, t := range titles {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="14" font-weight="600" fill="currentColor">%s</text>`, padL, titleY+i*titleLineH, esc(t))
	}
	fmt.Fprintf(&b, `<g transform="translate(%d,%d)">`, padL, padT+extra)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="none" stroke="%s"/>`, plotW, plotH, colorGrid)
	xp := func(v float64) float64 { return c.x.pos(v, plotW) }
	yp := func(v float64) float64 { return plotH - c.y.pos(v, plotH) }
	for _, bd := range c.bands {
		x0, x1 := xp(bd[0]), xp(bd[1])
		fmt.Fprintf(&b, `<rect class="stall" x="%.1f" y="0" width="%.1f" height="%d" fill="%s" fill-opacity="0.15"/>`, x0, math.Max(x1-x0, 1.5), plotH, colorStall)
	}
	c.grid(&b, xp, yp)
	for _, br := range c.bars {
		x0, x1, y := xp(br.x0), xp(br.x1), yp(br.y)
		w := math.Max(x1-x0-0.5, 0.8)
		faint := ""
		if br.faint {
			faint = ` fill-opacity="0.45"`
		}
		fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"%s><title>%s</title></rect>`,
			x0, y, w, math.Max(plotH-y, 0), br.color, faint, esc(br.title))
	}
	for _, l := range c.lines {
		if len(l.points) == 0 {
			continue
		}
		var pts strings.Builder
		for i, p := range thin(l.points, maxChartPoints) {
			if i > 0 {
				pts.WriteByte(' ')
			}
			fmt.Fprintf(&pts, "%.1f,%.1f", xp(p[0]), yp(p[1]))
		}
		dash := ""
		if l.dashed {
			dash = ` stroke-dasharray="5 3"`
		}
		fmt.Fprintf(&b, `<polyline class="series" points="%s" fill="none" stroke="%s" stroke-width="2"%s><title>%s</title></polyline>`, pts.String(), l.color, dash, esc(l.name))
		if len(l.points) == 1 { // a line of one point draws nothing: a dot shows it
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s</title></circle>`, xp(l.points[0][0]), yp(l.points[0][1]), l.color, esc(l.name))
		}
	}
	for _, m := range c.vmarks {
		x := xp(m.at)
		fmt.Fprintf(&b, `<line class="mark" x1="%.1f" x2="%.1f" y1="0" y2="%d" stroke="%s" stroke-width="1.5" stroke-dasharray="6 3"/>`, x, x, plotH, m.color)
		anchor, dx := "end", -4.0
		if x < plotW/3 {
			anchor, dx = "start", 4
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="14" text-anchor="%s" fill="%s"%s>%s</text>`, x+dx, anchor, m.color, halo, esc(m.label))
	}
	for _, m := range c.hmarks {
		y := yp(m.at)
		fmt.Fprintf(&b, `<line class="mark" x1="0" x2="%d" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="6 3"/>`, plotW, y, y, m.color)
		if m.inLegend {
			continue
		}
		tx, ty, anchor := float64(plotW-4), y-4, "end"
		if ty < 12 { // at the top edge: below the line, at the left, clear of the legend and the vertical marks' labels
			tx, ty, anchor = 4, y+13, "start"
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="%s" fill="%s"%s>%s</text>`, tx, ty, anchor, m.color, halo, esc(m.label))
	}
	b.WriteString(`</g>`)
	c.legend(&b, titleY+(len(titles)-1)*titleLineH+legendBelowTitle)
	b.WriteString(`</svg>`)
	return b.String()
}

// tickValues are the axis' ticks: the ones set, else decades on a log
// axis or about n round values.
func (a axis) tickValues(n int) []float64 {
	switch {
	case a.ticks != nil:
		return a.ticks
	case a.log:
		return decadeTicks(a.min, a.max)
	}
	return niceTicks(a.min, a.max, n)
}

// tickLabel is tick i's text: its tickText when set, else format(v).
func (a axis) tickLabel(i int, v float64) string {
	if i < len(a.tickText) {
		return a.tickText[i]
	}
	return a.format(v)
}

// grid draws the ticks, their labels, the grid lines and the axis titles.
func (c *chart) grid(b *strings.Builder, xp, yp func(float64) float64) {
	esc := html.EscapeString
	for i, v := range c.x.tickValues(6) {
		x, label := xp(v), c.x.tickLabel(i, v)
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="0" y2="%d" stroke="%s" stroke-width="0.5"/>`, x, x, plotH, colorGrid)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" fill="%s">%s</text>`, x, plotH+16, colorAxis, esc(label))
	}
	for i, v := range c.y.tickValues(5) {
		y, label := yp(v), c.y.tickLabel(i, v)
		fmt.Fprintf(b, `<line x1="0" x2="%d" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="0.5"/>`, plotW, y, y, colorGrid)
		fmt.Fprintf(b, `<text x="-6" y="%.1f" text-anchor="end" dominant-baseline="middle" fill="%s">%s</text>`, y, colorAxis, esc(label))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" fill="%s">%s</text>`, plotW/2, plotH+34, colorAxis, esc(c.x.label))
	fmt.Fprintf(b, `<text transform="translate(-66,%d) rotate(-90)" text-anchor="middle" fill="%s">%s</text>`, plotH/2, colorAxis, esc(c.y.label))
}

// legend names, at the right on the row under the title (a long title
// cannot run into it), the lines when there is more than one and the
// reference lines whose label is kept off the plot. y is the row's
// baseline.
func (c *chart) legend(b *strings.Builder, y int) {
	type entry struct {
		name, color string
		dashed      bool
	}
	var entries []entry
	for _, l := range c.lines {
		if l.name != "" {
			entries = append(entries, entry{l.name, l.color, l.dashed})
		}
	}
	if len(entries) < 2 { // one line is what the title names
		entries = nil
	}
	for _, m := range c.hmarks {
		if m.inLegend {
			entries = append(entries, entry{m.label, m.color, true})
		}
	}
	x := float64(chartW - padR)
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		w := 28 + 7.6*float64(len([]rune(e.name))) // 13px text is about 7.6px a character
		x -= w
		style := `stroke-width="3"`
		if e.dashed {
			style = `stroke-width="1.5" stroke-dasharray="6 3"`
		}
		fmt.Fprintf(b, `<g class="legend"><line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="%s" %s/><text x="%.1f" y="%d" fill="currentColor">%s</text></g>`,
			x, x+14, y-4, y-4, e.color, style, x+17, y, html.EscapeString(e.name))
	}
}

// wrapWords breaks s at spaces into lines of at most n characters; a word
// longer than n stays whole.
func wrapWords(s string, n int) []string {
	var out []string
	cur := ""
	for _, w := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = w
		case len([]rune(cur))+1+len([]rune(w)) <= n:
			cur += " " + w
		default:
			out = append(out, cur)
			cur = w
		}
	}
	if cur != "" || len(out) == 0 {
		out = append(out, cur)
	}
	return out
}

// thin keeps at most n points of a long series, always with the first, the
// last and, in each stretch it merges, the highest one, so peaks survive.
func thin(p [][2]float64, n int) [][2]float64 {
	if len(p) <= n || n < 3 {
		return p
	}
	out := [][2]float64{p[0]}
	step := float64(len(p)-2) / float64(n-2)
	for i := 0; i < n-2; i++ {
		lo, hi := 1+int(float64(i)*step), 1+int(float64(i+1)*step)
		best := lo
		for j := lo; j < hi && j < len(p)-1; j++ {
			if p[j][1] > p[best][1] {
				best = j
			}
		}
		out = append(out, p[best])
	}
	return append(out, p[len(p)-1])
}

// fmtLatency labels a latency axis tick given in nanoseconds.
func fmtLatency(ns float64) string {
	switch {
	case ns >= 1e9:
		return trimZero(ns/1e9) + "s"
	case ns >= 1e6:
		return trimZero(ns/1e6) + "ms"
	case ns >= 1e3:
		return trimZero(ns/1e3) + "µs"
	}
	return trimZero(ns) + "ns"
}

func trimZero(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e6 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// fmtCount labels a count or rate axis.
func fmtCount(v float64) string {
	switch {
	case math.Abs(v) >= 1e6:
		return trimZero(v/1e6) + "M"
	case math.Abs(v) >= 1e4:
		return trimZero(v/1e3) + "k"
	}
	return trimZero(v)
}

// fmtSeconds labels a time axis in seconds.
func fmtSeconds(v float64) string { return trimZero(v) }

// latencyLabel is units.FormatDuration for a value in nanoseconds.
func latencyLabel(ns float64) string { return units.FormatDuration(time.Duration(ns)) }
