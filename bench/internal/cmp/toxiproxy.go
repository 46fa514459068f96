package cmp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// ToxiproxyPkg is Shopify's toxiproxy server, built with go install: a
// delay proxy independent of etcdbench's own peer links
// (internal/peernet), for the benches that hold those to a real network's
// delay.
const ToxiproxyPkg = "github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0"

// BuildToxiproxy builds ToxiproxyPkg into binDir and returns the
// server's path.
func BuildToxiproxy(ctx context.Context, binDir string) (string, error) {
	b, err := goCmd(ctx, binDir, []string{"GOBIN=" + binDir, "GOFLAGS=-mod=mod"}, "install", ToxiproxyPkg)
	if err != nil {
		return "", fmt.Errorf("go install %s: %w%s", ToxiproxyPkg, err, Tail(b))
	}
	return filepath.Join(binDir, "server"), nil
}

// Toxiproxy is a running toxiproxy server on 127.0.0.1, driven through
// its HTTP API.
type Toxiproxy struct {
	API  string // host:port of its API
	cmd  *exec.Cmd
	done chan error
}

// StartToxiproxy runs the server at path on a free port of 127.0.0.1 and
// waits until its API answers.
func StartToxiproxy(ctx context.Context, path string) (*Toxiproxy, error) {
	api, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(api)
	cmd := exec.Command(path, "-host", host, "-port", port)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting toxiproxy: %w", err)
	}
	t := &Toxiproxy{API: api, cmd: cmd, done: make(chan error, 1)}
	go func() { t.done <- cmd.Wait() }()
	if err := WaitHTTP(ctx, "http://"+api+"/version", func(status int, _ []byte) bool { return status == http.StatusOK }, t.done); err != nil {
		t.Stop()
		return nil, fmt.Errorf("toxiproxy's API: %w%s", err, Tail(out.Bytes()))
	}
	return t, nil
}

// AddProxy makes a proxy called name from listen to upstream.
func (t *Toxiproxy) AddProxy(ctx context.Context, name, listen, upstream string) error {
	return t.call(ctx, http.MethodPost, "/proxies", map[string]any{"name": name, "listen": listen, "upstream": upstream, "enabled": true})
}

// RemoveProxy deletes the proxy called name, closing its connections.
func (t *Toxiproxy) RemoveProxy(ctx context.Context, name string) error {
	return t.call(ctx, http.MethodDelete, "/proxies/"+name, nil)
}

// SetLatency gives the proxy called name a latency toxic of half rtt on
// each stream, upstream and downstream (none at 0): a round trip through
// it takes rtt more.
func (t *Toxiproxy) SetLatency(ctx context.Context, name string, rtt time.Duration) error {
	for _, stream := range []string{"upstream", "downstream"} {
		toxic := "latency_" + stream
		if err := t.call(ctx, http.MethodDelete, "/proxies/"+name+"/toxics/"+toxic, nil); err != nil && !errors.Is(err, errNotFound) {
			return err
		}
		if rtt == 0 {
			continue
		}
		if err := t.call(ctx, http.MethodPost, "/proxies/"+name+"/toxics", map[string]any{
			"name": toxic, "type": "latency", "stream": stream, "toxicity": 1.0,
			"attributes": map[string]any{"latency": (rtt / 2).Milliseconds(), "jitter": 0},
		}); err != nil {
			return err
		}
	}
	return nil
}

// errNotFound is the API's answer for a proxy or toxic that is not there.
var errNotFound = errors.New("cmp: toxiproxy: not found")

func (t *Toxiproxy) call(ctx context.Context, method, path string, body any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+t.API+path, rd)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("toxiproxy %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("toxiproxy %s %s: %w", method, path, errNotFound)
	case resp.StatusCode >= 300:
		return fmt.Errorf("toxiproxy %s %s: %s %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	return nil
}

// Stop stops the server (SIGTERM, SIGKILL after 10 s); how it exits
// does not matter, its proxies are gone either way.
func (t *Toxiproxy) Stop() {
	_ = t.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-t.done:
	case <-time.After(10 * time.Second):
		_ = t.cmd.Process.Kill()
		<-t.done
	}
}

// WaitListening waits until something accepts connections at addr, for
// at most 30 s.
func WaitListening(ctx context.Context, addr string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("nothing listened at %s within 30 s", addr)
}
