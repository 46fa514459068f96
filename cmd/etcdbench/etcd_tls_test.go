package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
)

// TestEtcdTLSAndAuth runs against one embedded etcd that serves clients
// over TLS with client certificates: a put, a wrong CA, plain HTTP mixed
// up with TLS, then auth enabled: the right and a wrong password.
func TestEtcdTLSAndAuth(t *testing.T) {
	dir := t.TempDir()
	pki := testutil.NewPKI(t, dir, "good")
	wrong := testutil.NewPKI(t, dir, "wrong")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{
		Dir:       filepath.Join(dir, "data"),
		ClientTLS: etcdcluster.TLSFiles{Cert: pki.ServerCert, Key: pki.ServerKey, CACert: pki.CA},
	})
	if err != nil {
		t.Fatalf("starting an etcd with client TLS: %v", err)
	}
	defer c.Close()
	eps := strings.Join(c.Endpoints(), ",")
	if !strings.HasPrefix(eps, "https://") {
		t.Fatalf("endpoints %s, want https://", eps)
	}
	tlsArgs := []string{"--cacert", pki.CA, "--cert", pki.ClientCert, "--key", pki.ClientKey}
	put := func(o runOpts, extra ...string) runResult {
		args := append([]string{"etcd", "put", "--endpoints", eps, "--yes", "--total", "100", "--clients", "2", "-o", "json"}, extra...)
		return runBin(t, o, args...)
	}
	tlsFiles := etcdload.TLSFiles{CACert: pki.CA, Cert: pki.ClientCert, Key: pki.ClientKey}
	tcfg, err := tlsFiles.Config()
	if err != nil {
		t.Fatal(err)
	}
	countLeft := func(user, pass string) int64 {
		t.Helper()
		cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), TLS: tcfg, Username: user, Password: pass, DialTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		resp, err := cli.Get(ctx, etcdload.PrefixRoot, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		return resp.Count
	}
	checkPut := func(t *testing.T, res runResult, secret string) {
		t.Helper()
		if res.code != exitOK && res.code != exitFail {
			t.Fatalf("exit %d, want 0 or 1; stderr:\n%s", res.code, res.stderr)
		}
		r, err := result.Read(strings.NewReader(res.stdout))
		if err != nil {
			t.Fatalf("stdout is not a result: %v", err)
		}
		if w := r.Workloads[0]; w.Ops != 100 || w.Figure("member0_wal_fsyncs") == nil {
			t.Errorf("%d ops, figures %+v: want 100 and the member's disk metrics over TLS", w.Ops, w.Figures)
		}
		if secret != "" && strings.Contains(res.stdout, secret) {
			t.Errorf("the result contains the password %q", secret)
		}
	}

	t.Run("put over TLS", func(t *testing.T) {
		checkPut(t, put(runOpts{}, tlsArgs...), "")
		if n := countLeft("", ""); n != 0 {
			t.Errorf("%d keys left", n)
		}
	})
	errCases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"wrong CA", []string{"--cacert", wrong.CA, "--cert", pki.ClientCert, "--key", pki.ClientKey}, exitRuntime, "x509"},
		{"no client certificate", []string{"--cacert", pki.CA}, exitRuntime, "client certificate"},
		{"unreadable key", []string{"--cacert", pki.CA, "--cert", pki.ClientCert, "--key", filepath.Join(dir, "nope.pem")}, exitRuntime, "nope.pem"},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			res := put(runOpts{}, tc.args...)
			if res.code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", res.code, tc.code, res.stderr)
			}
			checkOneErrorLine(t, res.stderr)
			t.Log(res.stderr)
			if !strings.Contains(res.stderr, tc.want) {
				t.Errorf("stderr %q does not mention %q", res.stderr, tc.want)
			}
		})
	}
	t.Run("TLS to plain HTTP", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		defer srv.Close()
		ep := strings.Replace(srv.URL, "http://", "https://", 1)
		res := runBin(t, runOpts{}, "etcd", "put", "--endpoints", ep, "--yes", "--total", "10", "--cacert", pki.CA)
		if res.code != exitRuntime {
			t.Errorf("exit %d, want %d; stderr:\n%s", res.code, exitRuntime, res.stderr)
		}
		checkOneErrorLine(t, res.stderr)
		t.Log(res.stderr)
		if !strings.Contains(res.stderr, "plain HTTP") {
			t.Errorf("stderr %q does not say plain HTTP", res.stderr)
		}
	})

	enableAuth(t, ctx, c.Endpoints(), tcfgFor(t, tlsFiles), "pw-s3cret")
	t.Run("auth password in --user", func(t *testing.T) {
		res := put(runOpts{}, append(tlsArgs, "--user", "root:pw-s3cret")...)
		checkPut(t, res, "pw-s3cret")
		r, err := result.Read(strings.NewReader(res.stdout))
		if err == nil && !slices.Contains(r.Tool.Args, "--user=root:"+redacted) {
			t.Errorf("tool.args %q: want --user=root:%s", r.Tool.Args, redacted)
		}
	})
	t.Run("auth password from file and environment", func(t *testing.T) {
		pf := filepath.Join(dir, "password")
		if err := os.WriteFile(pf, []byte("pw-s3cret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		checkPut(t, put(runOpts{}, append(tlsArgs, "--user", "root", "--password-file", pf)...), "pw-s3cret")
		checkPut(t, put(runOpts{env: []string{etcdload.PasswordEnv + "=pw-s3cret"}}, append(tlsArgs, "--user", "root")...), "pw-s3cret")
	})
	t.Run("auth password at a terminal prompt", func(t *testing.T) {
		args := append([]string{"etcd", "put", "--endpoints", eps, "--yes", "--total", "100", "--clients", "2", "-o", "json", "--user", "root"}, tlsArgs...)
		res, screen := promptPut(t, args, "pw-s3cret")
		checkPut(t, res, "pw-s3cret")
		if strings.Contains(screen, "pw-s3cret") {
			t.Errorf("the password was echoed: the terminal shows %q", screen)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"wrong password", []string{"--user", "root:nope"}, "authentication failed"},
		{"no user", nil, "--user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := put(runOpts{}, append(tlsArgs, tc.args...)...)
			if res.code != exitRuntime {
				t.Errorf("exit %d, want %d; stderr:\n%s", res.code, exitRuntime, res.stderr)
			}
			checkOneErrorLine(t, res.stderr)
			t.Log(res.stderr)
			if !strings.Contains(res.stderr, tc.want) || strings.Contains(res.stderr, "nope") {
				t.Errorf("stderr %q: want %q and no password", res.stderr, tc.want)
			}
		})
	}
	if n := countLeft("root", "pw-s3cret"); n != 0 {
		t.Errorf("%d keys left", n)
	}
}

func tcfgFor(t *testing.T, f etcdload.TLSFiles) clientv3.Config {
	t.Helper()
	c, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	return clientv3.Config{TLS: c, DialTimeout: 5 * time.Second}
}

// enableAuth creates user root with password pw and the root role, and
// turns auth on.
func enableAuth(t *testing.T, ctx context.Context, endpoints []string, cfg clientv3.Config, pw string) {
	t.Helper()
	cfg.Endpoints = endpoints
	cli, err := clientv3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	steps := []struct {
		what string
		do   func() error
	}{
		{"role add root", func() error { _, err := cli.RoleAdd(ctx, "root"); return err }},
		{"user add root", func() error { _, err := cli.UserAdd(ctx, "root", pw); return err }},
		{"grant root to root", func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err }},
		{"auth enable", func() error { _, err := cli.AuthEnable(ctx); return err }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
	}
}

func TestEtcdSecurityFlags(t *testing.T) {
	dir := t.TempDir()
	ext := []string{"etcd", "put", "--endpoints", "https://127.0.0.1:1", "--yes", "--total", "10"}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"TLS with --dir", []string{"etcd", "put", "--dir", dir, "--cacert", "ca.pem"}, exitUsage, "only for --endpoints"},
		{"user with --dir", []string{"etcd", "put", "--dir", dir, "--user", "root:x"}, exitUsage, "only for --endpoints"},
		{"cert without key", append(ext, "--cert", "c.pem"), exitUsage, "--cert and --key"},
		{"password file without user", append(ext, "--password-file", "p"), exitUsage, "needs --user"},
		{"two passwords", append(ext, "--user", "root:x", "--password-file", "p"), exitUsage, "alternatives"},
		{"no password", append(ext, "--user", "root"), exitUsage, "no password"},
		{"TLS to http://", []string{"etcd", "put", "--endpoints", "http://127.0.0.1:1", "--yes", "--total", "10", "--cacert", "ca.pem"}, exitUsage, "plain HTTP"},
		{"unreadable CA", append(ext, "--cacert", filepath.Join(dir, "missing-ca.pem")), exitRuntime, "missing-ca.pem"},
		{"unreadable password file", append(ext, "--user", "root", "--password-file", filepath.Join(dir, "missing-pw")), exitRuntime, "missing-pw"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runBin(t, runOpts{}, tc.args...)
			if res.code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", res.code, tc.code, res.stderr)
			}
			checkOneErrorLine(t, res.stderr)
			t.Log(res.stderr)
			if !strings.Contains(res.stderr, tc.want) {
				t.Errorf("stderr %q does not mention %q", res.stderr, tc.want)
			}
		})
	}
}

func TestRedactArgs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"etcdbench etcd put", "--user=root:pw", "--yes=true"}, []string{"etcdbench etcd put", "--user=root:" + redacted, "--yes=true"}},
		{[]string{"--user=root"}, []string{"--user=root"}},
		{[]string{"--user=root:a:b"}, []string{"--user=root:" + redacted}},
	} {
		if got := redactArgs(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("redactArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
