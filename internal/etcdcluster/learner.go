package etcdcluster

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"etcdbench/internal/inproc"
)

// learnerName is the added member's name and data directory in
// Options.Dir.
const learnerName = "learner"

// Learner is a member added to a running cluster as a learner (a
// non-voting member that the leader brings up to date: by sending its
// snapshot when its log no longer holds what the learner lacks) and
// started in this process on an empty data directory beside the others.
type Learner struct {
	// ID is the learner's member ID; Leader the ID of the member that
	// added it (the leader of a single-member cluster).
	ID, Leader uint64
	// Endpoint is its client URL (its /metrics under it).
	Endpoint string
	c        *Cluster
	e        *embed.Etcd
	dir      string
}

// ErrLearner is matched by AddLearner's error when the cluster cannot
// take a learner this way.
var ErrLearner = errors.New("embedded etcd: cannot add a learner")

// AddLearner adds a learner to c, whose one member runs in this process
// with plain-HTTP clients, and starts it in this process. It returns
// once the learner runs; it is not ready before it caught up, so the
// caller waits on what it needs (its metrics, its log). Close removes it
// again.
func (c *Cluster) AddLearner(ctx context.Context) (*Learner, error) {
	if len(c.members) != 1 || len(c.procs) != 0 || c.opts.ClientTLS.Cert != "" {
		return nil, fmt.Errorf("%w: only to a single member in this process without client TLS", ErrLearner)
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.endpoints, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: a client of %v: %w", c.endpoints, err)
	}
	defer cli.Close()
	r, err := cli.MemberAddAsLearner(ctx, []string{peer})
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: adding a learner at %s: %w", peer, err)
	}
	l := &Learner{ID: r.Member.ID, Leader: r.Header.MemberId, c: c}
	var initial []string
	for _, m := range r.Members {
		name := m.Name
		if m.ID == l.ID {
			name = learnerName
		}
		for _, u := range m.PeerURLs {
			initial = append(initial, name+"="+u)
		}
	}
	cfg, err := memberConfig(c.opts, learnerName, ports[0], ports[1], "", strings.Join(initial, ","))
	if err != nil {
		return nil, errors.Join(err, l.remove(ctx))
	}
	cfg.ClusterState = embed.ClusterStateFlagExisting
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(c.lg.With(zap.String("member", learnerName)))
	l.dir, l.Endpoint = cfg.Dir, (&url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[0])}).String()
	if l.e, err = embed.StartEtcd(cfg); err != nil {
		return nil, errors.Join(fmt.Errorf("embedded etcd: starting a learner in %s: %w", cfg.Dir, err), l.remove(ctx), os.RemoveAll(l.dir))
	}
	inproc.EtcdMembers.Add(1)
	return l, nil
}

// remove removes the learner from the cluster's membership.
func (l *Learner) remove(ctx context.Context) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: l.c.endpoints, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	if _, err := cli.MemberRemove(ctx, l.ID); err != nil {
		return fmt.Errorf("embedded etcd: removing the learner %x: %w", l.ID, err)
	}
	return nil
}

// Close removes the learner from the cluster, stops it and removes its
// data directory, so that the cluster is as before AddLearner.
func (l *Learner) Close(ctx context.Context) error {
	err := l.remove(ctx)
	grace := l.c.stopGrace
	if grace == 0 {
		grace = memberStopGrace
	}
	err = errors.Join(err, closeMember(1, l.e, grace))
	inproc.EtcdMembers.Add(-1)
	return errors.Join(err, os.RemoveAll(l.dir))
}
