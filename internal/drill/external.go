package drill

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Remote is a running cluster of the user's, as a drill's Target: its
// members known by the endpoints given, asked for their status.
type Remote struct {
	cli   *clientv3.Client
	eps   []string
	names []string
	ids   []uint64
}

// pollInterval is how often a cluster's members are asked who leads.
const pollInterval = 20 * time.Millisecond

// Dial reaches every endpoint of cc (each one member) and names its
// member from the member list; Close ends it.
func Dial(ctx context.Context, cc clientv3.Config) (*Remote, error) {
	cc.DialTimeout, cc.Logger = 5*time.Second, zap.NewNop()
	cli, err := clientv3.New(cc)
	if err != nil {
		return nil, err
	}
	c := &Remote{cli: cli, eps: cc.Endpoints}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ml, err := cli.MemberList(sctx)
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("drill: the member list of %v: %w", cc.Endpoints, err)
	}
	for _, ep := range cc.Endpoints {
		st, err := cli.Status(sctx, ep)
		if err != nil {
			cli.Close()
			return nil, fmt.Errorf("drill: %s does not answer: %w", ep, err)
		}
		name := fmt.Sprintf("%x", st.Header.MemberId)
		for _, m := range ml.Members {
			if m.ID == st.Header.MemberId && m.Name != "" {
				name = m.Name
			}
		}
		c.names, c.ids = append(c.names, name), append(c.ids, st.Header.MemberId)
	}
	return c, nil
}

// Close ends the cluster's client.
func (c *Remote) Close() error { return c.cli.Close() }

// Endpoints are the members' client URLs, as given.
func (c *Remote) Endpoints() []string { return c.eps }

// Name is member i's name in the member list.
func (c *Remote) Name(i int) string { return c.names[i] }

// statuses are each member's answer: the leader it names and its term
// (0, 0 when it did not answer).
func (c *Remote) statuses(ctx context.Context) (leader, term []uint64) {
	leader, term = make([]uint64, len(c.eps)), make([]uint64, len(c.eps))
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	for i, ep := range c.eps {
		if st, err := c.cli.Status(sctx, ep); err == nil {
			leader[i], term[i] = st.Leader, st.RaftTerm
		}
	}
	return leader, term
}

// index is the endpoint of member id, or -1.
func (c *Remote) index(id uint64) int {
	for i, x := range c.ids {
		if x == id {
			return i
		}
	}
	return -1
}

// SteadyLeader waits until every member names one leader in one term.
func (c *Remote) SteadyLeader(ctx context.Context) (int, error) {
	return c.poll(ctx, func(leader, term []uint64) int {
		for i := range leader {
			if leader[i] == 0 || leader[i] != leader[0] || term[i] != term[0] {
				return -1
			}
		}
		return c.index(leader[0])
	})
}

// WaitLeader waits until a member other than except says it leads.
func (c *Remote) WaitLeader(ctx context.Context, except int) (int, error) {
	return c.poll(ctx, func(leader, _ []uint64) int {
		for i, l := range leader {
			if i != except && l == c.ids[i] {
				return i
			}
		}
		return -1
	})
}

// errNoLeader is the error of a cluster whose members did not agree on a
// leader in time.
var errNoLeader = errors.New("drill: the members do not agree on a leader")

// poll asks the members until found names a member (not -1).
func (c *Remote) poll(ctx context.Context, found func(leader, term []uint64) int) (int, error) {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if i := found(c.statuses(ctx)); i >= 0 {
			return i, nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return -1, fmt.Errorf("%w: %w", errNoLeader, ctx.Err())
		}
	}
}
