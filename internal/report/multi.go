package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"strconv"
	"strings"

	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

// JSONAll writes several results as one JSON document: an array of
// results, each following result.SchemaID, in the order given.
func JSONAll(w io.Writer, rs []*result.Result) error {
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

// HTMLAll writes several results (sources name them, e.g. file names) as
// one self-contained page: a table of the results linking to one section
// per result, and in each section the result's own page as HTML renders
// it - verdicts, reproduce line, workloads with their charts, environment -
// its headings one level down and its element ids prefixed with "rN-", so
// that the links and ids of the results do not collide. One result is
// HTML's page.
func HTMLAll(w io.Writer, rs []*result.Result, sources []string) error {
	if len(rs) == 0 || len(sources) != len(rs) {
		return errors.New("HTMLAll needs results and a source for each")
	}
	if len(rs) == 1 {
		return HTML(w, rs[0])
	}
	esc := template.HTMLEscapeString
	var b strings.Builder
	b.WriteString(`<section id="results"><h2>Results</h2><div class="scroll"><table><thead><tr><th>result</th><th>status</th><th>command</th></tr></thead><tbody>`)
	for i, r := range rs {
		started := ""
		if t := r.StartedAt; !t.IsZero() {
			started = t.UTC().Format("2006-01-02 15:04 UTC")
		}
		fmt.Fprintf(&b, `<tr><td><a href="#r%d">%d: %s</a><br><span class="muted">%s</span></td><td><span class="badge %s">%s</span></td><td><code>%s</code></td></tr>`,
			i+1, i+1, esc(sources[i]), esc(started), esc(statusText(r)), esc(statusText(r)), esc(CommandLine(r.Tool.Args)))
	}
	b.WriteString(`</tbody></table></div></section>`)
	for i, r := range rs {
		var one bytes.Buffer
		if err := HTML(&one, r); err != nil {
			return fmt.Errorf("%s: %w", sources[i], err)
		}
		body, err := pageBody(one.String())
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, `<section class="result" id="r%d"><p class="muted">result %d of %d: %s</p>%s</section>`,
			i+1, i+1, len(rs), esc(sources[i]), prefixIDs(demoteHeadings(body), fmt.Sprintf("r%d-", i+1)))
	}
	p := page{CSS: css(), Title: "etcdbench report", Status: worstStatus(rs)}
	p.Subtitle = fmt.Sprintf("%d results: %s", len(rs), strings.Join(sources, ", "))
	p.Compare = template.HTML(b.String()) // escaped above, or rendered by HTML's template
	p.Footer = fmt.Sprintf("etcdbench %s (%s), result schema %s", rs[0].Tool.Version, rs[0].Tool.GoVersion, rs[0].Schema)
	return executePage(w, &p)
}

// pageBody is what a page of HTML shows inside <main>, without its footer.
func pageBody(page string) (string, error) {
	start := strings.Index(page, "<main>")
	end := strings.LastIndex(page, "<footer>")
	if start < 0 || end < start {
		return "", errors.New("the page template has no <main> ... <footer>: HTMLAll cannot take a result's page apart")
	}
	return page[start+len("<main>") : end], nil
}

var (
	headingTag = regexp.MustCompile(`<(/?)h([1-5])\b`)
	// idRef matches the attributes that define an id or point at one:
	// id="x", href="#x" and SVG's url(#x). Text is escaped by then, so a
	// quote in it is &#34; and never matches.
	idRef = regexp.MustCompile(`(\sid=")|(href="#)|(url\(#)`)
)

// demoteHeadings moves every heading one level down (h1 to h2...), so
// that a result's page nests under the page of several.
func demoteHeadings(s string) string {
	return headingTag.ReplaceAllStringFunc(s, func(m string) string {
		sub := headingTag.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sub[2]) // one digit, 1 to 5
		return "<" + sub[1] + "h" + strconv.Itoa(n+1)
	})
}

// prefixIDs puts prefix in front of every id defined or referred to in s.
func prefixIDs(s, prefix string) string {
	return idRef.ReplaceAllStringFunc(s, func(m string) string { return m + prefix })
}

// worstStatus is the worst status of rs (FAIL over WARN over PASS), or
// INTERRUPTED when none has one.
func worstStatus(rs []*result.Result) string {
	var worst *verdict.Status
	for _, r := range rs {
		if r.Status != nil && (worst == nil || *r.Status > *worst) {
			worst = r.Status
		}
	}
	if worst == nil {
		return "INTERRUPTED"
	}
	return worst.String()
}
