package cmp

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"
)

// WaitHealthy polls url (a member's /health) every interval until etcd
// says it is healthy, for at most 5 minutes (a 1 GB db on a slow disk),
// or the member's process exits (a value on exited, put back for its
// reaper).
func WaitHealthy(ctx context.Context, url string, exited chan error, every time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && bytes.Contains(b.Bytes(), []byte(`"health":"true"`)) {
				return nil
			}
		}
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("exited before it was healthy: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
	return fmt.Errorf("not healthy within 5 minutes at %s", url)
}
