package cmp

import (
	"context"
	"os"
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
	ms, err := StartEtcdCluster(ctx, dir, etcd, 3, func(i int, listen string) (string, error) {
		asked = append(asked, i)
		return listen, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || len(asked) != 3 {
		t.Errorf("%d members, advertise asked for %v: want 3", len(ms), asked)
	}
	if err := StopEtcdCluster(ms); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left in the directory: %v", left)
	}
}
