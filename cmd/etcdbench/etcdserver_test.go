package main

// A real etcd server process (Debian's etcd-server, /usr/bin/etcd 3.4) for
// the tests that drive an external cluster: started on free 127.0.0.1
// ports with its data in the test's temporary directory, stopped and
// waited for when the test ends.

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/testutil"
)

// etcdStartTimeout bounds an etcd process's start: generous, for a loaded
// machine.
const etcdStartTimeout = 30 * time.Second

// etcdServerOpts say how to start an etcd process.
type etcdServerOpts struct {
	// TLS serves clients (and /metrics on the client port) over TLS with
	// a throwaway CA, requiring client certificates (--client-cert-auth).
	TLS bool
	// QuotaBackendBytes is --quota-backend-bytes; 0: etcd's default.
	QuotaBackendBytes int64
	// Metrics adds a plain-HTTP --listen-metrics-urls on a port of its own.
	Metrics bool
}

// etcdServer is a running etcd process.
type etcdServer struct {
	// Endpoint is the client URL (https:// with TLS).
	Endpoint string
	// MetricsURL is the plain-HTTP /metrics URL when Metrics was asked.
	MetricsURL string
	// PKI is the CA and the server's and a client's certificates when TLS
	// was asked.
	PKI testutil.PKI
	// DataDir is the member's --data-dir; LogPath holds its log.
	DataDir, LogPath string

	opts etcdServerOpts
	cmd  *exec.Cmd
	done chan struct{}
}

// startEtcdServer starts an etcd process, waits until it answers, and
// stops it when t ends. It skips t when etcd is not installed.
func startEtcdServer(t *testing.T, o etcdServerOpts) *etcdServer {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		t.Skip("etcd is not on PATH (Debian: apt-get install etcd-server): skipping the test against a real etcd process")
	}
	dir := t.TempDir()
	s := &etcdServer{opts: o, DataDir: filepath.Join(dir, "data")}
	if o.TLS {
		s.PKI = testutil.NewPKI(t, dir, "etcd")
	}
	// A port found free may be taken before etcd binds it: try again with
	// other ports.
	var lastErr error
	for attempt := range 3 {
		s.LogPath = filepath.Join(dir, fmt.Sprintf("etcd-%d.log", attempt))
		if lastErr = s.start(t, bin); lastErr == nil {
			return s
		}
		s.stop()
		if err := os.RemoveAll(s.DataDir); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("etcd did not start: %v\n%s", lastErr, s.logTail())
	return nil
}

// start runs etcd once on fresh ports and waits for it to answer.
func (s *etcdServer) start(t *testing.T, bin string) error {
	t.Helper()
	scheme := "http"
	if s.opts.TLS {
		scheme = "https"
	}
	s.Endpoint = fmt.Sprintf("%s://127.0.0.1:%d", scheme, freePort(t))
	peer := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	args := []string{
		"--name", "m0", "--data-dir", s.DataDir,
		"--listen-client-urls", s.Endpoint, "--advertise-client-urls", s.Endpoint,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "m0=" + peer, "--initial-cluster-state", "new",
		"--logger", "zap", "--log-outputs", "stderr",
	}
	if s.opts.Metrics {
		s.MetricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", freePort(t))
		args = append(args, "--listen-metrics-urls", strings.TrimSuffix(s.MetricsURL, "/metrics"))
	}
	if s.opts.TLS {
		args = append(args, "--cert-file", s.PKI.ServerCert, "--key-file", s.PKI.ServerKey,
			"--trusted-ca-file", s.PKI.CA, "--client-cert-auth")
	}
	if s.opts.QuotaBackendBytes > 0 {
		args = append(args, "--quota-backend-bytes", strconv.FormatInt(s.opts.QuotaBackendBytes, 10))
	}
	logf, err := os.Create(s.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	// etcd reads ETCD_* variables as flags: none of the test's may leak in.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETCD_") {
			s.cmd.Env = append(s.cmd.Env, kv)
		}
	}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	s.done = make(chan struct{})
	go func() {
		_ = s.cmd.Wait() // the exit status of a killed etcd says nothing
		close(s.done)
	}()
	t.Cleanup(s.stop)

	cli := s.client(t, "", "")
	defer cli.Close()
	testutil.Poll(etcdStartTimeout, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = cli.Get(ctx, "health-probe")
		cancel()
		return err == nil || s.exited()
	})
	switch {
	case err == nil:
		return nil
	case s.exited():
		return fmt.Errorf("etcd exited: %v", s.cmd.ProcessState)
	}
	return fmt.Errorf("etcd at %s did not answer within %v: %w", s.Endpoint, etcdStartTimeout, err)
}

// stop ends the process (SIGTERM, SIGKILL after 10 s) and waits for it.
func (s *etcdServer) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	if !s.exited() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
}

// exited reports whether the process has ended.
func (s *etcdServer) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// signal sends sig to the etcd process.
func (s *etcdServer) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("sending %v to etcd: %v", sig, err)
	}
}

// logTail returns the end of etcd's log, for failure messages.
func (s *etcdServer) logTail() string {
	b, err := os.ReadFile(s.LogPath)
	if err != nil {
		return "(no etcd log: " + err.Error() + ")"
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// tlsArgs are etcdbench's TLS flags for this server: none without TLS.
func (s *etcdServer) tlsArgs() []string {
	if !s.opts.TLS {
		return nil
	}
	return []string{"--cacert", s.PKI.CA, "--cert", s.PKI.ClientCert, "--key", s.PKI.ClientKey}
}

// client returns a client of the server, as user (none if empty).
func (s *etcdServer) client(t *testing.T, user, password string) *clientv3.Client {
	t.Helper()
	cfg := clientv3.Config{Endpoints: []string{s.Endpoint}, DialTimeout: 5 * time.Second,
		Username: user, Password: password, Logger: zap.NewNop()}
	if s.opts.TLS {
		tc, err := etcdload.TLSFiles{CACert: s.PKI.CA, Cert: s.PKI.ClientCert, Key: s.PKI.ClientKey}.Config()
		if err != nil {
			t.Fatal(err)
		}
		cfg.TLS = tc
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		t.Fatalf("a client of %s: %v", s.Endpoint, err)
	}
	return cli
}

// countKeys returns how many keys are under prefix, read as user.
func (s *etcdServer) countKeys(t *testing.T, prefix, user, password string) int64 {
	t.Helper()
	cli := s.client(t, user, password)
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("counting the keys under %s: %v", prefix, err)
	}
	return resp.Count
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
