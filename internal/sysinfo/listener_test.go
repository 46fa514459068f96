package sysinfo

import (
	"net"
	"os"
	"testing"
)

// A socket this test listens on is found as this process's; a port
// nobody listens on, and an address of no interface here, are not.
func TestListeningPID(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	pid, err := ListeningPID("/proc", addr)
	if err != nil || pid != os.Getpid() {
		t.Fatalf("ListeningPID(%s) = %d, %v; want this process, %d", addr, pid, err, os.Getpid())
	}
	_, port, _ := net.SplitHostPort(addr)
	if pid, err := ListeningPID("/proc", net.JoinHostPort("localhost", port)); err != nil || pid != os.Getpid() {
		t.Errorf("by localhost: %d, %v; want %d", pid, err, os.Getpid())
	}
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	free.Close()
	if pid, err := ListeningPID("/proc", freeAddr); err != nil || pid != 0 {
		t.Errorf("a closed port %s: %d, %v; want 0", freeAddr, pid, err)
	}
	// TEST-NET-3 (RFC 5737): on no interface of a test machine.
	if pid, err := ListeningPID("/proc", net.JoinHostPort("203.0.113.7", port)); err != nil || pid != 0 {
		t.Errorf("another machine's address: %d, %v; want 0", pid, err)
	}
	if _, err := ListeningPID("/proc", "no-port"); err == nil {
		t.Error("an address without a port: no error")
	}
}
