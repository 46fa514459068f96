package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"etcdbench/internal/run"
	"etcdbench/internal/trace"
)

// DefaultListen is the exporter's address: port 9479, etcdbench's choice
// (Prometheus' list of exporter ports is full), documented in
// docs/exporter.md.
const DefaultListen = ":9479"

// ErrStopped ends the exporter on a signal: every tracer is detached by
// then.
var ErrStopped = errors.New("exporter stopped; every tracer detached")

// ParseMetricsURLs reads --etcd-metrics-url values, [MEMBER=]URL, by
// member ("" for every member); each must be a plain-HTTP URL.
func ParseMetricsURLs(vals []string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range vals {
		member, raw := "", v
		if m, u, ok := strings.Cut(v, "="); ok && !strings.Contains(m, "://") {
			member, raw = m, u
		}
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return nil, run.Usagef("--etcd-metrics-url %q: want [MEMBER=]http://HOST:PORT/metrics, a plain-HTTP URL", v)
		}
		if _, dup := out[member]; dup {
			return nil, run.Usagef("--etcd-metrics-url %q: member %q has a URL already", v, member)
		}
		out[member] = u.String()
	}
	return out, nil
}

// ListenAndRun checks that the tracer can load and the address listen is
// free, then serves /metrics and the status page (as webConfig says, see
// Serve) and traces as cfg says until ctx ends, logging each line to
// logw with a timestamp. It returns ErrStopped once every tracer is
// detached after ctx ended.
func ListenAndRun(ctx context.Context, listen, webConfig string, cfg Config, logw io.Writer) error {
	if err := trace.Probe(); err != nil {
		// Under a seccomp filter that refuses bpf() the capabilities are
		// there already: the error says what to do instead.
		if errors.Is(err, trace.ErrPermission) && !errors.Is(err, trace.ErrSeccomp) {
			return fmt.Errorf("%w; the exporter needs root, or CAP_BPF, CAP_PERFMON, CAP_SYS_RESOURCE and CAP_SYS_PTRACE (see deploy/kubernetes/exporter/exporter.yaml)", err)
		}
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("--listen %s: the address is in use (another exporter running?); choose another with --listen", listen)
		}
		return fmt.Errorf("--listen %s: %w", listen, err)
	}
	cfg.Logf = func(format string, args ...any) {
		fmt.Fprintf(logw, "%s etcdbench exporter: %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
	}
	ex := New(cfg)
	srv := &http.Server{Handler: ex.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(logfWriter(cfg.Logf), "", 0)}
	served := make(chan error, 1)
	go func() { served <- Serve(ln, srv, webConfig, cfg.Logf) }()
	if webConfig != "" {
		cfg.Logf("serving /metrics and / on %s as %s says (TLS, basic auth)", ln.Addr(), webConfig)
	} else {
		cfg.Logf("serving /metrics and / on %s", ln.Addr())
	}
	runErr := ex.Run(ctx) // returns once ctx ends and every tracer is detached
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutCtx) // a scrape still running after 5 s is cut off
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving %s: %w", listen, err)
	}
	if errors.Is(runErr, context.Canceled) {
		return ErrStopped
	}
	return runErr
}

// logfWriter writes the HTTP server's own lines (a failed TLS handshake)
// as the exporter's log lines.
type logfWriter func(format string, args ...any)

func (w logfWriter) Write(p []byte) (int, error) {
	w("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
