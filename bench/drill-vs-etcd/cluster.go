package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"etcdbench/bench/internal/cmp"
)

// pollEvery is how often the leader and a restarted member's health
// are polled.
const pollEvery = 10 * time.Millisecond

// cluster is a real three-member etcd cluster, each member its own
// process in its own cgroup, with a client of its own to each member for
// its status.
type cluster struct {
	members []*cmp.EtcdBinary
	names   []string
	ids     []uint64 // raft member IDs
	status  []*clientv3.Client
	dir     string
}

// startCluster starts n members of the etcd at path with the timeouts of
// p in a new directory under dir, each in its cgroup of g, and reads
// their member IDs.
func startCluster(ctx context.Context, dir, path string, n int, p profile, preVote bool, g *cgroups) (c *cluster, err error) {
	c = &cluster{}
	if c.dir, err = os.MkdirTemp(dir, "cluster-"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.stop())
			c = nil
		}
	}()
	o := cmp.ClusterOptions{Args: []string{"--heartbeat-interval", strconv.Itoa(int(p.Heartbeat.Milliseconds())),
		"--election-timeout", strconv.Itoa(int(p.Election.Milliseconds()))}}
	if preVote {
		o.Args = append(o.Args, "--pre-vote")
	}
	if g != nil {
		o.Wrap = g.Wrap
	}
	if c.members, err = cmp.StartEtcdClusterWith(ctx, c.dir, path, n, o); err != nil {
		return c, err
	}
	for i, m := range c.members {
		c.names = append(c.names, fmt.Sprintf("m%d", i+1))
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.URL}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			return c, err
		}
		c.status = append(c.status, cli)
		st, err := c.statusOf(ctx, i, 5*time.Second)
		if err != nil {
			return c, fmt.Errorf("member %s's status: %w", c.names[i], err)
		}
		c.ids = append(c.ids, st.Header.MemberId)
	}
	return c, nil
}

// endpoints are the members' client URLs.
func (c *cluster) endpoints() []string {
	var out []string
	for _, m := range c.members {
		out = append(out, m.URL)
	}
	return out
}

// peerPort is member i's peer listener's port.
func (c *cluster) peerPort(i int) (int, error) {
	u, err := url.Parse(c.members[i].PeerURL)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(u.Port())
}

// stop stops the members and removes their data.
func (c *cluster) stop() error {
	for _, cli := range c.status {
		cli.Close()
	}
	return errors.Join(cmp.StopEtcdCluster(c.members), os.RemoveAll(c.dir))
}

// statusOf is member i's status, asked on its own connection.
func (c *cluster) statusOf(ctx context.Context, i int, timeout time.Duration) (*pb.StatusResponse, error) {
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return pb.NewMaintenanceClient(c.status[i].ActiveConnection()).Status(sctx, &pb.StatusRequest{})
}

// leads says whether st is the status of a member that says it leads.
func leads(st *pb.StatusResponse) bool { return st.Leader != 0 && st.Leader == st.Header.MemberId }

// steadyLeader waits (up to within) until every member names the same
// leader in the same raft term and that member says it leads: no
// election under way, so that the fault struck next is the cause of the
// next one. It returns the leader's index and the term.
func (c *cluster) steadyLeader(ctx context.Context, within time.Duration) (int, uint64, error) {
	deadline := time.Now().Add(within)
	for {
		if lead, term, ok := c.agreed(ctx); ok {
			return lead, term, nil
		}
		if time.Now().After(deadline) {
			return -1, 0, fmt.Errorf("the members did not agree on one leader in one term within %v", within)
		}
		select {
		case <-ctx.Done():
			return -1, 0, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}

func (c *cluster) agreed(ctx context.Context) (int, uint64, bool) {
	var leader, term uint64
	lead := -1
	for i := range c.members {
		st, err := c.statusOf(ctx, i, time.Second)
		if err != nil || st.Leader == 0 || (i > 0 && (st.Leader != leader || st.RaftTerm != term)) {
			return -1, 0, false
		}
		leader, term = st.Leader, st.RaftTerm
		if leads(st) {
			lead = i
		}
	}
	return lead, term, lead >= 0 && c.ids[lead] == leader
}

// leaderSeen is a member other than the old leader saying it leads.
type leaderSeen struct {
	member int
	at     time.Time
}

// watchLeader polls every member but old every pollEvery until one says
// it leads, and sends it (once) on the channel it returns; it stops
// when ctx ends.
func (c *cluster) watchLeader(ctx context.Context, old int) <-chan leaderSeen {
	out := make(chan leaderSeen, 1)
	found := make(chan struct{})
	var once sync.Once
	for i := range c.members {
		if i == old {
			continue
		}
		go func() {
			for {
				st, err := c.statusOf(ctx, i, 500*time.Millisecond)
				if err == nil && leads(st) {
					now := time.Now()
					once.Do(func() {
						out <- leaderSeen{i, now}
						close(found)
					})
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-found:
					return
				case <-time.After(pollEvery):
				}
			}
		}()
	}
	return out
}

// memberStatus is what a member says of itself.
type memberStatus struct {
	Name     string `json:"name"`
	Leader   string `json:"leader,omitempty"` // "": none
	Term     uint64 `json:"raft_term"`
	Index    uint64 `json:"raft_index"`
	Applied  uint64 `json:"raft_applied_index"`
	Err      string `json:"err,omitempty"`
	Unpolled bool   `json:"not_asked,omitempty"` // frozen
}

// statuses asks every member (but skip, when frozen) for its status.
func (c *cluster) statuses(ctx context.Context, skip int, frozen bool) []memberStatus {
	var out []memberStatus
	for i := range c.members {
		s := memberStatus{Name: c.names[i]}
		if i == skip && frozen {
			s.Unpolled = true
			out = append(out, s)
			continue
		}
		st, err := c.statusOf(ctx, i, time.Second)
		if err != nil {
			s.Err = err.Error()
		} else {
			s.Term, s.Index, s.Applied = st.RaftTerm, st.RaftIndex, st.RaftAppliedIndex
			for j, id := range c.ids {
				if id == st.Leader {
					s.Leader = c.names[j]
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// term is the highest raft term a member reports (0: none answered).
func (c *cluster) term(ctx context.Context) uint64 {
	var t uint64
	for i, m := range c.members {
		if m.Exited() {
			continue
		}
		if st, err := c.statusOf(ctx, i, 2*time.Second); err == nil {
			t = max(t, st.RaftTerm)
		}
	}
	return t
}

// waitServing polls member i's /health every pollEvery until it says
// true (the member has a leader and a quorum read through raft went
// through: it serves clients), for at most limit, and returns when it
// first did.
func (c *cluster) waitServing(ctx context.Context, i int, limit time.Duration) (time.Time, error) {
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(limit)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.members[i].URL+"/health", nil)
		if resp, err := client.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte(`"true"`)) {
				return time.Now(), nil
			}
		}
		if c.members[i].Exited() {
			return time.Time{}, fmt.Errorf("member %s exited while restarting%s", c.names[i], c.members[i].Log())
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("member %s did not serve within %v of its restart%s", c.names[i], limit, c.members[i].Log())
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}
