package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestPoll(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			http.Error(w, "starting", http.StatusServiceUnavailable) // retried
			return
		}
		fmt.Fprintf(w, "# TYPE sends counter\nsends %d\n", n.Load())
	}))
	defer srv.Close()
	count := func(f Families) float64 { v, _ := ValueOf(f, "sends"); return v }
	ctx := context.Background()
	far := time.Now().Add(time.Minute)
	boom := errors.New("boom")
	for _, c := range []struct {
		name     string
		deadline time.Time
		done     func(Families) (bool, error)
		want     error
	}{
		{"until it counts 3", far, func(f Families) (bool, error) { return count(f) >= 3, nil }, nil},
		{"the condition fails", far, func(Families) (bool, error) { return false, boom }, boom},
		{"past the deadline", time.Now(), func(Families) (bool, error) { return false, nil }, ErrPollDeadline},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := Poll(ctx, srv.URL, time.Millisecond, c.deadline, c.done); !errors.Is(err, c.want) {
				t.Errorf("Poll = %v, want %v", err, c.want)
			}
		})
	}
	if got := n.Load(); got < 3 {
		t.Errorf("%d scrapes, want at least 3", got)
	}
}
