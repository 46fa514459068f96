package exporter

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/prometheus/exporter-toolkit/web"
)

// ValidateWebConfig reads the web configuration file at path (the
// exporter-toolkit's format, as node_exporter's --web.config.file: TLS
// certificate and key, client CAs, basic auth users with bcrypt hashes)
// and its certificates, so that a mistake is reported before the
// exporter starts. An empty path is valid: plain HTTP, no
// authentication.
func ValidateWebConfig(path string) error {
	if err := web.Validate(path); err != nil {
		return fmt.Errorf("web config %s: %w (its format: https://prometheus.io/docs/prometheus/latest/configuration/https/)", path, err)
	}
	return nil
}

// Serve serves srv on ln until srv is shut down: over TLS and with
// basic auth as the web configuration file at webConfig says (the file
// and its certificates are read again on each new connection, so renewed
// certificates need no restart), or plain HTTP when webConfig is "".
// It returns http.ErrServerClosed after srv.Shutdown. logf receives the
// toolkit's lines (what it serves, configuration errors).
func Serve(ln net.Listener, srv *http.Server, webConfig string, logf func(format string, args ...any)) error {
	return web.Serve(ln, srv, &web.FlagConfig{
		WebListenAddresses: &[]string{ln.Addr().String()},
		WebSystemdSocket:   new(bool),
		WebConfigFile:      &webConfig,
	}, slog.New(logfHandler{logf: logf, level: slog.LevelWarn}))
}

// logfHandler turns the toolkit's slog records into Logf lines: the
// message and its attributes as key=value, from level up (its Info lines
// repeat what the exporter says itself).
type logfHandler struct {
	logf  func(format string, args ...any)
	level slog.Level
	attrs []slog.Attr
}

func (h logfHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h logfHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	write := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	h.logf("%s", b.String())
	return nil
}

func (h logfHandler) WithAttrs(as []slog.Attr) slog.Handler {
	h.attrs = append(h.attrs[:len(h.attrs):len(h.attrs)], as...)
	return h
}

// WithGroup is not used by the toolkit; groups are flattened.
func (h logfHandler) WithGroup(string) slog.Handler { return h }
