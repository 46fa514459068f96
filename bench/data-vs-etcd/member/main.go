// Command member runs one embedded etcd (go.etcd.io/etcd/server/v3 embed,
// the version in go.mod) as a process of its own for bench/data-vs-etcd,
// with its data in --data-dir, which it keeps: started again on the same
// directory and URLs it restarts the member, as Debian's etcd does with
// the same flags. It runs until SIGINT or SIGTERM.
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
	quota := flag.Int64("quota-backend-bytes", 0, "etcd's --quota-backend-bytes (0: etcd's default)")
	flag.Parse()
	if *dataDir == "" || *client == "" || *peer == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: member --data-dir DIR --client-url URL --peer-url URL [--quota-backend-bytes N]")
		os.Exit(2)
	}
	if err := run(*dataDir, *client, *peer, *quota); err != nil {
		fmt.Fprintln(os.Stderr, "member:", err)
		os.Exit(1)
	}
}

func run(dataDir, client, peer string, quota int64) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	curl, err := url.Parse(client)
	if err != nil {
		return err
	}
	purl, err := url.Parse(peer)
	if err != nil {
		return err
	}
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = "data", dataDir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*curl}, []url.URL{*curl}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*purl}, []url.URL{*purl}
	cfg.InitialCluster = "data=" + peer
	cfg.Logger, cfg.LogLevel = "zap", "warn"
	if quota > 0 {
		cfg.QuotaBackendBytes = quota
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
