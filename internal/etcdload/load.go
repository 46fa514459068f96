package etcdload

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Op is the request a load sends.
type Op string

// The requests Run knows.
const (
	OpPut   Op = "put"   // a Put of one key
	OpRange Op = "range" // a Get (range) of one key written before the clock starts
	// OpTxn is a transaction of TxnOps puts of consecutive keys, as etcd's
	// benchmark txn-put sends.
	OpTxn Op = "txn"
	// OpWatch is puts watched by Streams x WatchersPerStream watchers of
	// the run's prefix; its latency is from a put's send to each watcher's
	// receipt of the event.
	OpWatch Op = "watch"
	// OpMixed is ranges (a ReadRatio of the requests) and puts over keys
	// written before the clock starts.
	OpMixed Op = "mixed"
)

// Ops lists the requests Run knows, in the order the CLI shows them: the
// ops of Kinds.
var Ops = func() []Op {
	ops := make([]Op, len(kinds))
	for i, k := range kinds {
		ops[i] = k.Op
	}
	return ops
}()

// Targets of a load's connections.
const (
	// TargetAll spreads the connections over the endpoints: connection i
	// talks to endpoint i mod n, as etcd's benchmark tool does.
	TargetAll = "all"
	// TargetLeader sends every connection to the current leader, found
	// with a Status call to each endpoint before the load.
	TargetLeader = "leader"
	// TargetBalanced gives every connection every endpoint, as
	// kube-apiserver's one etcd client has them: clientv3 balances each
	// request over the endpoints it can reach and leaves the others.
	TargetBalanced = "balanced"
)

// Range consistencies, as etcd's benchmark tool names them.
const (
	Linearizable = "l" // the read goes through raft (a quorum read)
	Serializable = "s" // the member answers from its own store
)

// PrefixRoot is the key prefix under which every run writes, each in its
// own /etcdbench/<run-id>/.
const PrefixRoot = "/etcdbench/"

// ErrBadLoad is returned by Load.Validate for settings that cannot run.
var ErrBadLoad = errors.New("bad load settings")

// Load describes one load run. DefaultLoad gives the defaults of etcd's
// benchmark tool.
type Load struct {
	Op Op
	// Client is the template of every connection: Endpoints, TLS,
	// Username/Password, DialTimeout (default 5 s).
	Client clientv3.Config
	// Conns is the number of gRPC connections (clients of clientv3).
	Conns int
	// Clients is the number of concurrent requesters, spread over Conns.
	Clients int
	// Total stops the run after this many requests; 0: no limit.
	Total int64
	// Duration stops the run after this long; 0: no limit. At least one of
	// Total and Duration must be set; with both, the first reached ends it.
	Duration time.Duration
	// Rate is the target requests per second over all clients. 0 runs a
	// closed loop (each client sends its next request when the last one
	// returned); above 0 an open loop, where request i is due at
	// start + i/Rate and its latency is counted from that moment, so a
	// stalled server is charged for the requests it delayed (no
	// coordinated omission).
	Rate float64
	// KeySize is the length of the key after the run's prefix: the key
	// number, zero-padded.
	KeySize int
	// ValSize is the length of each value.
	ValSize int
	// KeySpaceSize is the number of distinct keys.
	KeySpaceSize int
	// SequentialKeys picks keys 0, 1, 2... instead of at random.
	SequentialKeys bool
	// Consistency of ranges (range and mixed): Linearizable or
	// Serializable.
	Consistency string
	// Target is TargetAll (the default when empty), TargetLeader or
	// TargetBalanced.
	Target string
	// RequestTimeout, when set, ends each request that has not returned
	// after it as failed (DeadlineExceeded); 0 waits as long as etcd
	// takes, as etcd's benchmark does.
	RequestTimeout time.Duration
	// TxnOps is the number of puts in each transaction of OpTxn.
	TxnOps int
	// ReadRatio is the share of ranges among OpMixed's requests, 0..1.
	ReadRatio float64
	// Streams is the number of gRPC watch streams of OpWatch, spread over
	// the connections.
	Streams int
	// WatchersPerStream is the number of watchers on each stream; every
	// watcher watches the whole prefix, so each put makes
	// Streams x WatchersPerStream events.
	WatchersPerStream int
	// RunID names the run's prefix; empty: a new one is made.
	RunID string
	// CleanupTimeout bounds the deletion of the prefix (default 30 s); it
	// runs on a fresh context, so it also happens after ctx is cancelled.
	CleanupTimeout time.Duration
	// OnRequest, if set, is told of every request when it ends: when it
	// was due, when it returned and its error. It is called from the
	// clients' goroutines, concurrently.
	OnRequest func(due, done time.Time, err error)
	// OnSecond, if set, is called once a second during the timed load,
	// from a goroutine of its own, with the time since the start and the
	// requests sent so far.
	OnSecond func(elapsed time.Duration, sent int64)
	// ready, if set, is called once the keys a range or mixed load reads
	// are written, right before the timed load: Bench takes its first
	// scrape there, so that writing them is not counted as the load's.
	ready func(ctx context.Context) error
	// finished, if set, is called with the timed load's error right after
	// it, before the run's keys are deleted: Bench takes its second scrape
	// there, so that the delete (a tombstone per key, in one backend
	// commit) is not counted as the load's either.
	finished func(err error)
}

// DefaultLoad returns etcd's benchmark defaults for op: one connection,
// one client, 10,000 requests, 8-byte keys and values, one key,
// linearizable ranges, one put per transaction; for mixed, 90 % ranges
// over 1000 keys; for watch, the defaults of etcd's benchmark
// watch-latency: 10 streams of 10 watchers, 1000 puts at 100 puts/s.
func DefaultLoad(op Op) Load {
	l := Load{
		Op: op, Conns: 1, Clients: 1, Total: 10000,
		KeySize: 8, ValSize: 8, KeySpaceSize: 1, Consistency: Linearizable,
		Target: TargetAll, TxnOps: 1, ReadRatio: 0.9, Streams: 10, WatchersPerStream: 10,
	}
	if k := KindOf(op); k.defaults != nil {
		k.defaults(&l)
	}
	return l
}

// Validate checks the settings.
func (l Load) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadLoad, fmt.Sprintf(format, args...))
	}
	switch {
	case !slices.Contains(Ops, l.Op):
		return bad("unknown request %q: want put, range, txn, watch or mixed", l.Op)
	case len(l.Client.Endpoints) == 0:
		return bad("no endpoints")
	case l.Conns < 1:
		return bad("conns %d: want at least 1", l.Conns)
	case l.Clients < 1:
		return bad("clients %d: want at least 1", l.Clients)
	case l.Total < 0 || l.Duration < 0:
		return bad("total %d, duration %v: want neither negative", l.Total, l.Duration)
	case l.Total == 0 && l.Duration == 0:
		return bad("neither a total nor a duration: the run would not end")
	case l.Rate < 0:
		return bad("rate %g: want 0 (closed loop) or more", l.Rate)
	case l.KeySpaceSize < 1:
		return bad("key space size %d: want at least 1", l.KeySpaceSize)
	case l.ValSize < 0:
		return bad("value size %d: want 0 or more", l.ValSize)
	case l.KeySize < len(strconv.Itoa(l.KeySpaceSize-1)):
		return bad("key size %d cannot number %d keys: want at least %d", l.KeySize, l.KeySpaceSize, len(strconv.Itoa(l.KeySpaceSize-1)))
	case l.Target != "" && l.Target != TargetAll && l.Target != TargetLeader && l.Target != TargetBalanced:
		return bad("target %q: want all, leader or balanced", l.Target)
	case l.RequestTimeout < 0:
		return bad("request timeout %v: want 0 (none) or more", l.RequestTimeout)
	}
	if k := KindOf(l.Op); k.check != nil {
		if msg := k.check(l); msg != "" {
			return bad("%s", msg)
		}
	}
	return nil
}

// Name is the workload's name in the result: "etcd-put", "etcd-range",
// "etcd-txn", "etcd-watch", "etcd-mixed".
func (l Load) Name() string { return "etcd-" + string(l.Op) }

// Prefix is the key prefix of the run, ending in "/".
func (l Load) Prefix() string { return PrefixRoot + l.RunID + "/" }

// NewRunID returns a run id that sorts by time and is unique enough for
// concurrent runs: UTC time and 4 random bytes.
func NewRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

// keyBuf builds keys of one prefix and width without allocating more
// than the string itself, and not even that when the key is the one it
// built last (a key space of one key, etcd benchmark's default, sends
// one key over and over).
type keyBuf struct {
	b     []byte
	start int    // where the number begins
	last  int    // the number of s
	s     string // the last key built; "" before the first
}

func newKeyBuf(prefix string, width int) *keyBuf {
	b := make([]byte, len(prefix)+width)
	copy(b, prefix)
	return &keyBuf{b: b, start: len(prefix)}
}

// key returns the prefix and n in decimal, zero-padded to the width.
func (k *keyBuf) key(n int) string {
	if n == k.last && k.s != "" {
		return k.s
	}
	k.last = n
	for i := len(k.b) - 1; i >= k.start; i-- {
		k.b[i] = byte('0' + n%10)
		n /= 10
	}
	k.s = string(k.b)
	return k.s
}

// parameters are the load's settings for the result record.
func (l Load) parameters() map[string]any {
	p := map[string]any{
		"endpoints":       l.Client.Endpoints,
		"conns":           l.Conns,
		"clients":         l.Clients,
		"total":           l.Total,
		"duration_ns":     l.Duration.Nanoseconds(),
		"rate":            l.Rate,
		"loop":            "closed",
		"key_size":        l.KeySize,
		"key_prefix":      l.Prefix(),
		"val_size":        l.ValSize,
		"key_space_size":  l.KeySpaceSize,
		"sequential_keys": l.SequentialKeys,
		"target":          cmp.Or(l.Target, TargetAll),
	}
	if l.Rate > 0 {
		p["loop"] = "open"
	}
	// The user's name is recorded, never the password.
	if l.Client.Username != "" {
		p["user"] = l.Client.Username
	}
	if l.Client.TLS != nil {
		p["tls"] = true
	}
	if k := KindOf(l.Op); k.record != nil {
		k.record(l, p)
	}
	return p
}
