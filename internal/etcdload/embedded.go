package etcdload

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// ErrNotReady is returned by StartEmbedded when the members did not become
// ready (elect a leader and serve clients) within Options.StartTimeout.
var ErrNotReady = errors.New("etcdload: embedded etcd not ready")

// DefaultStartTimeout bounds how long StartEmbedded waits for readiness
// when Options.StartTimeout is zero.
const DefaultStartTimeout = 30 * time.Second

// Options configure an embedded etcd. Zero values keep etcd's defaults,
// so only the flags that matter for disk performance are set.
type Options struct {
	// Dir is the directory the members' data directories are created in
	// (member0, member1, ...): etcdbench's scratch directory on the disk
	// under test.
	Dir string
	// Members is 1 or 3; 0 means 1.
	Members int
	// SnapshotCount is etcd's --snapshot-count.
	SnapshotCount uint64
	// HeartbeatInterval is --heartbeat-interval (rounded to milliseconds).
	HeartbeatInterval time.Duration
	// ElectionTimeout is --election-timeout (rounded to milliseconds).
	ElectionTimeout time.Duration
	// QuotaBackendBytes is --quota-backend-bytes.
	QuotaBackendBytes int64
	// BackendBatchInterval is --backend-batch-interval.
	BackendBatchInterval time.Duration
	// BackendBatchLimit is --backend-batch-limit.
	BackendBatchLimit int
	// LogLevel is etcd's log level kept in the cluster's log buffer:
	// debug, info, warn or error; empty means warn.
	LogLevel string
	// StartTimeout bounds the wait for readiness; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// ClientTLS, when its Cert and Key are set, makes the members serve
	// clients and /metrics over TLS (https:// endpoints) with that
	// certificate; with CACert set too, clients must present a
	// certificate signed by that CA (etcd's --client-cert-auth).
	// Peers stay on plain HTTP.
	ClientTLS TLSFiles
}

// Cluster is a running embedded etcd of one or more members in this
// process.
type Cluster struct {
	members   []*embed.Etcd
	endpoints []string
	log       *tailBuffer
	closeOnce sync.Once
}

// StartEmbedded starts opts.Members members on free 127.0.0.1 ports with
// their data inside opts.Dir and waits until they are ready. On error
// every started member is stopped again and the error carries the end of
// etcd's log.
func StartEmbedded(ctx context.Context, opts Options) (*Cluster, error) {
	n := opts.Members
	if n == 0 {
		n = 1
	}
	if n != 1 && n != 3 {
		return nil, fmt.Errorf("etcdload: %d members: want 1 or 3", n)
	}
	if opts.Dir == "" {
		return nil, errors.New("etcdload: no directory for the embedded etcd's data")
	}
	level, err := zapcore.ParseLevel(defaultString(opts.LogLevel, "warn"))
	if err != nil {
		return nil, fmt.Errorf("etcdload: log level %q: %w", opts.LogLevel, err)
	}
	c := &Cluster{log: &tailBuffer{}}
	enc := zapcore.NewConsoleEncoder(zap.NewProductionEncoderConfig())
	lg := zap.New(zapcore.NewCore(enc, zapcore.AddSync(c.log), level))
	// The free ports are released before etcd binds them; when another
	// process takes one in between, start again on new ports.
	for attempt := 1; ; attempt++ {
		err = c.startMembers(opts, n, lg)
		if err == nil {
			break
		}
		c.Close()
		if attempt == portAttempts || !isAddrInUse(err) {
			return nil, c.withLog(err)
		}
		c = &Cluster{log: c.log}
		for i := range n {
			os.RemoveAll(filepath.Join(opts.Dir, memberName(i)))
		}
	}
	if err := c.waitReady(ctx, defaultDuration(opts.StartTimeout, DefaultStartTimeout)); err != nil {
		c.Close()
		return nil, c.withLog(err)
	}
	return c, nil
}

// portAttempts is how often StartEmbedded tries new ports.
const portAttempts = 3

func memberName(i int) string { return fmt.Sprintf("member%d", i) }

func isAddrInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use")
}

// startMembers starts n members on new free ports.
func (c *Cluster) startMembers(opts Options, n int, lg *zap.Logger) error {
	ports, err := freePorts(2 * n)
	if err != nil {
		return err
	}
	var initial []string
	for i := range n {
		initial = append(initial, fmt.Sprintf("%s=http://127.0.0.1:%d", memberName(i), ports[2*i+1]))
	}
	for i := range n {
		cfg, err := memberConfig(opts, memberName(i), ports[2*i], ports[2*i+1], strings.Join(initial, ","))
		if err != nil {
			return err
		}
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg.With(zap.String("member", memberName(i))))
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			return fmt.Errorf("etcdload: starting %s in %s: %w", memberName(i), cfg.Dir, err)
		}
		c.members = append(c.members, e)
		c.endpoints = append(c.endpoints, cfg.AdvertiseClientUrls[0].String())
	}
	return nil
}

// memberConfig is one member's etcd configuration.
func memberConfig(opts Options, name string, clientPort, peerPort int, initial string) (*embed.Config, error) {
	cfg := embed.NewConfig()
	cfg.Name = name
	cfg.Dir = filepath.Join(opts.Dir, name)
	scheme := "http"
	if t := opts.ClientTLS; t.Cert != "" {
		scheme = "https"
		cfg.ClientTLSInfo.CertFile, cfg.ClientTLSInfo.KeyFile = t.Cert, t.Key
		cfg.ClientTLSInfo.TrustedCAFile = t.CACert
		cfg.ClientTLSInfo.ClientCertAuth = t.CACert != ""
	}
	curl, err := url.Parse(fmt.Sprintf("%s://127.0.0.1:%d", scheme, clientPort))
	if err != nil {
		return nil, err
	}
	purl, err := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", peerPort))
	if err != nil {
		return nil, err
	}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*curl}, []url.URL{*curl}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*purl}, []url.URL{*purl}
	cfg.InitialCluster = initial
	cfg.InitialClusterToken = "etcdbench"
	cfg.ClusterState = embed.ClusterStateFlagNew
	cfg.Logger = "zap"
	if opts.SnapshotCount > 0 {
		cfg.SnapshotCount = opts.SnapshotCount
	}
	if opts.HeartbeatInterval > 0 {
		cfg.TickMs = uint(opts.HeartbeatInterval.Milliseconds())
	}
	if opts.ElectionTimeout > 0 {
		cfg.ElectionMs = uint(opts.ElectionTimeout.Milliseconds())
	}
	if opts.QuotaBackendBytes > 0 {
		cfg.QuotaBackendBytes = opts.QuotaBackendBytes
	}
	if opts.BackendBatchInterval > 0 {
		cfg.BackendBatchInterval = opts.BackendBatchInterval
	}
	if opts.BackendBatchLimit > 0 {
		cfg.BackendBatchLimit = opts.BackendBatchLimit
	}
	return cfg, nil
}

// waitReady waits until every member is ready, fails, or the time is up.
func (c *Cluster) waitReady(ctx context.Context, timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for i, e := range c.members {
		select {
		case <-e.Server.ReadyNotify():
		case err := <-e.Err():
			return fmt.Errorf("etcdload: member%d failed while starting: %w", i, err)
		case <-timer.C:
			return fmt.Errorf("%w: member%d not ready after %v (a slow disk or busy ports?)", ErrNotReady, i, timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// freePorts asks the kernel for n distinct free ports on 127.0.0.1. They
// are released before etcd binds them, so another process could take one
// in between; StartEmbedded then tries again on new ports.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("etcdload: finding a free port on 127.0.0.1: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Endpoints returns the members' client URLs.
func (c *Cluster) Endpoints() []string { return append([]string(nil), c.endpoints...) }

// MetricsURLs returns each member's Prometheus /metrics URL. In one
// process the members share one registry, so every URL shows the same,
// process-wide figures.
func (c *Cluster) MetricsURLs() []string {
	urls := make([]string, len(c.endpoints))
	for i, ep := range c.endpoints {
		urls[i] = ep + "/metrics"
	}
	return urls
}

// Log returns the end of etcd's log (at Options.LogLevel and above).
func (c *Cluster) Log() string { return c.log.String() }

// Close stops every member. It can be called more than once. Followers
// stop first, together (each waits up to a second for its peers'
// connections to go idle), then the leader: stopping the leader first or
// all at once makes it try to hand leadership to members that are leaving,
// which takes seconds.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() {
		var wg sync.WaitGroup
		var leaders []*embed.Etcd
		for _, e := range c.members {
			if e.Server != nil && e.Server.Leader() == e.Server.MemberID() {
				leaders = append(leaders, e)
				continue
			}
			wg.Go(e.Close)
		}
		wg.Wait()
		for _, e := range leaders {
			e.Close()
		}
	})
	return nil
}

// withLog appends the end of etcd's log to err.
func (c *Cluster) withLog(err error) error {
	log := strings.TrimSpace(c.log.String())
	if log == "" {
		return err
	}
	const max = 2000
	if len(log) > max {
		log = "..." + log[len(log)-max:]
	}
	return fmt.Errorf("%w; etcd log: %s", err, log)
}

func defaultString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func defaultDuration(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
