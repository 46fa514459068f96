package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/testutil"
	"etcdbench/internal/testutil/hostetcd"
)

// TestDiagnoseClusterBadInput: every bad input of `diagnose
// --endpoints` is one line and its documented exit code, before or
// without touching a cluster.
func TestDiagnoseClusterBadInput(t *testing.T) {
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	refused := fmt.Sprintf("http://127.0.0.1:%d", hostetcd.FreePort(t))
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"nothing to diagnose", nil, exitUsage, "missing what to diagnose"},
		{"no endpoints", []string{"--endpoints", ""}, exitUsage, "no endpoints"},
		{"bad window", []string{"--endpoints", refused, "--window", "0s"}, exitUsage, "--window"},
		{"bad timeout", []string{"--endpoints", refused, "--timeout", "soon"}, exitUsage, "--timeout"},
		{"cert without key", []string{"--endpoints", refused, "--cert", "c.pem"}, exitUsage, "--cert and --key"},
		{"plain http with TLS flags", []string{"--endpoints", refused, "--insecure-skip-tls-verify"}, exitUsage, "plain HTTP but TLS flags"},
		{"not etcd", []string{"--endpoints", web.URL}, exitUsage, "not etcd: GET /version answered 404"},
		{"nobody listens", []string{"--endpoints", refused}, exitRuntime, "down: connection refused"},
		{"bad logs", []string{"--endpoints", refused, "--logs", filepath.Join(t.TempDir(), "none.log")}, exitUsage, "reading the log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"diagnose", "--window", "100ms", "--timeout", "2s"}, tc.args...)
			r := runBin(t, runOpts{}, args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.says) {
				t.Fatalf("exit %d, want %d; stderr %q, want %q", r.code, tc.code, r.stderr, tc.says)
			}
			checkOneErrorLine(t, r.stderr)
			if r.stdout != "" {
				t.Errorf("a bad input printed a report: %s", r.stdout)
			}
		})
	}
}

// TestDiagnoseClusterTLS diagnoses an embedded 3-member cluster behind
// client TLS: healthy with the right CA, in every format; a TLS mismatch
// (no CA, plain http:// to a TLS member) is one line and exit 2.
func TestDiagnoseClusterTLS(t *testing.T) {
	dir := t.TempDir()
	pki := testutil.NewPKI(t, dir, "good")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{
		Dir: filepath.Join(testutil.MemDir(t, "diagnose-tls"), "data"), Members: 3,
		ClientTLS: etcdcluster.TLSFiles{Cert: pki.ServerCert, Key: pki.ServerKey, CACert: pki.CA},
	})
	if err != nil {
		t.Fatalf("starting a 3-member etcd with client TLS: %v", err)
	}
	defer c.Close()
	eps := strings.Join(c.Endpoints(), ",")
	tlsArgs := []string{"--cacert", pki.CA, "--cert", pki.ClientCert, "--key", pki.ClientKey}
	base := []string{"diagnose", "--endpoints", eps, "--window", "500ms", "--timeout", "3s"}

	t.Run("json", func(t *testing.T) {
		r := runBin(t, runOpts{}, append(append(base, tlsArgs...), "-o", "json")...)
		if r.code != exitOK {
			t.Fatalf("exit %d, want 0; stderr %s\n%s", r.code, r.stderr, r.stdout)
		}
		w := diagnosis(t, r.stdout)
		if w.Name != "diagnose-cluster" || w.Cluster == nil || len(w.Cluster.Members) != 3 || len(w.Cluster.Findings) != 0 {
			t.Fatalf("want a healthy cluster of 3: %s", r.stdout)
		}
		versions := 0 // a fresh cluster's followers get the storage version after the leader
		for i, m := range w.Cluster.Members {
			if !m.Answered || m.Name != fmt.Sprintf("member%d", i) || !strings.HasPrefix(m.Endpoint, "https://") || m.LinearizableRead == nil {
				t.Errorf("member %d: %+v", i, m)
			}
			if m.StorageVersion != "" {
				versions++
			}
		}
		if versions == 0 {
			t.Errorf("no member's storage version in the report: %+v", w.Cluster.Members)
		}
		if !strings.Contains(r.stdout, `"members"`) || !strings.Contains(r.stdout, `"findings": []`) {
			t.Errorf("the JSON lacks members[] or findings[]")
		}
	})
	t.Run("text and prom", func(t *testing.T) {
		for _, o := range []string{"text", "prom", "html"} {
			r := runBin(t, runOpts{}, append(append(base, tlsArgs...), "-o", o)...)
			if r.code != exitOK || !strings.Contains(r.stdout, "member0_read_linearizable_p99") && o != "html" {
				t.Errorf("-o %s: exit %d; stderr %s\n%s", o, r.code, r.stderr, r.stdout)
			}
		}
	})
	t.Run("logs", func(t *testing.T) {
		r := runBin(t, runOpts{}, append(append(base, tlsArgs...), "--logs", capture("etcd35-zap-slowdisk.log"), "-o", "json")...)
		if r.code != exitFail {
			t.Fatalf("exit %d, want 1; stderr %s", r.code, r.stderr)
		}
		w := diagnosis(t, r.stdout)
		if len(w.Cluster.Findings) == 0 || w.Cluster.Findings[0].Rule != "slow-disk-logs" || w.Cluster.Findings[0].Member != "logs" {
			t.Errorf("want the log's slow fdatasyncs first: %+v", w.Cluster.Findings)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"no CA", []string{"--endpoints", eps}, "certificate is not accepted"},
		{"plain http to TLS", []string{"--endpoints", strings.ReplaceAll(eps, "https://", "http://")}, "TLS mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, runOpts{}, append([]string{"diagnose", "--window", "100ms", "--timeout", "3s"}, tc.args...)...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.says) {
				t.Fatalf("exit %d, want %d; stderr %q, want %q", r.code, exitUsage, r.stderr, tc.says)
			}
			checkOneErrorLine(t, r.stderr)
		})
	}
}
