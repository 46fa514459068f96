package headroom

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
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
	flags := flagValues(cmdline)
	env := envValues(environ)
	get := func(flag, envName string) string {
		if v := flags[flag]; v != "" {
			return v
		}
		return env[envName]
	}
	if get("config-file", "ETCD_CONFIG_FILE") != "" {
		return "", fmt.Errorf("%w: etcd reads its settings from a config file; give the exporter --etcd-metrics-url", ErrNoMetricsURL)
	}
	var tried []string
	for _, l := range []struct{ flag, env, def string }{
		{"listen-metrics-urls", "ETCD_LISTEN_METRICS_URLS", ""},
		{"listen-client-urls", "ETCD_LISTEN_CLIENT_URLS", etcdDefaultClientURL},
	} {
		v := get(l.flag, l.env)
		if v == "" {
			v = l.def
		}
		for _, raw := range strings.Split(v, ",") {
			if raw = strings.TrimSpace(raw); raw == "" {
				continue
			}
			u, err := url.Parse(raw)
			if err != nil || u.Scheme != "http" || u.Host == "" {
				tried = append(tried, raw)
				continue
			}
			return metricsOf(u), nil
		}
	}
	return "", fmt.Errorf("%w (it listens on %s: TLS or unix sockets); serve plain-HTTP metrics with etcd's --listen-metrics-urls http://127.0.0.1:PORT and give the exporter --etcd-metrics-url", ErrNoMetricsURL, strings.Join(tried, ", "))
}

// metricsOf is u's /metrics, read on 127.0.0.1 when u listens on every
// interface.
func metricsOf(u *url.URL) string {
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, "80"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return (&url.URL{Scheme: "http", Host: net.JoinHostPort(host, port), Path: "/metrics"}).String()
}

// flagValues reads --name=value and --name value (one dash or two, as
// Go's flag package takes them) from a command line; the last wins.
func flagValues(cmdline []string) map[string]string {
	out := map[string]string{}
	for i := 1; i < len(cmdline); i++ {
		a := cmdline[i]
		if a == "--" {
			break
		}
		name, ok := strings.CutPrefix(a, "--")
		if !ok {
			if name, ok = strings.CutPrefix(a, "-"); !ok {
				continue
			}
		}
		if n, v, eq := strings.Cut(name, "="); eq {
			out[n] = v
			continue
		}
		if i+1 < len(cmdline) && !strings.HasPrefix(cmdline[i+1], "-") {
			out[name] = cmdline[i+1]
			i++
		}
	}
	return out
}

func envValues(environ []byte) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(string(environ), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}
