package exporter

import (
	"regexp"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// listingRegisterer registers in a registry and keeps the collectors.
type listingRegisterer struct {
	prometheus.Registerer
	list []prometheus.Collector
}

func (l *listingRegisterer) MustRegister(cs ...prometheus.Collector) {
	l.Registerer.MustRegister(cs...)
	l.list = append(l.list, cs...)
}

// Names is a set of metric names the exporter serves.
type Names map[string]bool

// Has reports whether the exporter serves series named name: a metric's
// own name, or a histogram's _bucket, _sum and _count series.
func (n Names) Has(name string) bool {
	if n[name] {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && n[base] {
			return true
		}
	}
	return false
}

// fqName is how a Desc's String names its metric.
var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// MetricNames lists every metric the exporter serves, from its
// collectors' descriptions, so also those that have no series yet (no
// etcd traced): what the rules and the dashboard may name.
func MetricNames() Names {
	e := New(Config{})
	ch := make(chan *prometheus.Desc)
	go func() {
		for _, c := range e.collectors {
			c.Describe(ch)
		}
		close(ch)
	}()
	out := Names{}
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			out[m[1]] = true
		}
	}
	return out
}
