package etcdcluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// promoteInterval is how often AddMember asks to promote its learner.
const promoteInterval = 50 * time.Millisecond

// Added is a member AddMember added: its index, when etcd took it in,
// and how long it took from then to be promoted (up to date).
type Added struct {
	Index    int
	At       time.Time
	CaughtUp time.Duration
}

// AddMember adds a member to the member processes, as etcd advises: as
// a learner (a member process of its own, its data beside the others',
// its peers reaching it directly), promoted to a voter once the leader
// has brought it up to date, by the log or, when the log was compacted
// past what it lacks, by the whole db.
func (c *Cluster) AddMember(ctx context.Context) (Added, error) {
	a, err := c.addMember(ctx)
	if err == nil {
		a.CaughtUp = time.Since(a.At)
	}
	return a, err
}

func (c *Cluster) addMember(ctx context.Context) (Added, error) {
	if len(c.procs) < 2 {
		return Added{}, errNotProcs
	}
	ports, err := freePorts(2)
	if err != nil {
		return Added{}, err
	}
	i := len(c.procs)
	name := memberName(i)
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return Added{}, err
	}
	defer cli.Close()
	tick := time.NewTicker(promoteInterval)
	defer tick.Stop()
	// etcd refuses a member until the leader has reached every voter for
	// its health interval (5 s, strict reconfig check): a cluster that
	// just started waits.
	var r *clientv3.MemberAddResponse
	for {
		if r, err = cli.MemberAddAsLearner(ctx, []string{peer}); err == nil {
			break
		}
		if !errors.Is(rpctypes.Error(err), rpctypes.ErrUnhealthy) {
			return Added{}, fmt.Errorf("embedded etcd: adding %s at %s: %w", name, peer, err)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return Added{}, fmt.Errorf("embedded etcd: adding %s: the cluster stayed unhealthy: %w", name, ctx.Err())
		}
	}
	added := Added{Index: i, At: time.Now()}
	var initial []string
	for _, m := range r.Members {
		n := m.Name
		if m.ID == r.Member.ID {
			n = name
		}
		for _, u := range m.PeerURLs {
			initial = append(initial, n+"="+u)
		}
	}
	spec := memberSpec{Options: c.opts, Index: i, ClientPort: ports[0], PeerPort: ports[1], InitialCluster: strings.Join(initial, ","), Existing: true}
	cfg, err := memberConfig(spec.Options, name, spec.ClientPort, spec.PeerPort, "", spec.InitialCluster)
	if err != nil {
		return Added{}, err
	}
	p, err := startMemberProc(c.forker, spec, c.log, c.changed)
	if err != nil {
		return Added{}, err
	}
	c.procs, c.specs = append(c.procs, p), append(c.specs, spec)
	c.endpoints = append(c.endpoints, cfg.AdvertiseClientUrls[0].String())
	for {
		_, err := cli.MemberPromote(ctx, r.Member.ID)
		switch {
		case err == nil:
			return added, nil
		case !errors.Is(rpctypes.Error(err), rpctypes.ErrMemberLearnerNotReady):
			return Added{Index: i}, fmt.Errorf("embedded etcd: promoting %s: %w", name, err)
		case p.exitErr() != nil:
			return Added{Index: i}, fmt.Errorf("embedded etcd: %s ended before it caught up: %w", name, p.exitErr())
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return Added{Index: i}, ctx.Err()
		}
	}
}
