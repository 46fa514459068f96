package headroom

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"etcdbench/internal/etcdproc"
)

// ErrNoMetricsURL is returned by MetricsURL when etcd's flags name no
// plain-HTTP address its /metrics can be read on.
var ErrNoMetricsURL = errors.New("no plain-HTTP metrics URL in etcd's flags")

// etcdDefaultClientURL is etcd's --listen-client-urls when none is given.
const etcdDefaultClientURL = "http://localhost:2379"

// MetricsURL is the /metrics URL of the etcd with this command line and
// environment (/proc/PID/environ): its first plain-HTTP
// --listen-metrics-urls, else its first plain-HTTP --listen-client-urls
// (as flags, then ETCD_* variables, then etcd's default), with an
// address that listens on every interface read on 127.0.0.1.
// ErrNoMetricsURL says why there is none.
func MetricsURL(cmdline []string, environ []byte) (string, error) {
	set := etcdproc.ParseSettings(cmdline, environ)
	if set.Get("config-file") != "" {
		return "", fmt.Errorf("%w: etcd reads its settings from a config file; give the exporter --etcd-metrics-url", ErrNoMetricsURL)
	}
	var tried []string
	for _, l := range []struct{ flag, def string }{
		{"listen-metrics-urls", ""},
		{"listen-client-urls", etcdDefaultClientURL},
	} {
		v := set.Get(l.flag)
		if v == "" {
			v = l.def
		}
		for _, raw := range strings.Split(v, ",") {
			if raw = strings.TrimSpace(raw); raw == "" {
				continue
			}
			u, err := url.Parse(raw)
			m, ok := "", false
			if err == nil && u.Scheme == "http" && u.Host != "" {
				m, ok = metricsOf(u)
			}
			if !ok {
				tried = append(tried, raw)
				continue
			}
			return m, nil
		}
	}
	return "", fmt.Errorf("%w (it listens on %s: TLS or unix sockets); serve plain-HTTP metrics with etcd's --listen-metrics-urls http://127.0.0.1:PORT and give the exporter --etcd-metrics-url", ErrNoMetricsURL, strings.Join(tried, ", "))
}

// metricsOf is u's /metrics, read on 127.0.0.1 when u listens on every
// interface; false when u's host is no host a URL can name (a listen
// URL etcd itself would refuse, such as "http://]:").
func metricsOf(u *url.URL) (string, bool) {
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, "80"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	m := (&url.URL{Scheme: "http", Host: net.JoinHostPort(host, port), Path: "/metrics"}).String()
	if back, err := url.Parse(m); err != nil || back.Host == "" || back.Hostname() != strings.Trim(host, "[]") {
		return "", false
	}
	return m, true
}
