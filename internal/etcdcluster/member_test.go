package etcdcluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/testutil"
)

// orphanHelperEnv makes the test binary a stand-in for etcdbench that
// starts a 3-member cluster in the directory the variable names, prints
// its members' process ids and waits to be killed.
const orphanHelperEnv = "ETCDCLUSTER_TEST_ORPHAN_HELPER"

// runOrphanHelper is the test binary run with orphanHelperEnv.
func runOrphanHelper(dir string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Start(ctx, Options{Dir: dir, Members: 3})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	if err := json.NewEncoder(os.Stdout).Encode(c.PIDs()); err != nil {
		return 1
	}
	<-ctx.Done() // killed long before
	return 0
}

// memberProcessAlive reports whether pid is a member process that has not
// exited: it exists, is not a zombie, and is named etcdbench-member*.
func memberProcessAlive(t *testing.T, pid int) bool {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return false
	}
	if err != nil {
		t.Fatalf("reading the state of process %d: %v", pid, err)
	}
	// pid (comm) state ...: comm may hold spaces, the state follows the
	// last parenthesis.
	if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.HasPrefix(cmdline, []byte("etcdbench-member"))
}

// waitGone waits up to 15 s for every pid to be gone.
func waitGone(t *testing.T, pids []int) {
	t.Helper()
	var alive []int
	if testutil.Poll(15*time.Second, func() bool {
		alive = nil
		for _, pid := range pids {
			if memberProcessAlive(t, pid) {
				alive = append(alive, pid)
			}
		}
		return len(alive) == 0
	}) {
		return
	}
	for _, pid := range alive {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	t.Fatalf("member processes %v still run", alive)
}

func TestEmbeddedMembersDieWithParent(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), orphanHelperEnv+"="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	line := make(chan []byte, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Scan()
		line <- sc.Bytes()
	}()
	var pids []int
	select {
	case l := <-line:
		if err := json.Unmarshal(l, &pids); err != nil || len(pids) != 3 {
			cmd.Process.Kill()
			cmd.Wait()
			killed = true
			t.Fatalf("helper printed %q, want 3 process ids (%v); stderr:\n%s", l, err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the helper did not start its cluster within 60 s")
	}
	for _, pid := range pids {
		if !memberProcessAlive(t, pid) || pid == cmd.Process.Pid {
			t.Fatalf("process %d is not a running member (helper %d)", pid, cmd.Process.Pid)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed = true
	waitGone(t, pids)
}

func TestEmbeddedThreeMembersRetryBusyPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	calls := 0
	pick := func(n int) ([]int, error) {
		calls++
		ports, err := freePorts(n)
		if calls == 1 && err == nil {
			ports[3] = busy.Addr().(*net.TCPAddr).Port // member1's peer port
		}
		return ports, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := start(ctx, Options{Dir: t.TempDir(), Members: 3}, pick)
	if err != nil {
		t.Fatalf("start with a busy port first: %v", err)
	}
	defer c.Close()
	if calls != 2 {
		t.Errorf("ports picked %d times, want 2 (a retry after the busy port)", calls)
	}
	if !strings.Contains(c.Log(), "address already in use") {
		t.Errorf("the log does not mention the busy port:\n%s", c.Log())
	}
	if _, err := c.Leader(ctx); err != nil {
		t.Errorf("after the retry: %v", err)
	}
}

func TestEmbeddedThreeMembersNeedHook(t *testing.T) {
	hookCalled.Store(false)
	defer hookCalled.Store(true)
	_, err := Start(context.Background(), Options{Dir: t.TempDir(), Members: 3})
	if err == nil || !strings.Contains(err.Error(), "MaybeRunMember") {
		t.Errorf("3 members without the hook: %v, want an error naming MaybeRunMember", err)
	}
}

func TestLineWriter(t *testing.T) {
	var dst bytes.Buffer
	w := &lineWriter{dst: &dst}
	for _, s := range []string{"a", "b\nc", "d\ne\n", "f"} {
		w.Write([]byte(s))
	}
	if got := dst.String(); got != "ab\ncd\ne\n" {
		t.Errorf("before flush: %q", got)
	}
	w.flush()
	if got := dst.String(); got != "ab\ncd\ne\nf\n" {
		t.Errorf("after flush: %q", got)
	}
}

// TestMemberSpecCarriesEveryOption: every Options field survives the
// JSON that carries it to a member process. A field added to Options
// fails here until it is set below and survives.
func TestMemberSpecCarriesEveryOption(t *testing.T) {
	spec := memberSpec{
		Options: Options{
			Dir: "/d", Members: 3, SnapshotCount: 7, HeartbeatInterval: 3 * time.Millisecond,
			ElectionTimeout: 40 * time.Millisecond, QuotaBackendBytes: 1 << 30, BackendBatchInterval: 5 * time.Millisecond,
			BackendBatchLimit: 9, LogLevel: "debug", OwnProcess: true, StartTimeout: time.Minute, UnsafeNoFsync: true,
			ClientTLS: TLSFiles{CACert: "ca", Cert: "c", Key: "k"}, PeerRTT: 50 * time.Millisecond, PeerJitter: time.Millisecond,
			MemberRTT: []time.Duration{0, 0, 80 * time.Millisecond}, Links: true, NoPreVote: true, SnapshotCatchUpEntries: 11,
		},
		Index: 2, ClientPort: 1, PeerPort: 2, AdvertisedPeer: "127.0.0.1:3", InitialCluster: "member0=http://127.0.0.1:3", Existing: true,
	}
	var zero func(v reflect.Value, path string)
	zero = func(v reflect.Value, path string) {
		for i := range v.NumField() {
			f, name := v.Field(i), path+"."+v.Type().Field(i).Name
			if f.Kind() == reflect.Struct {
				zero(f, name)
			} else if f.IsZero() {
				t.Errorf("%s is not set in this test", name)
			}
		}
	}
	zero(reflect.ValueOf(spec), "memberSpec")
	js, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var got memberSpec
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, spec) {
		t.Errorf("after JSON: %+v, want %+v", got, spec)
	}
}

// writeSelfSignedCert writes a certificate for 127.0.0.1 that is its own
// CA and serves as server and client certificate.
func writeSelfSignedCert(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "etcdload-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for _, f := range []struct {
		path, typ string
		der       []byte
	}{{cert, "CERTIFICATE", der}, {key, "EC PRIVATE KEY", kder}} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return cert, key
}

// TestEmbeddedThreeMembersHonourOptions: the member processes run with
// the options given: client TLS with client certificates, the log level,
// the raft timings, snapshot count and quota (in etcd's own start-up
// log and metrics), and the backend batch limit (a commit per put).
func TestEmbeddedThreeMembersHonourOptions(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeSelfSignedCert(t, dir)
	const quota = 1<<30 + 4096
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Start(ctx, Options{
		Dir: filepath.Join(dir, "data"), Members: 3, LogLevel: "info",
		HeartbeatInterval: 50 * time.Millisecond, ElectionTimeout: 600 * time.Millisecond,
		SnapshotCount: 1234, QuotaBackendBytes: quota,
		BackendBatchInterval: 10 * time.Millisecond, BackendBatchLimit: 1,
		ClientTLS: TLSFiles{Cert: cert, Key: key, CACert: cert},
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer c.Close()
	log := c.Log()
	for i := range 3 {
		var line string
		for l := range strings.Lines(log) {
			if strings.Contains(l, "starting an etcd server") && strings.Contains(l, fmt.Sprintf(`"member": "member%d"`, i)) {
				line = l
			}
		}
		if line == "" {
			t.Errorf("member%d logged no start at info level:\n%s", i, log)
			continue
		}
		for _, want := range []string{`"heartbeat-interval": "50ms"`, `"election-timeout": "600ms"`, `"snapshot-count": 1234`, fmt.Sprintf(`"quota-backend-bytes": %d`, quota)} {
			if !strings.Contains(line, want) {
				t.Errorf("member%d started without %s: %s", i, want, line)
			}
		}
	}

	tcfg, err := etcdload.TLSFiles{CACert: cert, Cert: cert, Key: key}.Config()
	if err != nil {
		t.Fatal(err)
	}
	hc := etcdload.HTTPClient(tcfg)
	commits := func() []float64 {
		var out []float64
		for _, u := range c.MetricsURLs() {
			if !strings.HasPrefix(u, "https://") {
				t.Fatalf("metrics URL %s without TLS", u)
			}
			f, err := metrics.Scrape(ctx, hc, u)
			if err != nil {
				t.Fatalf("scraping %s over TLS: %v", u, err)
			}
			if q, err := metrics.ValueOf(f, "etcd_server_quota_backend_bytes"); err != nil || q != quota {
				t.Errorf("%s: quota %v (%v), want %d", u, q, err, quota)
			}
			h, err := metrics.HistogramOf(f, etcdload.BackendCommitMetric)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, h.Count)
		}
		return out
	}
	before := commits()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), TLS: tcfg, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	const puts = 20
	for i := range puts {
		if _, err := cli.Put(ctx, fmt.Sprintf("k%d", i), "v"); err != nil {
			t.Fatalf("put over TLS: %v", err)
		}
	}
	// With a batch limit of 1 every applied put is its own commit, on
	// the followers too once they have applied it.
	var after []float64
	testutil.Poll(10*time.Second, func() bool { // the check below says what is missing
		after = commits()
		done := true
		for i := range after {
			done = done && after[i]-before[i] >= puts
		}
		return done
	})
	for i := range after {
		if after[i]-before[i] < puts {
			t.Errorf("member%d: %v backend commits for %d puts with a batch limit of 1", i, after[i]-before[i], puts)
		}
	}
}

func TestMemberEnvironHidesThePassword(t *testing.T) {
	got := memberEnviron([]string{"PATH=/bin", "ETCDBENCH_PASSWORD=secret", "HOME=/root", "ETCDBENCH_PASSWORDX=kept"})
	if strings.Join(got, " ") != "PATH=/bin HOME=/root ETCDBENCH_PASSWORDX=kept" {
		t.Errorf("member environment %q", got)
	}
}
