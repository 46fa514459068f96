// Command etcdserver runs one embedded etcd (go.etcd.io/etcd/server/v3
// embed, the version in go.mod) for bench/put-vs-etcd-benchmark, so that
// etcd's benchmark tool and etcdbench load the same server. It listens on
// free 127.0.0.1 ports, keeps its data in a new directory inside --dir,
// prints its client URL as one line on stdout once it is ready, and runs
// until its stdin closes or it gets SIGINT or SIGTERM; then it stops etcd
// and removes the data directory.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"etcdbench/internal/etcdcluster"
)

func main() {
	dir := flag.String("dir", "", "directory to create the data directory in (required)")
	flag.Parse()
	if *dir == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: etcdserver --dir DIR")
		os.Exit(2)
	}
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "etcdserver:", err)
		os.Exit(1)
	}
}

func run(dir string) (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	data, err := os.MkdirTemp(dir, "etcd-")
	if err != nil {
		return err
	}
	defer func() {
		if rerr := os.RemoveAll(data); rerr != nil && err == nil {
			err = rerr
		}
	}()
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: data})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := c.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if _, err := fmt.Println(c.Endpoints()[0]); err != nil {
		return err
	}
	stdinClosed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stdinClosed)
	}()
	select {
	case <-ctx.Done():
	case <-stdinClosed:
	}
	return nil
}
