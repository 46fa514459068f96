package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/diagnose/data/cost"
	"etcdbench/internal/etcdload/metrics"
)

// sent is one snapshot sent by a member to a new member, as etcd's own
// metrics tell it (rafthttp's snapshot sender and handler).
type sent struct {
	// Send is the leader's etcd_network_snapshot_send_total_duration_seconds
	// for the new member: from the merged snapshot's POST to the new
	// member's answer, which comes after it saved the db and fsynced it.
	Send float64
	// Receive is the new member's
	// etcd_network_snapshot_receive_total_duration_seconds for the leader.
	Receive float64
	// Fsync is the new member's etcd_snap_db_fsync_duration_seconds: the
	// part of the receive that made the db durable.
	Fsync float64
	// Wall is the new member's process start until the leader's metric
	// counted the send (read every scrapeEvery).
	Wall float64
}

// scrapeEvery is how often the members' /metrics are read while the
// snapshot is sent: a scrape costs the leader CPU that the send shares,
// and the figures are etcd's own, so the interval only rounds Wall.
const scrapeEvery = 50 * time.Millisecond

// sendDeadline bounds the wait for a snapshot (a 1 GB db on a slow disk).
const sendDeadline = 10 * time.Minute

// sendSnapshot adds a learner to the running single-member cluster m,
// starts it as a process of its own on an empty data dir in dir (the
// same disk), waits until m's metrics say it sent the learner its
// snapshot and the learner's say it received it, then removes the
// learner and its data dir again.
func sendSnapshot(ctx context.Context, m *member, dir string) (s sent, err error) {
	nm, err := newMember(m.kind, filepath.Join(dir, "new-member"), m.target)
	if err != nil {
		return s, err
	}
	addr, err := cmp.FreeAddr()
	if err != nil {
		return s, err
	}
	nm.name, nm.joins, nm.metrics = "new", m, "http://"+addr
	if err := os.RemoveAll(nm.dataDir); err != nil {
		return s, err
	}
	var id, leader uint64
	err = m.withClient(func(cli *clientv3.Client) error {
		// A data dir filled by an earlier run (--keep) names the peer
		// URL of that run in its membership, which the new member
		// would dial: the member's own is set first.
		l, err := cli.MemberList(ctx)
		if err != nil {
			return fmt.Errorf("listing the members of %s: %w", m.kind.Name, err)
		}
		for _, mm := range l.Members {
			if mm.ID == l.Header.MemberId && !slices.Equal(mm.PeerURLs, []string{m.peer}) {
				if _, err := cli.MemberUpdate(ctx, mm.ID, []string{m.peer}); err != nil {
					return fmt.Errorf("setting the peer URL of %s to %s: %w", m.kind.Name, m.peer, err)
				}
			}
		}
		r, err := cli.MemberAddAsLearner(ctx, []string{nm.peer})
		if err != nil {
			return fmt.Errorf("adding a learner to %s: %w", m.kind.Name, err)
		}
		id, leader = r.Member.ID, r.Header.MemberId
		return nil
	})
	if err != nil {
		return s, err
	}
	defer func() {
		rerr := m.withClient(func(cli *clientv3.Client) error {
			_, err := cli.MemberRemove(context.WithoutCancel(ctx), id)
			return err
		})
		if rerr != nil {
			rerr = fmt.Errorf("removing the learner %x from %s: %w", id, m.kind.Name, rerr)
		}
		err = errors.Join(err, rerr, nm.stop(), os.RemoveAll(nm.dataDir))
		if err == nil {
			err = os.Remove(nm.logPath()) // kept when something failed
		} else {
			err = fmt.Errorf("%w (the new member's output: %s)", err, nm.logPath())
		}
	}()
	t0 := time.Now()
	if _, err := nm.start(ctx); err != nil {
		return s, err
	}
	t, err := waitSnapshot(ctx, m.client, func(f metrics.Families) cost.Transfer { return cost.SnapshotSent(f, id) }, nm.done)
	if err != nil {
		return s, fmt.Errorf("%s sending its snapshot to a new member: %w", m.kind.Name, err)
	}
	s.Send, s.Wall = t.Seconds, time.Since(t0).Seconds()
	t, err = waitSnapshot(ctx, nm.metrics, func(f metrics.Families) cost.Transfer { return cost.SnapshotReceived(f, leader) }, nm.done)
	if err != nil {
		return s, fmt.Errorf("the new member of %s receiving its snapshot: %w", m.kind.Name, err)
	}
	s.Receive, s.Fsync = t.Seconds, t.Fsync
	return s, nil
}

// waitSnapshot reads url's /metrics until read says they count one
// snapshot, and returns it. It gives up at a failed send, when the new
// member's process ends, or after sendDeadline.
func waitSnapshot(ctx context.Context, url string, read func(metrics.Families) cost.Transfer, exited chan error) (cost.Transfer, error) {
	var t cost.Transfer
	err := metrics.Poll(ctx, url+"/metrics", scrapeEvery, time.Now().Add(sendDeadline), func(f metrics.Families) (bool, error) {
		select {
		case err := <-exited:
			exited <- err
			return false, fmt.Errorf("the new member exited: %v", err)
		default:
		}
		t = read(f)
		if t.Failures > 0 {
			return false, fmt.Errorf("%s counts %v failed snapshot sends", url, t.Failures)
		}
		return t.Count >= 1, nil
	})
	return t, err
}
