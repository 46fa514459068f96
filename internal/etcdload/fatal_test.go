package etcdload

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"etcdbench/internal/etcdcluster"
)

func TestIsFatal(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		fatal bool
	}{
		{"nil", nil, false},
		{"permission denied", rpctypes.ErrPermissionDenied, true},
		{"gRPC permission denied", rpctypes.ErrGRPCPermissionDenied, true},
		{"expired auth token", rpctypes.ErrInvalidAuthToken, false},
		{"auth revision moved", rpctypes.ErrAuthOldRevision, false},
		{"clientv3's NOSPACE", rpctypes.ErrNoSpace, true},
		{"gRPC NOSPACE status", rpctypes.ErrGRPCNoSpace, true},
		{"wrapped NOSPACE", fmt.Errorf("put /etcdbench/x: %w", rpctypes.ErrNoSpace), true},
		{"NOSPACE status built anew", status.Error(codes.ResourceExhausted, "etcdserver: mvcc: database space exceeded"), true},
		{"NOSPACE as text only", errors.New("rpc error: etcdserver: mvcc: database space exceeded"), true},
		{"other ResourceExhausted", status.Error(codes.ResourceExhausted, "etcdserver: too many requests"), false},
		{"request too large", rpctypes.ErrRequestTooLarge, false},
		{"timeout", rpctypes.ErrTimeout, false},
		{"leader changed", rpctypes.ErrLeaderChanged, false},
		{"no leader", rpctypes.ErrNoLeader, false},
		{"deadline", context.DeadlineExceeded, false},
		{"cancelled", context.Canceled, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := isFatal(tc.err)
			if (got != nil) != tc.fatal {
				t.Fatalf("isFatal(%v) = %v, want fatal %v", tc.err, got, tc.fatal)
			}
			switch {
			case got == nil:
			case errors.Is(got, ErrAuth):
				if !errors.Is(got, tc.err) || !strings.Contains(got.Error(), "--user") || !strings.Contains(got.Error(), PrefixRoot) {
					t.Errorf("%v: want ErrAuth wrapping %v, saying --user and %s", got, tc.err, PrefixRoot)
				}
			default:
				checkNoSpaceError(t, got, tc.err)
			}
		})
	}
}

// checkNoSpaceError checks what a fatal NOSPACE error must say: one line,
// the sentinel, the cause and etcd's recovery.
func checkNoSpaceError(t *testing.T, got, cause error) {
	t.Helper()
	msg := got.Error()
	if !errors.Is(got, ErrNoSpace) || !errors.Is(got, cause) {
		t.Errorf("%v: want ErrNoSpace wrapping %v", got, cause)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("not one line: %q", msg)
	}
	for _, want := range []string{"database space exceeded", "etcdctl compact", "etcdctl defrag", "etcdctl alarm disarm", "--quota-backend-bytes"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
}

func TestStopper(t *testing.T) {
	var s stopper
	if s.stopped() || s.Err() != nil || s.fatal(rpctypes.ErrTimeout) || s.stopped() {
		t.Fatalf("a fresh stopper, or one given a transient error, is stopped or has an error: %v", s.Err())
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if !s.fatal(fmt.Errorf("client %d: %w", i, rpctypes.ErrNoSpace)) {
				t.Errorf("client %d: NOSPACE not fatal", i)
			}
		})
	}
	wg.Wait()
	if !s.stopped() || !errors.Is(s.Err(), ErrNoSpace) {
		t.Fatalf("after NOSPACE: stopped %v, error %v", s.stopped(), s.Err())
	}
	first := s.Err()
	s.fatal(rpctypes.ErrGRPCNoSpace)
	if s.Err() != first {
		t.Errorf("the first fatal error %v was replaced by %v", first, s.Err())
	}
}

// TestNoSpaceFromEtcd fills a real etcd with a small quota until it
// refuses a put, and checks that the error it returns is classified as
// fatal, and what etcd still allows under its NOSPACE alarm: ranges and
// deletes, which is what a run's cleanup needs.
func TestNoSpaceFromEtcd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: t.TempDir(), QuotaBackendBytes: 4 << 20})
	if err != nil {
		t.Fatalf("starting an etcd with a 4 MiB quota: %v", err)
	}
	defer c.Close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	prefix := PrefixRoot + "nospace-test/"
	val := strings.Repeat("x", 256<<10)
	var putErr error
	puts := 0
	// 4 MiB of quota holds fewer than 16 such values, but etcd checks the
	// quota against the db file, which grows at its backend's commits
	// (every 100 ms): puts faster than that run past it for a while (64
	// all succeeded at times). 1,000 bound the loop.
	for ; puts < 1000 && putErr == nil; puts++ {
		_, putErr = cli.Put(ctx, fmt.Sprintf("%s%d", prefix, puts%4), val)
	}
	if putErr == nil {
		t.Fatalf("%d puts of 256 KiB into a 4 MiB quota all succeeded", puts)
	}
	ferr := isFatal(putErr)
	if ferr == nil {
		t.Fatalf("etcd's error after %d puts is not fatal: %v", puts, putErr)
	}
	checkNoSpaceError(t, ferr, putErr)
	t.Logf("after %d puts: %v", puts, ferr)

	alarms, err := cli.AlarmList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(alarms.Alarms) == 0 {
		t.Errorf("no alarm raised after %v", putErr)
	}
	if _, err := cli.Put(ctx, prefix+"small", "x"); isFatal(err) == nil {
		t.Errorf("a small put under the alarm: %v, want NOSPACE", err)
	}
	resp, err := cli.Delete(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatalf("delete under the NOSPACE alarm: %v", err)
	}
	if resp.Deleted == 0 {
		t.Errorf("the delete under the alarm removed nothing")
	}
	left, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("range under the NOSPACE alarm: %v", err)
	}
	if left.Count != 0 {
		t.Errorf("%d keys left after the delete", left.Count)
	}
}
