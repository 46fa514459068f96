package etcdload

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestErrorClass(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"quota", rpctypes.ErrNoSpace, "ResourceExhausted: etcdserver: mvcc: database space exceeded"},
		{"grpc status", status.Error(codes.Unavailable, "connection refused"), "Unavailable: connection refused"},
		{"deadline", fmt.Errorf("put: %w", context.DeadlineExceeded), "DeadlineExceeded: context deadline exceeded"},
		{"plain", errors.New("boom"), "error: boom"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorClass(tc.err); got != tc.want {
				t.Errorf("errorClass = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestErrorClassesBounded(t *testing.T) {
	r := newRecorder(newAggregator(false), time.Now())
	for i := range maxErrorClasses + 5 {
		r.fail(fmt.Errorf("error %d", i))
	}
	if len(r.errs) != maxErrorClasses+1 || r.errs[otherErrors] != 5 {
		t.Errorf("%d classes, %d in other: want %d and 5", len(r.errs), r.errs[otherErrors], maxErrorClasses+1)
	}
	notes := errorNotes(r.errs)
	if len(notes) != maxErrorClasses+1 || notes[0] != "5 failed requests: "+otherErrors {
		t.Errorf("notes %v", notes[:2])
	}
}

func TestAggregatorSeries(t *testing.T) {
	a := newAggregator(false)
	a.add([]sample{{sec: 1, ns: 1e6}, {sec: 1, ns: 3e6}, {sec: 3, ns: 2e6}})
	s := a.series(4)
	if len(s) != 4 || s[0].Ops != 2 || s[1].Ops != 0 || s[2].Ops != 1 || s[3].Ops != 0 {
		t.Fatalf("series %+v", s)
	}
	if s[0].MaxNs < 2.9e6 || s[0].MaxNs > 3.1e6 {
		t.Errorf("max of second 1: %d ns, want about 3 ms", s[0].MaxNs)
	}
	if a.all.TotalCount() != 3 {
		t.Errorf("run histogram holds %d, want 3", a.all.TotalCount())
	}
}
