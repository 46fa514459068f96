package cost

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload/metrics"
)

// memberProbe is what real members on the disk gave: a single member's
// start to ready on an empty data dir, and its snapshot sent to a new
// member (etcd's rafthttp: the leader POSTs the raft message and its db
// as bbolt writes it out, the new member saves it beside its own empty
// db and fsyncs it before it answers), as the leader's own metric times
// it.
type memberProbe struct {
	start     time.Duration // median over the starts, less the mean election wait at the probe's ticks
	starts    int
	snapBytes int64         // the db the leader sent
	send      time.Duration // the leader's metric of the send (median)
	receive   time.Duration // the new member's metric of it (median)
	sends     int
	sendRate  float64 // B/s: snapBytes / send
}

// payloadPut is the size of one put filling the probe member: under
// etcd's default request limit (1.5 MiB).
const payloadPut = 1 << 20

// probeSnapshotCount is the probe member's --snapshot-count: below the
// puts that fill it, so that it takes a snapshot and compacts its raft
// log, and a new member's first entry is no longer there to append:
// the leader must send its snapshot, as a member of any real size does.
const probeSnapshotCount = 8

// probeMember starts an empty single member in dir starts times (the
// election after a start waits a random 1 to 10 ticks, here of
// probeTick, so one start is noisy), then one more that it fills with
// snapBytes of values and has send its snapshot to a new member, sends
// times (the medians count).
func probeMember(ctx context.Context, dir string, starts, sends int, snapBytes int64, timeout time.Duration) (memberProbe, error) {
	p := memberProbe{starts: starts, sends: sends}
	var took []time.Duration
	for i := range starts {
		sub := filepath.Join(dir, fmt.Sprintf("start%d", i))
		t0 := time.Now()
		c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: sub, Members: 1, StartTimeout: timeout,
			HeartbeatInterval: probeTick, ElectionTimeout: probeElection})
		if err != nil {
			return p, fmt.Errorf("cost: starting an empty member in %s: %w", sub, err)
		}
		took = append(took, time.Since(t0))
		if err := c.Close(); err != nil {
			return p, fmt.Errorf("cost: stopping the probe member in %s: %w", sub, err)
		}
		os.RemoveAll(sub)
	}
	slices.Sort(took)
	p.start = max(took[len(took)/2]-probeElectionWait, 0)
	sub := filepath.Join(dir, "send")
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: sub, Members: 1, StartTimeout: timeout, SnapshotCount: probeSnapshotCount})
	if err != nil {
		return p, fmt.Errorf("cost: starting the probe member in %s: %w", sub, err)
	}
	err = sendProbe(ctx, c, snapBytes, timeout, &p)
	if cerr := c.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("cost: stopping the probe member in %s: %w", sub, cerr)
	}
	return p, errors.Join(err, os.RemoveAll(sub))
}

// sendProbe fills the member of c with size bytes of values, then adds
// a learner p.sends times and times the snapshot the member sends it.
func sendProbe(ctx context.Context, c *etcdcluster.Cluster, size int64, timeout time.Duration, p *memberProbe) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("cost: a client of the probe member: %w", err)
	}
	value := make([]byte, payloadPut)
	var puts int64
	for ; puts*payloadPut < size || puts <= probeSnapshotCount; puts++ {
		// Random values, as objects are: a filesystem that compresses
		// or skips zeros would make zeros cheaper than data.
		if _, err := rand.Read(value); err != nil {
			cli.Close()
			return err
		}
		if _, err := cli.Put(ctx, fmt.Sprintf("/registry/probe/%06d", puts), string(value)); err != nil {
			cli.Close()
			return fmt.Errorf("cost: filling the probe member: %w", err)
		}
	}
	st, err := cli.Status(ctx, c.Endpoints()[0])
	cli.Close()
	if err != nil {
		return fmt.Errorf("cost: the probe member's status: %w", err)
	}
	p.snapBytes = st.DbSize
	var sent, received []time.Duration
	for range p.sends {
		s, r, err := sendOnce(ctx, c, timeout)
		if err != nil {
			return err
		}
		sent, received = append(sent, secs(s.Seconds)), append(received, secs(r.Seconds))
	}
	slices.Sort(sent)
	slices.Sort(received)
	p.send, p.receive = sent[len(sent)/2], received[len(received)/2]
	p.sendRate = float64(p.snapBytes) / max(p.send.Seconds(), 1e-9)
	return nil
}

// sendPoll is how often the members' metrics are read while a snapshot
// is sent: a scrape costs CPU the send shares, and the figures are
// etcd's own, so the interval only delays the answer.
const sendPoll = 20 * time.Millisecond

// sendOnce adds a learner to c, waits until the leader's metric counts
// the snapshot sent to it and the learner's counts it received, returns
// both and removes the learner again.
func sendOnce(ctx context.Context, c *etcdcluster.Cluster, timeout time.Duration) (send, receive Transfer, err error) {
	f, err := metrics.Scrape(ctx, nil, c.Endpoints()[0]+"/metrics")
	if err != nil {
		return Transfer{}, Transfer{}, fmt.Errorf("cost: the probe member's metrics: %w", err)
	}
	l, err := c.AddLearner(ctx)
	if err != nil {
		return Transfer{}, Transfer{}, fmt.Errorf("cost: adding a learner to the probe member: %w", err)
	}
	defer func() {
		if cerr := l.Close(context.WithoutCancel(ctx)); cerr != nil {
			err = errors.Join(err, fmt.Errorf("cost: removing the probe's learner: %w", cerr))
		}
	}()
	before := SnapshotReceived(f, l.Leader)
	// Both members run in this process and show their metrics in its
	// one registry, on the leader's URL too: the learner serves its own
	// only once it is ready, which is after it caught up.
	// The receive is labelled with the leader alone, which every learner
	// of the probe receives from: what it counted before this one is
	// subtracted.
	url := c.Endpoints()[0] + "/metrics"
	err = metrics.Poll(ctx, url, sendPoll, time.Now().Add(timeout), func(f metrics.Families) (bool, error) {
		send, receive = SnapshotSent(f, l.ID), SnapshotReceived(f, l.Leader).Since(before)
		if send.Failures > 0 {
			return false, fmt.Errorf("cost: the probe member failed to send its snapshot to its learner %d times", int(send.Failures))
		}
		return send.Count >= 1 && receive.Count >= 1, nil
	})
	if err != nil {
		return Transfer{}, Transfer{}, fmt.Errorf("cost: a snapshot sent to the probe's learner: %w", err)
	}
	return send, receive, nil
}

// secs is a metric's seconds as a Duration.
func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
