package etcdcluster

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// memberEnv is the environment variable that turns a re-executed
// etcdbench (or test binary) into one member of a multi-member embedded
// cluster; its value is the member's memberSpec as JSON.
const memberEnv = "ETCDBENCH_EMBEDDED_MEMBER"

// memberSpec is everything a member process needs to start its member.
type memberSpec struct {
	Options        Options
	Index          int
	ClientPort     int
	PeerPort       int
	AdvertisedPeer string // host:port its peers reach it at ("": PeerPort)
	InitialCluster string
	// Existing joins a running cluster (--initial-cluster-state
	// existing), as a member added to it.
	Existing bool
}

// memberReport is one line a member process prints on its stdout for the
// parent: State is reportReady once etcd serves clients, reportLeader or
// reportFollower whenever the member's role changes, and reportFailed
// with Error when etcd could not start or stopped on its own.
type memberReport struct {
	State string `json:"state"`
	Error string `json:"error,omitempty"`
}

// Member report states.
const (
	reportReady    = "ready"
	reportLeader   = "leader"
	reportFollower = "follower"
	reportFailed   = "failed"
)

// leaderPoll is how often a member process checks whether it leads.
const leaderPoll = 20 * time.Millisecond

// hookCalled records that this program calls MaybeRunMember, so that
// Start may re-execute it for a multi-member cluster. It is the
// package's one piece of global state: without it a program that forgot
// the hook would re-execute itself as a whole, again and again.
var hookCalled atomic.Bool

// MaybeRunMember runs this process as one member of a multi-member
// embedded cluster when Start started it for that, and returns
// the exit code and true; otherwise it returns at once with false.
//
// etcd registers its Prometheus metrics in the process-wide default
// registry, so members sharing a process would share one /metrics. To
// give each member its own, Start runs every member of a
// 3-member cluster in a child process: it re-executes os.Executable()
// with the member's configuration as JSON in the environment variable
// ETCDBENCH_EMBEDDED_MEMBER. The child starts etcd with its log on
// stderr, reports readiness and its leader role as JSON lines on stdout,
// stops etcd cleanly on SIGTERM, and dies with its parent (SIGKILL from
// the kernel, Pdeathsig).
//
// Every program (and TestMain) that may start a 3-member embedded
// cluster must therefore call it first thing, before parsing flags:
//
//	if code, ok := etcdcluster.MaybeRunMember(); ok {
//		os.Exit(code)
//	}
//
// Start refuses to start three members in a program that did
// not call it.
func MaybeRunMember() (code int, ok bool) {
	hookCalled.Store(true)
	js, ok := os.LookupEnv(memberEnv)
	if !ok {
		return 0, false
	}
	os.Unsetenv(memberEnv)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	if err := runMember(ctx, js, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "etcdbench member:", err)
		return 1, true
	}
	return 0, true
}

// runMember starts the member that js describes, with its log on
// stderr and its reports on stdout, and stops it when ctx ends.
func runMember(ctx context.Context, js string, stdout, stderr io.Writer) error {
	var spec memberSpec
	if err := json.Unmarshal([]byte(js), &spec); err != nil {
		return fmt.Errorf("embedded etcd: bad %s: %w", memberEnv, err)
	}
	reports := json.NewEncoder(stdout)
	report := func(state string, err error) {
		r := memberReport{State: state}
		if err != nil {
			r.Error = err.Error()
		}
		_ = reports.Encode(r) // the parent is gone: Pdeathsig ends this process
	}
	fail := func(err error) error {
		report(reportFailed, err)
		return err
	}
	name := memberName(spec.Index)
	level, err := zapcore.ParseLevel(cmp.Or(spec.Options.LogLevel, "warn"))
	if err != nil {
		return fail(fmt.Errorf("embedded etcd: log level %q: %w", spec.Options.LogLevel, err))
	}
	enc := zapcore.NewConsoleEncoder(zap.NewProductionEncoderConfig())
	lg := zap.New(zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(stderr)), level)).With(zap.String("member", name))
	cfg, err := memberConfig(spec.Options, name, spec.ClientPort, spec.PeerPort, spec.AdvertisedPeer, spec.InitialCluster)
	if err != nil {
		return fail(err)
	}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg)
	if spec.Existing {
		cfg.ClusterState = embed.ClusterStateFlagExisting
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fail(fmt.Errorf("embedded etcd: starting %s in %s: %w", name, cfg.Dir, err))
	}
	// Until it is ready, the member is left to die with the process (the
	// parent kills an unready member): closing a member that waits for
	// its peers blocks until etcd's publish timeout.
	select {
	case <-e.Server.ReadyNotify():
		report(reportReady, nil)
	case err := <-e.Err():
		return fail(fmt.Errorf("embedded etcd: %s failed while starting: %w", name, err))
	case <-ctx.Done():
		return nil
	}
	defer e.Close()
	// The parent asks who leads to stop the leader last and to aim loads
	// at it; without a client (which client TLS may forbid) it learns it
	// here.
	tick := time.NewTicker(leaderPoll)
	defer tick.Stop()
	leads, known := false, false
	for {
		if l := e.Server.Leader() == e.Server.MemberID(); l != leads || !known {
			leads, known = l, true
			report(map[bool]string{true: reportLeader, false: reportFollower}[l], nil)
		}
		select {
		case <-tick.C:
		case err := <-e.Err():
			return fail(fmt.Errorf("embedded etcd: %s stopped: %w", name, err))
		case <-ctx.Done():
			return nil
		}
	}
}
