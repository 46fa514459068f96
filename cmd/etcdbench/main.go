// Command etcdbench answers whether a disk, and an etcd cluster on it, is
// fast enough for etcd, and why not. See README.md for commands, flags and
// exit codes.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"etcdbench/internal/etcdcluster"
)

func main() {
	if code, ok := etcdcluster.MaybeRunMember(); ok { // a member of a 3-member embedded etcd: see its doc
		os.Exit(code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	var got os.Signal
	caught := make(chan struct{})
	go func() {
		got = <-sigs // later signals stay queued and ignored while cleanup runs
		close(caught)
		cancel()
	}()
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	select {
	case <-caught:
		if s, ok := got.(syscall.Signal); ok && code == exitInterrupted {
			code = 128 + int(s)
		}
	default:
	}
	cancel()
	os.Exit(code)
}
