package etcdload

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"etcdbench/internal/etcdload/metrics"
)

// ErrTLSFiles is returned by TLSFiles.Config when a certificate, key or CA
// file cannot be read or used.
var ErrTLSFiles = errors.New("TLS files")

// ErrTLS is returned by Run when the TLS handshake with an endpoint fails:
// a CA that does not verify the server, a server that wants a client
// certificate, or a server that speaks plain HTTP.
var ErrTLS = errors.New("TLS handshake failed")

// ErrAuth is returned by Run when etcd refuses the user name or password.
var ErrAuth = errors.New("etcd refused the user or password")

// TLSFiles name the client's TLS material as etcdctl's flags do.
type TLSFiles struct {
	// CACert verifies the server (--cacert); empty: the system's roots.
	CACert string
	// Cert and Key are the client certificate and key (--cert, --key),
	// both or neither.
	Cert, Key string
	// InsecureSkipVerify accepts any server certificate
	// (--insecure-skip-tls-verify).
	InsecureSkipVerify bool
}

// TLSFlags are the names of the flags Register adds, as etcdctl's.
var TLSFlags = []string{"cacert", "cert", "key", "insecure-skip-tls-verify"}

// Register adds etcdctl's TLS flags to fs, bound to f: every command
// that reaches members over TLS takes them so.
func (f *TLSFiles) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.CACert, "cacert", "", "verify the members' certificates with this CA bundle (PEM)")
	fs.StringVar(&f.Cert, "cert", "", "client certificate (PEM), with --key")
	fs.StringVar(&f.Key, "key", "", "client key (PEM), with --cert")
	fs.BoolVar(&f.InsecureSkipVerify, "insecure-skip-tls-verify", false, "accept any server certificate (TLS without verification)")
}

// Empty reports whether no TLS setting is given.
func (f TLSFiles) Empty() bool { return f == TLSFiles{} }

// Config reads the files into a client TLS configuration.
func (f TLSFiles) Config() (*tls.Config, error) {
	if (f.Cert == "") != (f.Key == "") {
		return nil, fmt.Errorf("%w: a client certificate needs both a certificate and a key file", ErrTLSFiles)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: f.InsecureSkipVerify} //nolint:gosec // etcdctl's --insecure-skip-tls-verify, asked for explicitly
	if f.CACert != "" {
		pem, err := os.ReadFile(f.CACert)
		if err != nil {
			return nil, fmt.Errorf("%w: reading the CA certificate: %w", ErrTLSFiles, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: no PEM certificate in the CA file %s", ErrTLSFiles, f.CACert)
		}
		cfg.RootCAs = pool
	}
	if f.Cert != "" {
		pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("%w: loading the client certificate %s and key %s: %w", ErrTLSFiles, f.Cert, f.Key, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// HTTPClient is a client for the members' /metrics with the same TLS
// configuration as the etcd client (nil: plain HTTP only), without
// keep-alives (see metrics.NoKeepAlive).
func HTTPClient(cfg *tls.Config) *http.Client {
	tr := metrics.NoKeepAlive()
	if cfg != nil {
		tr.TLSClientConfig = cfg.Clone()
	}
	return &http.Client{Transport: tr}
}

// handshakeTimeout bounds the TLS check of one endpoint.
const handshakeTimeout = 5 * time.Second

// checkTLS shakes hands with every https:// endpoint (and every endpoint
// without a scheme when cfg is set, as clientv3 then uses TLS), so that a
// wrong CA or a plain-HTTP server is reported as such at once instead of
// as a timeout after gRPC's retries.
func checkTLS(ctx context.Context, endpoints []string, cfg *tls.Config) error {
	for _, ep := range endpoints {
		host, secure := endpointHost(ep, cfg != nil)
		if !secure {
			continue
		}
		c := cfg
		if c == nil {
			c = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
		d := tls.Dialer{Config: c}
		conn, err := d.DialContext(hctx, "tcp", host)
		cancel()
		if err == nil {
			err = awaitRejection(conn)
			conn.Close()
			if err == nil {
				continue
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var opErr *net.OpError
		if errors.As(err, &opErr) && opErr.Op == "dial" {
			return fmt.Errorf("%w within %v at %s: %w", ErrUnreachable, handshakeTimeout, ep, err)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			// Connected but no handshake: a plain-HTTP etcd would have closed
			// the connection (EOF); this one is stopped or overloaded.
			return fmt.Errorf("%w within %v at %s: it accepts connections but did not complete a TLS handshake; is the etcd process stopped or overloaded?", ErrUnreachable, handshakeTimeout, ep)
		}
		return fmt.Errorf("%w with %s: %w%s", ErrTLS, ep, err, tlsHint(err))
	}
	return nil
}

// rejectionWait is how long checkTLS listens after a handshake for the
// server's alert: in TLS 1.3 the client's handshake completes before the
// server has checked the client's certificate.
const rejectionWait = 100 * time.Millisecond

// awaitRejection returns the alert a server sends right after the
// handshake, or nil when it stays quiet (etcd waits for the client to
// speak first).
func awaitRejection(conn net.Conn) error {
	if err := conn.SetReadDeadline(time.Now().Add(rejectionWait)); err != nil {
		return nil
	}
	var b [1]byte
	_, err := conn.Read(b[:])
	var nerr net.Error
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &nerr) && nerr.Timeout()) {
		return nil
	}
	return err
}

// tlsHint says what to do about a failed handshake.
func tlsHint(err error) string {
	var uerr x509.UnknownAuthorityError
	var herr x509.HostnameError
	var rerr tls.RecordHeaderError
	msg := err.Error()
	switch {
	case errors.As(err, &uerr):
		return " (give the CA that signed the server's certificate with --cacert)"
	case errors.As(err, &herr):
		return " (the server's certificate is not for this address: use a name it lists or --insecure-skip-tls-verify)"
	case errors.As(err, &rerr), strings.Contains(msg, "EOF"), strings.Contains(msg, "connection reset"),
		errors.Is(err, context.DeadlineExceeded), strings.Contains(msg, "timeout"):
		return " (does the endpoint speak plain HTTP? then use http:// and no TLS flags)"
	case strings.Contains(msg, "certificate required"), strings.Contains(msg, "bad certificate"):
		return " (the server wants a client certificate it trusts: --cert and --key)"
	}
	return ""
}

// endpointHost returns an endpoint's host:port and whether clientv3 talks
// TLS to it.
func endpointHost(ep string, tlsGiven bool) (string, bool) {
	if !strings.Contains(ep, "://") {
		return ep, tlsGiven
	}
	u, err := url.Parse(ep)
	if err != nil {
		return ep, false
	}
	return u.Host, u.Scheme == "https"
}

// isAuthFailure reports whether err is etcd refusing a user or password.
func isAuthFailure(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "authentication failed") || strings.Contains(msg, "invalid auth token")
}

// isAuthNeeded reports whether err is etcd asking for a user (auth is
// enabled and none was given) or refusing the one given.
func isAuthNeeded(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "user name is empty") || strings.Contains(msg, "permission denied")
}
