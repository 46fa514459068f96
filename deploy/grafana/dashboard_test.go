package grafana

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"etcdbench/internal/exporter"
)

// dashboard is the part of a Grafana dashboard this test reads.
type dashboard struct {
	Title  string `json:"title"`
	UID    string `json:"uid"`
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

func load(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile("etcdbench-exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("etcdbench-exporter.json is not valid JSON: %v", err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("no title, uid or panels: %+v", d)
	}
	return d
}

// queries are every PromQL expression of the dashboard: its panels'
// and its query variables' (label_values(metric, label) gives its
// metric selector).
func queries(t *testing.T, d dashboard) []string {
	t.Helper()
	var out []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(string)
		m := labelValues.FindStringSubmatch(q)
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(metric, label)", v.Name, q)
			continue
		}
		out = append(out, m[1])
	}
	return out
}

// grafanaVars are Grafana's variables, replaced by values PromQL parses.
var grafanaVars = strings.NewReplacer("$__rate_interval", "1m", "$instance", ".*", "$member", ".*", "$job", ".*")

var (
	quoted   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	matchers = regexp.MustCompile(`\{[^}]*\}`)
	ranges   = regexp.MustCompile(`\[[^\]]*\]`)
	grouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	// A number (with a duration's unit: 5m) is taken whole, so that its
	// unit is not read as a name.
	identifier = regexp.MustCompile(`[0-9][0-9a-zA-Z_.]*|[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	keywords   = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true}
)

// metricNames are the metric names an expression reads: identifiers that
// are not functions (followed by a parenthesis), keywords, label names
// or values.
func metricNames(expr string) []string {
	s := quoted.ReplaceAllString(expr, `""`)
	s = matchers.ReplaceAllString(s, "")
	s = ranges.ReplaceAllString(s, "")
	s = grouping.ReplaceAllString(s, "")
	var out []string
	for _, m := range identifier.FindAllString(s, -1) {
		if strings.HasSuffix(m, "(") || keywords[strings.ToLower(m)] || m[0] >= '0' && m[0] <= '9' {
			continue
		}
		out = append(out, m)
	}
	return out
}

// TestMetricNamesOfExpr: the name extraction the next test relies on.
func TestMetricNamesOfExpr(t *testing.T) {
	got := fmt.Sprint(metricNames(`histogram_quantile(0.99, sum by (instance, le) (rate(a_bucket{x="y(z)",le=~"1"}[5m]))) / on (m) group_left (n) b_total offset 5m > bool 2 and c`))
	if got != "[a_bucket b_total c]" {
		t.Errorf("metricNames = %s", got)
	}
}

// TestDashboardNamesServedMetrics: every metric a query names is one the
// exporter serves, so a renamed metric cannot leave a panel empty.
func TestDashboardNamesServedMetrics(t *testing.T) {
	served := exporter.MetricNames()
	n := 0
	for _, q := range queries(t, load(t)) {
		for _, name := range metricNames(q) {
			n++
			if !served.Has(name) {
				t.Errorf("query %q names %s, which the exporter does not serve", q, name)
			}
		}
	}
	if n < 15 {
		t.Fatalf("found %d metric names in the dashboard: the test is not reading it", n)
	}
}

// TestDashboardQueriesParse: promtool parses every panel query (each
// written, with Grafana's variables replaced, as a recording rule).
func TestDashboardQueriesParse(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not on PATH (Debian: apt-get install prometheus): skipping the PromQL check")
	}
	var b strings.Builder
	b.WriteString("groups:\n- name: dashboard\n  rules:\n")
	for i, q := range queries(t, load(t)) {
		js, _ := json.Marshal(grafanaVars.Replace(q)) // a JSON string is a YAML string
		fmt.Fprintf(&b, "  - record: dashboard_query_%d\n    expr: %s\n", i, js)
	}
	path := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}
