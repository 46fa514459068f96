package etcdload

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrNoSpace is returned by Run when etcd refused a write because its
// backend reached the space quota (--quota-backend-bytes): etcd has raised
// its NOSPACE alarm and refuses every put until an operator frees space
// and disarms the alarm, so the run stops at the first such error.
var ErrNoSpace = errors.New("etcd's database space is exceeded (NOSPACE alarm)")

// noSpaceHint is etcd's own recovery from a NOSPACE alarm (the space quota
// section of etcd's maintenance guide).
const noSpaceHint = "etcd refuses every write until space is freed: compact the history " +
	"(etcdctl compact <revision from etcdctl endpoint status -w json>), " +
	"defragment (etcdctl defrag), then etcdctl alarm disarm, or raise --quota-backend-bytes"

// isFatal returns err wrapped in the sentinel of its kind, with what to do,
// when err means that no later request of the run can succeed; otherwise
// nil. Fatal are a write refused for lack of space (ErrNoSpace: etcd keeps
// refusing writes until an operator intervenes) and a request refused to
// the user (ErrAuth: its roles do not allow it, and will not during the
// run). Timeouts, leader changes, an expired auth token (which clientv3
// renews) and other transient errors are not: they are counted and the
// run goes on.
func isFatal(err error) error {
	switch {
	case err == nil:
		return nil
	case isNoSpace(err):
		return fmt.Errorf("%w: %w; %s", ErrNoSpace, err, noSpaceHint)
	case errors.Is(err, rpctypes.ErrPermissionDenied) || errors.Is(err, rpctypes.ErrGRPCPermissionDenied):
		return fmt.Errorf("%w: %w; give --user a user whose roles may read and write under %s", ErrAuth, err, PrefixRoot)
	}
	return nil
}

// isNoSpace reports whether err is etcd's "mvcc: database space exceeded",
// as clientv3 returns it (rpctypes.ErrNoSpace), as a raw gRPC status, or
// as text from a wrapper that kept only the message.
func isNoSpace(err error) bool {
	if errors.Is(err, rpctypes.ErrNoSpace) || errors.Is(err, rpctypes.ErrGRPCNoSpace) {
		return true
	}
	if s, ok := status.FromError(err); ok && s.Code() == codes.ResourceExhausted &&
		strings.Contains(s.Message(), "database space exceeded") {
		return true
	}
	return strings.Contains(err.Error(), rpctypes.ErrNoSpace.Error())
}

// stopper ends a run at its first fatal error (isFatal): the client that
// gets it records it and returns, and every other client returns before
// its next request (stopped). The zero value is ready; it is safe for
// concurrent use and costs the hot path one atomic load per request.
// drive uses it so:
//
//	var stop stopper // before the clients start
//	if l.Total > 0 && n >= l.Total || stop.stopped() { return } // each request
//	rec.fail(err); if stop.fatal(err) { return }               // a failed request
//	return out, errors.Join(ctx.Err(), stop.Err())              // after wg.Wait
//
// and populate, whose puts meet the same errors, returns isFatal(err) when
// it is not nil.
type stopper struct {
	stop atomic.Bool
	once sync.Once
	err  error // the first fatal error; written once, before stop is set
}

// fatal reports whether err ends the run (see isFatal) and keeps the first
// such error for err.
func (s *stopper) fatal(err error) bool {
	ferr := isFatal(err)
	if ferr == nil {
		return false
	}
	s.once.Do(func() {
		s.err = ferr
		s.stop.Store(true)
	})
	return true
}

// stopped reports whether some client got a fatal error.
func (s *stopper) stopped() bool { return s.stop.Load() }

// Err returns the first fatal error, or nil. It is meant to be read after
// the clients have ended.
func (s *stopper) Err() error {
	if !s.stop.Load() {
		return nil
	}
	return s.err
}
