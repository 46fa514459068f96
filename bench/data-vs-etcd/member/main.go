// Command member runs one embedded etcd (go.etcd.io/etcd/server/v3 embed,
// the version in go.mod) as a process of its own for bench/data-vs-etcd,
// with its data in --data-dir, which it keeps: started again on the same
// directory and URLs it restarts the member, as Debian's etcd does with
// the same flags; with --initial-cluster-state existing it is a new
// member joining a running one. It runs until SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "the member's data directory (required)")
	client := flag.String("client-url", "", "the client URL to listen on (required)")
	peer := flag.String("peer-url", "", "the peer URL to listen on (required)")
	var o options
	flag.StringVar(&o.name, "name", "data", "the member's name")
	flag.StringVar(&o.cluster, "initial-cluster", "", "etcd's --initial-cluster (default: the member alone)")
	flag.StringVar(&o.state, "initial-cluster-state", "new", "etcd's --initial-cluster-state: new, or existing for a member added to a running cluster")
	flag.StringVar(&o.metrics, "metrics-url", "", "etcd's --listen-metrics-urls: /metrics served from the start (empty: none)")
	flag.Uint64Var(&o.snapshotCount, "snapshot-count", 0, "etcd's --snapshot-count (0: etcd's default)")
	quota := flag.Int64("quota-backend-bytes", 0, "etcd's --quota-backend-bytes (0: etcd's default)")
	flag.Parse()
	if *dataDir == "" || *client == "" || *peer == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: member --data-dir DIR --client-url URL --peer-url URL [--name N] [--initial-cluster C] [--initial-cluster-state S] [--metrics-url URL] [--snapshot-count N] [--quota-backend-bytes N]")
		os.Exit(2)
	}
	o.dataDir, o.client, o.peer, o.quota = *dataDir, *client, *peer, *quota
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "member:", err)
		os.Exit(1)
	}
}

// options are the member's flags.
type options struct {
	name, dataDir, client, peer, cluster, state, metrics string
	snapshotCount                                        uint64
	quota                                                int64
}

func run(o options) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	curl, err := url.Parse(o.client)
	if err != nil {
		return err
	}
	purl, err := url.Parse(o.peer)
	if err != nil {
		return err
	}
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = o.name, o.dataDir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*curl}, []url.URL{*curl}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*purl}, []url.URL{*purl}
	cfg.InitialCluster, cfg.ClusterState = o.cluster, o.state
	if cfg.InitialCluster == "" {
		cfg.InitialCluster = o.name + "=" + o.peer
	}
	cfg.Logger, cfg.LogLevel = "zap", "warn"
	if o.metrics != "" {
		murl, err := url.Parse(o.metrics)
		if err != nil {
			return err
		}
		cfg.ListenMetricsUrls = []url.URL{*murl}
	}
	if o.snapshotCount > 0 {
		cfg.SnapshotCount = o.snapshotCount
	}
	if o.quota > 0 {
		cfg.QuotaBackendBytes = o.quota
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	select {
	case <-ctx.Done():
		return nil
	case err := <-e.Err():
		return err
	}
}
