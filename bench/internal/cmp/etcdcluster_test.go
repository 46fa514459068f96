package cmp

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// A real three-member cluster of Debian's etcd: every member healthy,
// each advertising the peer address it is given, and nothing left behind.
func TestStartEtcdCluster(t *testing.T) {
	const etcd = "/usr/bin/etcd"
	if _, err := os.Stat(etcd); err != nil {
		t.Skipf("no %s (apt-get install etcd-server)", etcd)
	}
	if testing.Short() {
		t.Skip("starts three etcd processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	var asked []int
	wrapped := 0
	ms, err := StartEtcdClusterWith(ctx, dir, etcd, 3, ClusterOptions{
		Advertise: func(i int, listen string) (string, error) {
			asked = append(asked, i)
			return listen, nil
		},
		Args: []string{"--heartbeat-interval", "50", "--election-timeout", "500"},
		Wrap: func(i int) func(*exec.Cmd) { return func(*exec.Cmd) { wrapped++ } },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || len(asked) != 3 || wrapped != 3 {
		t.Errorf("%d members, advertise asked for %v, %d wrapped: want 3", len(ms), asked, wrapped)
	}
	// A member killed and started again on its data rejoins.
	if err := ms[2].Kill(ctx); err != nil || !ms[2].Exited() {
		t.Fatalf("kill: %v, exited %v", err, ms[2].Exited())
	}
	if err := ms[2].Restart(); err != nil {
		t.Fatal(err)
	}
	if err := ms[2].waitHealthy(ctx); err != nil || wrapped != 4 || ms[2].PeerURL == "" {
		t.Errorf("after the restart: %v, %d wrapped, peer URL %q", err, wrapped, ms[2].PeerURL)
	}
	if err := StopEtcdCluster(ms); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left in the directory: %v", left)
	}
}
