package etcdcluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/types"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/membership"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"etcdbench/internal/inproc"
	"etcdbench/internal/peernet"
)

// ErrNotReady is returned by Start when the members did not become
// ready (elect a leader and serve clients) within Options.StartTimeout.
var ErrNotReady = errors.New("embedded etcd not ready")

// DefaultStartTimeout bounds how long Start waits for readiness
// when Options.StartTimeout is zero.
const DefaultStartTimeout = 30 * time.Second

// Options configure an embedded etcd. Zero values keep etcd's defaults,
// so only the flags that matter for disk performance are set.
type Options struct {
	// Dir is the directory the members' data directories are created in
	// (member0, member1, ...): etcdbench's scratch directory on the disk
	// under test.
	Dir string
	// Members is 1 or 3; 0 means 1. One member runs in this process
	// (unless OwnProcess), three each in a child process (see
	// MaybeRunMember).
	Members int
	// SnapshotCount is etcd's --snapshot-count.
	SnapshotCount uint64
	// NoPreVote turns off raft's pre-vote (etcd's --pre-vote=false, the
	// default before etcd 3.5): a member cut off from the others raises
	// its term campaigning, and deposes the leader when it comes back.
	NoPreVote bool
	// SnapshotCatchUpEntries is etcd's --snapshot-catchup-entries: the
	// entries kept in the raft log after a snapshot for a slow follower;
	// one further behind gets the whole db (a member added, AddMember).
	SnapshotCatchUpEntries uint64
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
	// UnsafeNoFsync is etcd's --unsafe-no-fsync: the WAL and the backend
	// skip fsync, so the storage costs etcd (almost) nothing and what it
	// carries is set by the CPUs. Only for measuring that: data written
	// so is lost in a crash.
	UnsafeNoFsync bool
	// LogLevel is etcd's log level kept in the cluster's log buffer:
	// debug, info, warn or error; empty means warn.
	LogLevel string
	// OwnProcess runs even a single member in a child process, as three
	// always are: etcd then has its own Go runtime and threads, apart from
	// the load generator's, as in a real deployment (see MaybeRunMember).
	OwnProcess bool
	// StartTimeout bounds the wait for readiness; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// ClientTLS, when its Cert and Key are set, makes the members serve
	// clients and /metrics over TLS (https:// endpoints) with that
	// certificate; with CACert set too, clients must present a
	// certificate signed by that CA (etcd's --client-cert-auth).
	// Peers stay on plain HTTP.
	ClientTLS TLSFiles
	// PeerRTT, when set, is the round trip between every two members:
	// each member's peers reach it through a link of this process
	// (peernet) that holds every byte for half of it in each direction,
	// so that the members, on one machine, talk as members PeerRTT apart
	// do. PeerJitter (at most PeerRTT) spreads each round trip uniformly
	// over PeerRTT ± PeerJitter. Three members only.
	PeerRTT, PeerJitter time.Duration
	// MemberRTT, when set, puts members further: MemberRTT[i] (0: none)
	// is member i's round trip to every other member (a far zone). The
	// round trip between two members is the largest of PeerRTT and their
	// own; each connection's delay is its pair's, by the member that
	// opened it (peernet.Link.SetFrom). Three members only.
	MemberRTT []time.Duration
	// Links puts a link in front of every member's peer port even when
	// the members are not apart, so that a member can be cut off from
	// the others (Cluster.Partition). Three members only.
	Links bool
}

// apart says whether the members' peers reach them through links.
func (o Options) apart() bool {
	return o.PeerRTT > 0 || slices.ContainsFunc(o.MemberRTT, func(d time.Duration) bool { return d > 0 })
}

// linked says whether the members' peers reach them through links.
func (o Options) linked() bool { return o.apart() || o.Links }

// LargestRTT is the largest round trip between two members, jitter
// included (0: the members are not apart).
func (o Options) LargestRTT() time.Duration {
	if !o.apart() {
		return 0
	}
	rtt := o.PeerRTT
	for _, d := range o.MemberRTT {
		rtt = max(rtt, d)
	}
	return rtt + o.PeerJitter
}

// PairRTT is the round trip between members i and j: the largest of
// PeerRTT and their own MemberRTT.
func (o Options) PairRTT(i, j int) time.Duration {
	rtt := o.PeerRTT
	for _, m := range []int{i, j} {
		if m < len(o.MemberRTT) {
			rtt = max(rtt, o.MemberRTT[m])
		}
	}
	return rtt
}

// TLSFiles name the certificate files the members serve clients (and
// /metrics) with.
type TLSFiles struct {
	// Cert and Key are the members' server certificate and key.
	Cert, Key string
	// CACert, when set, verifies the certificates that clients must
	// present.
	CACert string
}

// Cluster is a running embedded etcd: one member in this process, or
// three members each in a child process of its own (see MaybeRunMember),
// so that each serves its own /metrics.
type Cluster struct {
	members []*embed.Etcd // the member in this process
	procs   []*memberProc // the members in child processes
	forker  *forker       // the thread procs were forked from
	changed chan struct{} // a value after a report of any of procs
	// endpoints are the members' client URLs, in member order.
	endpoints []string
	log       *tailBuffer
	closeOnce sync.Once
	closeErr  error
	// stopGrace bounds each in-process member's Close (0:
	// memberStopGrace).
	stopGrace time.Duration
	// links are the members' peer links (Options.PeerRTT), in member
	// order; none without a round trip.
	links []*peernet.Link
	// ids are the members' IDs in hex (as their peer requests'
	// X-Server-From carries them), in member order, when there are links.
	ids []string
	// specs are the member processes' specs, for a restart (Restart).
	specs []memberSpec
	// opts and lg are what the members were started with, for a learner
	// added later (AddLearner).
	opts Options
	lg   *zap.Logger
}

// Start starts opts.Members members on free 127.0.0.1 ports with
// their data inside opts.Dir and waits until they are ready. One member
// runs in this process; three run in child processes of it, which needs
// MaybeRunMember at the start of the program. On error every started
// member is stopped again and the error carries the end of etcd's log.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	return start(ctx, opts, freePorts)
}

// start is Start with the ports from pickPorts.
func start(ctx context.Context, opts Options, pickPorts func(n int) ([]int, error)) (*Cluster, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	n := max(opts.Members, 1)
	if opts.Dir == "" {
		return nil, errors.New("no directory for the embedded etcd's data")
	}
	level, err := zapcore.ParseLevel(cmp.Or(opts.LogLevel, "warn"))
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: log level %q: %w", opts.LogLevel, err)
	}
	if n > 1 || opts.OwnProcess {
		if !hookCalled.Load() {
			return nil, errors.New("the members of a 3-member embedded etcd (or one with OwnProcess) run in child processes of this program, " +
				"and it does not call etcdcluster.MaybeRunMember at the start of main (or TestMain): add the call")
		}
		// The members inherit the working directory, but say plainly
		// where their data is.
		if opts.Dir, err = filepath.Abs(opts.Dir); err != nil {
			return nil, err
		}
	}
	timeout := cmp.Or(opts.StartTimeout, DefaultStartTimeout)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	c := &Cluster{log: &tailBuffer{}, opts: opts}
	enc := zapcore.NewConsoleEncoder(zap.NewProductionEncoderConfig())
	lg := zap.New(zapcore.NewCore(enc, zapcore.AddSync(c.log), level))
	c.lg = lg
	// The free ports are released before etcd binds them; when another
	// process takes one in between, start again on new ports.
	for attempt := 1; ; attempt++ {
		err = c.start(ctx, opts, n, lg, pickPorts, timer.C, timeout)
		if err == nil {
			return c, nil
		}
		c.Close()
		if attempt == portAttempts || !isAddrInUse(err) {
			return nil, c.withLog(err)
		}
		c = &Cluster{log: c.log, opts: opts, lg: lg}
		for i := range n {
			os.RemoveAll(memberDir(opts.Dir, i))
		}
	}
}

// portAttempts is how often Start tries new ports.
const portAttempts = 3

// memberIDs are the members' IDs (as their requests' X-Server-From
// carries them, in hex) by index: etcd's own computation for a member of
// an initial cluster (membership.NewMember), from its advertised peer
// address and the cluster's token.
func memberIDs(advertised []string) (map[string]int, error) {
	ids := map[string]int{}
	for i, a := range advertised {
		u, err := types.NewURLs([]string{"http://" + a})
		if err != nil {
			return nil, err
		}
		ids[membership.NewMember(memberName(i), u, clusterToken, nil).ID.String()] = i
	}
	return ids, nil
}

// clusterToken is the members' --initial-cluster-token.
const clusterToken = "etcdbench"

func memberName(i int) string { return fmt.Sprintf("member%d", i) }

// memberDir is member i's data directory.
func memberDir(dir string, i int) string { return filepath.Join(dir, memberName(i)) }

func isAddrInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use")
}

// start starts n members on new free ports and waits until they are
// ready, the timer fires or ctx ends.
func (c *Cluster) start(ctx context.Context, opts Options, n int, lg *zap.Logger, pickPorts func(int) ([]int, error), timer <-chan time.Time, timeout time.Duration) error {
	ports, err := pickPorts(2 * n)
	if err != nil {
		return err
	}
	// A member's peers reach it at its advertised peer address: its link
	// when the members are PeerRTT apart, its own port otherwise.
	advertised := make([]string, n)
	for i := range n {
		advertised[i] = fmt.Sprintf("127.0.0.1:%d", ports[2*i+1])
		if opts.linked() {
			// A connection whose opener is not known (etcd's prober's)
			// gets this member's own distance.
			own := opts.PairRTT(i, i)
			l, err := peernet.Listen(advertised[i], own/2, min(opts.PeerJitter, own)/2)
			if err != nil {
				return fmt.Errorf("embedded etcd: %s's peer link: %w", memberName(i), err)
			}
			c.links = append(c.links, l)
			advertised[i] = l.Addr()
		}
	}
	if len(c.links) == n {
		// Each connection gets its pair's delay, by the member ID its
		// requests carry (etcd's own, computed as etcd does for an
		// initial cluster); a partition holds a member's connections by
		// it.
		ids, err := memberIDs(advertised)
		if err != nil {
			return err
		}
		c.ids = make([]string, n)
		for id, i := range ids {
			c.ids[i] = id
		}
		for j, l := range c.links {
			l.SetFrom(func(sender string) (time.Duration, bool) {
				i, ok := ids[sender]
				return opts.PairRTT(i, j) / 2, ok
			})
		}
	}
	var initial []string
	for i := range n {
		initial = append(initial, fmt.Sprintf("%s=http://%s", memberName(i), advertised[i]))
	}
	forked := n > 1 || opts.OwnProcess
	if forked {
		c.forker, c.changed = newForker(), make(chan struct{}, 1)
	}
	for i := range n {
		cfg, err := memberConfig(opts, memberName(i), ports[2*i], ports[2*i+1], advertised[i], strings.Join(initial, ","))
		if err != nil {
			return err
		}
		c.endpoints = append(c.endpoints, cfg.AdvertiseClientUrls[0].String())
		if forked {
			spec := memberSpec{Options: opts, Index: i, ClientPort: ports[2*i], PeerPort: ports[2*i+1], AdvertisedPeer: advertised[i], InitialCluster: strings.Join(initial, ",")}
			p, err := startMemberProc(c.forker, spec, c.log, c.changed)
			if err != nil {
				return err
			}
			c.procs = append(c.procs, p)
			c.specs = append(c.specs, spec)
			continue
		}
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg.With(zap.String("member", memberName(i))))
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			return fmt.Errorf("embedded etcd: starting %s in %s: %w", memberName(i), cfg.Dir, err)
		}
		c.members = append(c.members, e)
		inproc.EtcdMembers.Add(1)
	}
	return c.waitReady(ctx, timer, timeout)
}

// memberConfig is one member's etcd configuration: it listens for peers
// on peerPort and advertises advertised ("host:port"; "": that port).
func memberConfig(opts Options, name string, clientPort, peerPort int, advertised, initial string) (*embed.Config, error) {
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
	aurl := *purl
	if advertised != "" {
		aurl.Host = advertised
	}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*purl}, []url.URL{aurl}
	cfg.InitialCluster = initial
	cfg.InitialClusterToken = clusterToken
	cfg.ClusterState = embed.ClusterStateFlagNew
	cfg.Logger = "zap"
	if opts.SnapshotCount > 0 {
		cfg.SnapshotCount = opts.SnapshotCount
	}
	cfg.PreVote = !opts.NoPreVote
	if opts.SnapshotCatchUpEntries > 0 {
		cfg.SnapshotCatchUpEntries = opts.SnapshotCatchUpEntries
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
	cfg.UnsafeNoFsync = opts.UnsafeNoFsync
	return cfg, nil
}

// waitReady waits until every member is ready, one fails, the timer
// fires or ctx ends.
func (c *Cluster) waitReady(ctx context.Context, timer <-chan time.Time, timeout time.Duration) error {
	for i, e := range c.members {
		select {
		case <-e.Server.ReadyNotify():
		case err := <-e.Err():
			return fmt.Errorf("embedded etcd: member%d failed while starting: %w", i, err)
		case <-timer:
			return fmt.Errorf("%w: member%d not ready after %v (a slow disk or busy ports?)", ErrNotReady, i, timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if len(c.procs) == 0 {
		return nil
	}
	for {
		notReady := -1
		for i, p := range c.procs {
			if err := p.exitErr(); err != nil {
				return fmt.Errorf("embedded etcd: member%d failed while starting: %w", i, err)
			}
			if notReady < 0 && !p.isReady() {
				notReady = i
			}
		}
		if notReady < 0 {
			return nil
		}
		select {
		case <-c.changed:
		case <-timer:
			return fmt.Errorf("%w: member%d not ready after %v (a slow disk or busy ports?)", ErrNotReady, notReady, timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// freePorts asks the kernel for n distinct free ports on 127.0.0.1. They
// are released before etcd binds them, so another process could take one
// in between; Start then tries again on new ports.
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
			return nil, fmt.Errorf("embedded etcd: finding a free port on 127.0.0.1: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// PIDs returns the process ids of the members that run in child
// processes (three members, or Options.OwnProcess), in member order; none
// for a member in this process.
func (c *Cluster) PIDs() []int {
	var out []int
	for _, p := range c.procs {
		out = append(out, p.cmd.Process.Pid)
	}
	return out
}

// Endpoints returns the members' client URLs.
func (c *Cluster) Endpoints() []string { return append([]string(nil), c.endpoints...) }

// MetricsURLs returns each member's Prometheus /metrics URL. A member in
// a process of its own (three members) has its own registry, so each
// URL shows that member's figures.
func (c *Cluster) MetricsURLs() []string {
	urls := make([]string, len(c.endpoints))
	for i, ep := range c.endpoints {
		urls[i] = ep + "/metrics"
	}
	return urls
}

// Log returns the end of etcd's log (at Options.LogLevel and above), all
// members' lines interleaved; each line names its member.
func (c *Cluster) Log() string { return c.log.String() }

// leaderPollInterval is how often Leader looks again during an election.
const leaderPollInterval = 10 * time.Millisecond

// Leader returns the index of the member that leads (0 for one member).
// While no member leads, or for a moment two claim to, it waits for the
// election to end, until ctx ends. A member that is gone is an error.
func (c *Cluster) Leader(ctx context.Context) (int, error) {
	tick := time.NewTicker(leaderPollInterval)
	defer tick.Stop()
	for {
		lead, leaders := -1, 0
		for i, e := range c.members {
			if e.Server.Leader() == e.Server.MemberID() {
				lead, leaders = i, leaders+1
			}
		}
		for i, p := range c.procs {
			if err := p.exitErr(); err != nil {
				return -1, fmt.Errorf("embedded etcd: asking who leads: %w", err)
			}
			if p.leader.Load() {
				lead, leaders = i, leaders+1
			}
		}
		if leaders == 1 {
			return lead, nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return -1, fmt.Errorf("embedded etcd: %d of %d members claim to lead: %w", leaders, len(c.endpoints), ctx.Err())
		}
	}
}

// Failover is what killing a cluster's leader showed: the member killed
// and how long the others took until one of them led.
type Failover struct {
	Killed int
	Took   time.Duration
}

// KillLeader kills the leading member's process (SIGKILL: a crash, not
// a stop, which would hand its leadership over first) and times, from
// the kill, until another member reports that it leads (each reports
// within 20 ms of a change): the election timeout a crash costs, with the
// round trips of the vote. Members in processes of their own only (three
// members are). The killed member stays down; Close does not count it a
// failure.
func (c *Cluster) KillLeader(ctx context.Context) (Failover, error) {
	if len(c.procs) < 2 {
		return Failover{}, errors.New("embedded etcd: a leader is killed only among member processes")
	}
	old, err := c.Leader(ctx)
	if err != nil {
		return Failover{}, err
	}
	t0 := time.Now()
	if err := c.Kill(ctx, old); err != nil {
		return Failover{}, err
	}
	if _, err := c.WaitLeader(ctx, old); err != nil {
		return Failover{Killed: old}, fmt.Errorf("embedded etcd: no member led within %v of killing %s: %w", time.Since(t0).Round(time.Millisecond), memberName(old), err)
	}
	return Failover{Killed: old, Took: time.Since(t0)}, nil
}

// Close stops every member. It can be called more than once, also on a
// nil Cluster. Followers stop first, together (each waits up to a second
// for its peers' connections to go idle), then the leader: stopping the
// leader first or all at once makes it try to hand leadership to members
// that are leaving, which takes seconds. A member process gets SIGTERM
// and memberStopGrace to stop before it is killed; Close returns an
// error when one had to be killed or had failed.
func (c *Cluster) Close() error {
	if c == nil {
		return nil
	}
	c.closeOnce.Do(func() {
		grace := c.stopGrace
		if grace == 0 {
			grace = memberStopGrace
		}
		var wg sync.WaitGroup
		var leaders []int
		errs := make([]error, len(c.members))
		for i, e := range c.members {
			if e.Server != nil && e.Server.Leader() == e.Server.MemberID() {
				leaders = append(leaders, i)
				continue
			}
			wg.Go(func() { errs[i] = closeMember(i, e, grace) })
		}
		wg.Wait()
		for _, i := range leaders {
			errs[i] = closeMember(i, c.members[i], grace)
		}
		c.closeErr = errors.Join(append(errs, c.stopProcs())...)
		for _, l := range c.links {
			_ = l.Close()
		}
		inproc.EtcdMembers.Add(-int32(len(c.members)))
		if c.forker != nil {
			c.forker.close()
		}
	})
	return c.closeErr
}

// closeMember stops an in-process member, waiting at most grace for
// etcd's Close. Close first waits for its client connections to end, and
// one that never sends a request (a client that connected and went
// silent) holds it forever; then the member's server is stopped directly
// so that its WAL and backend are closed before the scratch directory is
// removed, and the rest of Close is left behind.
func closeMember(i int, e *embed.Etcd, grace time.Duration) error {
	closed := make(chan struct{})
	go func() {
		e.Close()
		close(closed)
	}()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-closed:
		return nil
	case <-timer.C:
	}
	stopped := make(chan struct{})
	go func() {
		e.Server.Stop()
		close(stopped)
	}()
	timer.Reset(grace)
	select {
	case <-stopped:
		return fmt.Errorf("embedded etcd: member%d did not stop within %v (a client connection that never sent a request holds etcd's Close); its server was stopped directly", i, grace)
	case <-timer.C:
		return fmt.Errorf("embedded etcd: member%d did not stop within %v", i, 2*grace)
	}
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
