package prometheus

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"etcdbench/internal/exporter"
)

// promtool returns promtool's path, or skips t without it.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not on PATH (Debian: apt-get install prometheus): skipping the rule tests")
	}
	return p
}

// TestRules: promtool accepts the rules and their unit tests pass (each
// alert fires on the series it is about, after its 'for', and not on the
// others).
func TestRules(t *testing.T) {
	p := promtool(t)
	for _, args := range [][]string{
		{"check", "rules", "etcdbench-rules.yaml"},
		{"test", "rules", "etcdbench-rules_test.yaml"},
	} {
		out, err := exec.Command(p, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// ruleFile is the part of a Prometheus rule file this test reads.
type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Record string `json:"record"`
			Alert  string `json:"alert"`
			Expr   string `json:"expr"`
		} `json:"rules"`
	} `json:"groups"`
}

// metricName matches the exporter's metric names in an expression.
var metricName = regexp.MustCompile(`\betcdbench_[a-z_]+`)

// TestRulesNameServedMetrics: every etcdbench_ metric an expression reads
// is one the exporter serves (a histogram's _bucket, _sum and _count
// series count as its own), so a renamed metric cannot leave a rule
// silently empty.
func TestRulesNameServedMetrics(t *testing.T) {
	b, err := os.ReadFile("etcdbench-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.Unmarshal(b, &rf); err != nil { // promtool checks the fields
		t.Fatal(err)
	}
	served := exporter.MetricNames()
	n := 0
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			for _, name := range metricName.FindAllString(r.Expr, -1) {
				n++
				if !served.Has(name) {
					t.Errorf("rule %s%s reads %s, which the exporter does not serve", r.Record, r.Alert, name)
				}
			}
		}
	}
	if n < 10 {
		t.Fatalf("found %d metric names in the rules: the test is not reading them", n)
	}
}
