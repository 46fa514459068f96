package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"etcdbench/internal/result"
)

var (
	idAttr   = regexp.MustCompile(`\sid="([^"]*)"`)
	hrefAttr = regexp.MustCompile(`href="#([^"]*)"`)
)

// multiFixtures are saved results of three commands.
var multiFixtures = []string{"disk-wal.json", "etcd-put.json", "disk-all-quick.json"}

func renderAll(t *testing.T) (string, []*result.Result) {
	t.Helper()
	var rs []*result.Result
	for _, n := range multiFixtures {
		rs = append(rs, readFixture(t, n))
	}
	var b bytes.Buffer
	if err := HTMLAll(&b, rs, multiFixtures); err != nil {
		t.Fatal(err)
	}
	return b.String(), rs
}

// Several results make one page: a section per result holding that
// result's own page (verdicts, reproduce line, charts, environment), with
// ids that stay unique and links that reach them.
func TestHTMLAllSections(t *testing.T) {
	s, rs := renderAll(t)
	if !strings.HasPrefix(s, "<!DOCTYPE html>") || strings.Count(s, "<html") != 1 || strings.Count(s, "<h1") != 1 {
		t.Fatal("not one page with one title")
	}
	wantSVG := 0
	for i, r := range rs {
		var one bytes.Buffer
		if err := HTML(&one, r); err != nil {
			t.Fatal(err)
		}
		wantSVG += strings.Count(one.String(), "<svg")
		sec := s[strings.Index(s, `id="r`+strconv.Itoa(i+1)+`"`):]
		if next := strings.Index(sec, `<section class="result" id="r`+strconv.Itoa(i+2)+`"`); next > 0 {
			sec = sec[:next]
		}
		for _, id := range []string{"verdicts", "reproduce", "environment"} {
			if !strings.Contains(sec, `id="r`+strconv.Itoa(i+1)+`-`+id+`"`) {
				t.Errorf("result %d (%s) has no %s section", i+1, multiFixtures[i], id)
			}
		}
		if !strings.Contains(sec, multiFixtures[i]) || !strings.Contains(sec, r.Tool.Version) {
			t.Errorf("result %d does not name its file", i+1)
		}
		if !strings.Contains(s, `href="#r`+strconv.Itoa(i+1)+`"`) {
			t.Errorf("the table of results does not link to result %d", i+1)
		}
	}
	if n := strings.Count(s, "<svg"); n != wantSVG {
		t.Errorf("%d charts, the results' own pages have %d", n, wantSVG)
	}
	ids := map[string]int{}
	for _, m := range idAttr.FindAllStringSubmatch(s, -1) {
		ids[m[1]]++
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("id %q appears %d times", id, n)
		}
	}
	for _, m := range hrefAttr.FindAllStringSubmatch(s, -1) {
		if ids[m[1]] == 0 {
			t.Errorf("link to #%s, which no element has", m[1])
		}
	}
	for _, bad := range []string{"<script", "<link", "@import", "url(", "<img"} {
		if strings.Contains(s, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	// The worst result's status heads the page.
	if !strings.Contains(s[:strings.Index(s, `id="results"`)], `<span class="badge `+worstStatus(rs)+`">`) {
		t.Errorf("the page's status is not %s", worstStatus(rs))
	}
}

// One result is HTML's page, unchanged.
func TestHTMLAllOfOneIsHTML(t *testing.T) {
	r := readFixture(t, "disk-wal.json")
	var one, all bytes.Buffer
	if err := HTML(&one, r); err != nil {
		t.Fatal(err)
	}
	if err := HTMLAll(&all, []*result.Result{r}, []string{"disk-wal.json"}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one.Bytes(), all.Bytes()) {
		t.Error("HTMLAll of one result differs from HTML")
	}
}

// The page of several results renders in a browser without network, with
// every chart drawn.
func TestBrowserRendersSeveralResults(t *testing.T) {
	s, rs := renderAll(t)
	path := filepath.Join(t.TempDir(), "all.html")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, log := chromium(t, path, "--dump-dom")
	if bad := consoleErrors(log); len(bad) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(bad, "\n"))
	}
	want := 0
	for _, r := range rs {
		var one bytes.Buffer
		if err := HTML(&one, r); err != nil {
			t.Fatal(err)
		}
		want += strings.Count(one.String(), `class="chart"`)
	}
	checkDOMCharts(t, dom, want)
}

// Several results in JSON are one document, an array of results that read
// back as they were.
func TestJSONAll(t *testing.T) {
	var rs []*result.Result
	for _, n := range multiFixtures {
		rs = append(rs, readFixture(t, n))
	}
	var b bytes.Buffer
	if err := JSONAll(&b, rs); err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &raw); err != nil || len(raw) != len(rs) {
		t.Fatalf("not one JSON array of %d: %v", len(rs), err)
	}
	for i, m := range raw {
		r, err := result.Read(bytes.NewReader(m))
		if err != nil {
			t.Fatalf("element %d: %v", i, err)
		}
		if r.Tool.Args[0] != rs[i].Tool.Args[0] || len(r.Workloads) != len(rs[i].Workloads) || r.Workloads[0].Ops != rs[i].Workloads[0].Ops {
			t.Errorf("element %d is not %s", i, multiFixtures[i])
		}
	}
}
