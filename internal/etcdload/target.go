package etcdload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrNoLeader is returned by Run with TargetLeader when no endpoint is
// the leader.
var ErrNoLeader = errors.New("no endpoint is the cluster's leader")

// assignEndpoints gives each connection its endpoints: with TargetAll
// connection i gets endpoint i mod n, as etcd's benchmark tool does (with
// fewer connections than endpoints, the last endpoints get no load); with
// TargetLeader every connection gets the leader's endpoint. The note says
// which, for the result.
func assignEndpoints(ctx context.Context, l Load) (assign [][]string, note string, err error) {
	eps := l.Client.Endpoints
	if l.Target == TargetBalanced {
		return [][]string{eps}, fmt.Sprintf("target balanced: %d connection(s), each balancing its requests over %s", l.Conns, strings.Join(eps, ", ")), nil
	}
	if l.Target != TargetLeader {
		for _, ep := range eps {
			assign = append(assign, []string{ep})
		}
		used := eps[:min(len(eps), l.Conns)]
		note = fmt.Sprintf("target all: %d connection(s) spread over %s", l.Conns, strings.Join(used, ", "))
		if len(used) < len(eps) {
			note += fmt.Sprintf(" (fewer connections than endpoints: %s got none)", strings.Join(eps[len(used):], ", "))
		}
		return assign, note, nil
	}
	leader, err := findLeader(ctx, l)
	if err != nil {
		return nil, "", err
	}
	return [][]string{{leader}}, fmt.Sprintf("target leader: %d connection(s) to the leader at %s", l.Conns, leader), nil
}

// findLeader asks every endpoint for its status and returns the one whose
// member is the leader.
func findLeader(ctx context.Context, l Load) (string, error) {
	c, err := dial(l, [][]string{l.Client.Endpoints})
	if err != nil {
		return "", err
	}
	defer c[0].Close()
	var errs []error
	for _, ep := range l.Client.Endpoints {
		sctx, cancel := context.WithTimeout(ctx, cmp.Or(l.Client.DialTimeout, defaultDialTimeout))
		st, err := c[0].Status(sctx, ep)
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			return "", ctx.Err()
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", ep, err))
		case st.Header != nil && st.Leader != 0 && st.Header.MemberId == st.Leader:
			return ep, nil
		}
	}
	if len(errs) == len(l.Client.Endpoints) {
		return "", fmt.Errorf("%w within the dial timeout: %w", ErrUnreachable, errors.Join(errs...))
	}
	return "", fmt.Errorf("%w among %s: give the leader's endpoint too, or use --target all", ErrNoLeader, strings.Join(l.Client.Endpoints, ", "))
}
