package exporter

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/testutil"
)

// serveWeb serves a new exporter's handler (not tracing: no BPF needed)
// on a free 127.0.0.1 port as the web config file says, until t ends.
func serveWeb(t *testing.T, webConfig string) string {
	t.Helper()
	if err := ValidateWebConfig(webConfig); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: New(Config{}).Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- Serve(ln, srv, webConfig, t.Logf) }()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// TestServeTLSBasicAuth: with a web config file of a self-signed CA's
// certificate and one basic auth user, a real Prometheus that trusts the
// CA and sends the user's password scrapes the exporter's metrics over
// TLS, while the same Prometheus without the password gets nothing; a
// request without credentials, with a wrong password or in plain HTTP is
// refused.
func TestServeTLSBasicAuth(t *testing.T) {
	w := testutil.NewWebTLS(t, "prometheus", "s3cret-for-the-test")
	addr := serveWeb(t, w.Config)
	url := "https://" + addr + "/metrics"

	pem, err := os.ReadFile(w.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("the CA file holds no certificate")
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(u, user, pass string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tt := range []struct {
		name, url, user, pass string
		code                  int
	}{
		{"no credentials", url, "", "", http.StatusUnauthorized},
		{"wrong password", url, w.User, "wrong", http.StatusUnauthorized},
		{"unknown user", url, "nobody", w.Password, http.StatusUnauthorized},
		{"status page without credentials", "https://" + addr + "/", "", "", http.StatusUnauthorized},
		{"plain HTTP", "http://" + addr + "/metrics", w.User, w.Password, http.StatusBadRequest},
		{"the user", url, w.User, w.Password, http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := get(tt.url, tt.user, tt.pass)
			if code != tt.code {
				t.Errorf("status %d, want %d; body:\n%.300s", code, tt.code, body)
			}
			if has := strings.Contains(body, "etcdbench_waiting_for_etcd"); has != (code == http.StatusOK) {
				t.Errorf("status %d and the metrics in the body: %v", code, has)
			}
		})
	}

	// The real Prometheus: one job with the password, one without.
	job := func(name, auth string) string {
		return fmt.Sprintf("  - job_name: %s\n    scheme: https\n    tls_config:\n      ca_file: %q\n%s    static_configs:\n      - targets: [%q]\n", name, w.CAFile, auth, addr)
	}
	passFile := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(passFile, []byte(w.Password), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startPrometheusWith(t, job("with-password", fmt.Sprintf("    basic_auth:\n      username: %s\n      password_file: %q\n", w.User, passFile))+job("without", ""))
	is := func(want float64) func(float64) bool { return func(v float64) bool { return v == want } }
	p.waitFor(t, "the scrape over TLS with basic auth", `up{job="with-password"}`, is(1), 60*time.Second)
	p.waitFor(t, "the exporter's own metric, scraped over TLS", `etcdbench_waiting_for_etcd{job="with-password"}`, is(1), 30*time.Second)
	p.waitFor(t, "the scrape without the password", `up{job="without"}`, is(0), 30*time.Second)
	if v := p.query(t, `etcdbench_waiting_for_etcd{job="without"}`, time.Now()); len(v) != 0 {
		t.Errorf("Prometheus without the password got the exporter's metrics: %v", v)
	}
}

// TestValidateWebConfig: a mistake in the web config file is an error
// that names the file, before anything is served; no file is plain HTTP.
func TestValidateWebConfig(t *testing.T) {
	w := testutil.NewWebTLS(t, "u", "p")
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct {
		name, path string
		ok         bool
	}{
		{"none", "", true},
		{"valid", w.Config, true},
		{"basic auth alone", write("auth.yml", "basic_auth_users:\n  u: $2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi\n"), true},
		{"missing", filepath.Join(dir, "absent.yml"), false},
		{"unknown field", write("typo.yml", "tls_server_config:\n  cert_fiel: x\n"), false},
		{"missing certificate", write("nocert.yml", "tls_server_config:\n  cert_file: absent.crt\n  key_file: absent.key\n"), false},
		{"password in clear", write("clear.yml", "basic_auth_users:\n  u: hunter2\n"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateWebConfig(tt.path)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidateWebConfig(%q) = %v, want ok=%v", tt.path, err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), tt.path) {
				t.Errorf("the error does not name the file: %v", err)
			}
		})
	}
}
