package etcdload

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestTLSFilesConfigErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    TLSFiles
	}{
		{"missing CA", TLSFiles{CACert: filepath.Join(dir, "nope.pem")}},
		{"CA without PEM", TLSFiles{CACert: notPEM}},
		{"cert without key", TLSFiles{Cert: notPEM}},
		{"missing cert and key", TLSFiles{Cert: filepath.Join(dir, "c.pem"), Key: filepath.Join(dir, "k.pem")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.f.Config(); !errors.Is(err, ErrTLSFiles) {
				t.Errorf("Config() error %v, want ErrTLSFiles", err)
			}
		})
	}
	if c, err := (TLSFiles{InsecureSkipVerify: true}).Config(); err != nil || !c.InsecureSkipVerify {
		t.Errorf("insecure config %+v, %v", c, err)
	}
}

func TestEndpointHost(t *testing.T) {
	for _, tc := range []struct {
		ep       string
		tlsGiven bool
		host     string
		secure   bool
	}{
		{"https://127.0.0.1:2379", false, "127.0.0.1:2379", true},
		{"http://127.0.0.1:2379", true, "127.0.0.1:2379", false},
		{"10.0.0.1:2379", true, "10.0.0.1:2379", true},
		{"10.0.0.1:2379", false, "10.0.0.1:2379", false},
	} {
		host, secure := endpointHost(tc.ep, tc.tlsGiven)
		if host != tc.host || secure != tc.secure {
			t.Errorf("endpointHost(%q, %v) = %q, %v; want %q, %v", tc.ep, tc.tlsGiven, host, secure, tc.host, tc.secure)
		}
	}
}

// TestCheckTLSPlainServer: a TLS handshake with a server that answers in
// plain text is ErrTLS, quickly, and says plain HTTP.
func TestCheckTLSPlainServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			c.Close()
		}
	}()
	cfg, err := TLSFiles{InsecureSkipVerify: true}.Config()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = checkTLS(context.Background(), []string{ln.Addr().String()}, cfg)
	if !errors.Is(err, ErrTLS) {
		t.Fatalf("checkTLS: %v, want ErrTLS", err)
	}
	if el := time.Since(start); el > handshakeTimeout {
		t.Errorf("took %v, longer than the handshake timeout", el)
	}
	t.Log(err)
}
