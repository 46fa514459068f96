package cmp

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// StartEtcdCluster runs the etcd at path as a new cluster of n members
// on 127.0.0.1, each its own process with its data in a new directory
// under dir, and waits until every member is healthy. advertise is given
// member i's peer listening address (host:port) and returns the one it
// advertises to the others (a proxy in front of it, say; the same address
// for none): every peer message to member i then goes there.
func StartEtcdCluster(ctx context.Context, dir, path string, n int, advertise func(i int, listen string) (string, error)) (members []*EtcdBinary, err error) {
	return StartEtcdClusterWith(ctx, dir, path, n, ClusterOptions{Advertise: advertise})
}

// ClusterOptions are the choices of StartEtcdClusterWith.
type ClusterOptions struct {
	// Advertise is given member i's peer listening address (host:port)
	// and returns the one it advertises to the others (a proxy in front
	// of it, say); nil advertises the listening address.
	Advertise func(i int, listen string) (string, error)
	// Args are added to every member's command line
	// (--heartbeat-interval 500, say).
	Args []string
	// Wrap, when set, gives the wrapper of member i's command (its
	// restarts' too), e.g. one that starts it in a cgroup of its own.
	Wrap func(i int) func(*exec.Cmd)
}

// StartEtcdClusterWith is StartEtcdCluster with o's choices.
func StartEtcdClusterWith(ctx context.Context, dir, path string, n int, o ClusterOptions) (members []*EtcdBinary, err error) {
	advertise := o.Advertise
	if advertise == nil {
		advertise = func(_ int, listen string) (string, error) { return listen, nil }
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, StopEtcdCluster(members))
			members = nil
		}
	}()
	type ports struct{ client, peer, advertised string }
	ps := make([]ports, n)
	var initial []string
	for i := range ps {
		c, err := FreeAddr()
		if err != nil {
			return nil, err
		}
		p, err := FreeAddr()
		if err != nil {
			return nil, err
		}
		a, err := advertise(i, p)
		if err != nil {
			return nil, err
		}
		ps[i] = ports{"http://" + c, "http://" + p, "http://" + a}
		initial = append(initial, fmt.Sprintf("m%d=%s", i+1, ps[i].advertised))
	}
	for i, p := range ps {
		var wrap func(*exec.Cmd)
		if o.Wrap != nil {
			wrap = o.Wrap(i)
		}
		e, err := startEtcd(wrap, dir, path, p.client, append([]string{"--name", fmt.Sprintf("m%d", i+1),
			"--listen-client-urls", p.client, "--advertise-client-urls", p.client,
			"--listen-peer-urls", p.peer, "--initial-advertise-peer-urls", p.advertised,
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new"}, o.Args...)...)
		if err != nil {
			return members, err
		}
		e.PeerURL = p.peer
		members = append(members, e)
	}
	for _, e := range members {
		if err := e.waitHealthy(ctx); err != nil {
			return members, err
		}
	}
	return members, nil
}

// StopEtcdCluster stops every member (EtcdBinary.Stop).
func StopEtcdCluster(members []*EtcdBinary) error {
	var errs []error
	for _, e := range members {
		errs = append(errs, e.Stop())
	}
	return errors.Join(errs...)
}
