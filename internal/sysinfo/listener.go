package sysinfo

import (
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/prometheus/procfs"
)

// tcpListen is the state of a listening socket in /proc/net/tcp.
const tcpListen = 0x0A

// ListeningPID returns the process on this machine that listens on
// hostport (host:port), read from /proc under procRoot: the socket
// listening on the port at the host's address (or at every address),
// then the process that holds it. It returns 0 when the host is not an
// address of this machine, nothing here listens there, or the socket's
// owner cannot be read (another user's process without root). A member
// found so shares this machine's CPUs and disk with whatever else runs
// on it, as an embedded one does.
func ListeningPID(procRoot, hostport string) (int, error) {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return 0, err
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("port %q: %w", p, err)
	}
	ips, err := localIPs(host)
	if err != nil || len(ips) == 0 {
		return 0, err
	}
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return 0, err
	}
	var inodes []uint64
	for _, read := range []func() (procfs.NetTCP, error){fs.NetTCP, fs.NetTCP6} {
		lines, err := read()
		if err != nil {
			continue // no IPv6, say
		}
		for _, l := range lines {
			if l.St != tcpListen || l.LocalPort != port || l.Inode == 0 {
				continue
			}
			if l.LocalAddr.IsUnspecified() || slices.ContainsFunc(ips, l.LocalAddr.Equal) {
				inodes = append(inodes, l.Inode)
			}
		}
	}
	if len(inodes) == 0 {
		return 0, nil
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return 0, err
	}
	for _, pr := range procs {
		targets, err := pr.FileDescriptorTargets()
		if err != nil {
			continue // gone, or another user's
		}
		for _, t := range targets {
			for _, in := range inodes {
				if t == "socket:["+strconv.FormatUint(in, 10)+"]" {
					return pr.PID, nil
				}
			}
		}
	}
	return 0, nil
}

// localIPs are host's addresses when it names this machine (a loopback
// name or address, or an address of one of its interfaces), else none.
func localIPs(host string) ([]net.IP, error) {
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else {
		addrs, err := net.LookupIP(host)
		if err != nil {
			return nil, nil // not resolvable here: not shown to be this machine
		}
		ips = addrs
	}
	ifaces, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	var out []net.IP
	for _, ip := range ips {
		local := ip.IsLoopback()
		for _, a := range ifaces {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				local = true
			}
		}
		if local {
			out = append(out, ip)
		}
	}
	return out, nil
}
