package etcdload

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// sender sends request n of a client, due at due, and says which kind of
// request it was.
type sender func(ctx context.Context, n int64, due time.Time) (kind int, err error)

// newSender returns the request function of one client of l on c; seed
// and stream make its key choices its own.
//
// The functions capture only what they use, never the whole Load: a
// client's state is touched once per request, and with a thousand clients
// taking turns it is out of the CPU's cache each time, so every separate
// piece of it is a cache miss (perf showed the first read of a captured
// Load's field as one of the costliest instructions of the client loop).
func newSender(l Load, c *clientv3.Client, seed, stream uint64) sender {
	kb := newKeyBuf(l.Prefix(), l.KeySize)
	rng := rand.New(rand.NewPCG(seed, stream))
	val := value(l.ValSize)
	space, sequential, readRatio := l.KeySpaceSize, l.SequentialKeys, l.ReadRatio
	pick := func(n int64) int {
		switch {
		case space == 1: // the default: no need to touch the generator
			return 0
		case sequential:
			return int(n % int64(space))
		}
		return rng.IntN(space)
	}
	var getOpts []clientv3.OpOption
	if l.Consistency == Serializable {
		getOpts = append(getOpts, clientv3.WithSerializable())
	}
	switch l.Op {
	case OpRange:
		return func(ctx context.Context, n int64, _ time.Time) (int, error) {
			_, err := c.Get(ctx, kb.key(pick(n)), getOpts...)
			return 0, err
		}
	case OpTxn:
		ops := make([]clientv3.Op, l.TxnOps)
		return func(ctx context.Context, n int64, _ time.Time) (int, error) {
			// Consecutive keys: a transaction may not put one key twice.
			k := pick(n)
			for i := range ops {
				ops[i] = clientv3.OpPut(kb.key((k+i)%space), val)
			}
			_, err := c.Txn(ctx).Then(ops...).Commit()
			return 0, err
		}
	case OpMixed:
		return func(ctx context.Context, n int64, _ time.Time) (int, error) {
			key := kb.key(pick(n))
			if rng.Float64() < readRatio {
				_, err := c.Get(ctx, key, getOpts...)
				return 1, err
			}
			_, err := c.Put(ctx, key, val)
			return 2, err
		}
	case OpWatch:
		buf := []byte(val)
		return func(ctx context.Context, n int64, due time.Time) (int, error) {
			putStamp(buf, due)
			_, err := c.Put(ctx, kb.key(pick(n)), string(buf))
			return 1, err
		}
	}
	return func(ctx context.Context, n int64, _ time.Time) (int, error) {
		_, err := c.Put(ctx, kb.key(pick(n)), val)
		return 0, err
	}
}

// stampSize is the bytes at the start of a watch load's values that carry
// the put's due time.
const stampSize = 8

// putStamp writes t into the first stampSize bytes of b.
func putStamp(b []byte, t time.Time) { binary.BigEndian.PutUint64(b, uint64(t.UnixNano())) }

// stamp reads the time putStamp wrote; ok is false for a value too short
// to carry one.
func stamp(b []byte) (t time.Time, ok bool) {
	if len(b) < stampSize {
		return time.Time{}, false
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(b))), true
}

// count is the number of latencies recorded in the histogram of kind k.
func (a *aggregator) count(k int) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hists[k].TotalCount()
}

// mergeErrorMaps adds b's counts to a.
func mergeErrorMaps(a, b map[string]int64) map[string]int64 {
	for c, n := range b {
		if _, ok := a[c]; !ok && len(a) >= maxErrorClasses {
			c = otherErrors
		}
		a[c] += n
	}
	return a
}
