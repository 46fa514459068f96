package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The partition is the kernel's, independent of etcdbench's own peer
// links (internal/peernet): iptables DROP rules on loopback, in a chain
// of this run's own, for
//
//   - every packet to or from the leader's peer listener (the
//     connections the others opened to it), and
//   - every connection the leader opened to the others' peer listeners:
//     the leader's own packets are told by its cgroup (each member runs
//     in a cgroup v2 of its own, so that its sockets carry it), and the
//     connection is marked (CONNMARK) on the leader's first packet, so
//     that the others' answers on it are dropped too.
//
// The client port is not touched: clients still reach the cut-off
// leader. Dropped packets are retransmitted by TCP until the cut heals,
// as on a network that loses everything for a while.

// chainPrefix names the run's iptables chain and cgroups, followed by
// the bench's pid.
const chainPrefix = "drill-vs-etcd-"

// connMark is the bit of a connection's mark that says the cut-off
// leader opened it.
const connMark = "0x10000000/0x10000000"

// firewall is the run's iptables chain, jumped to from OUTPUT (on
// loopback every packet passes OUTPUT as it is sent, so dropping there
// cuts both ways).
type firewall struct {
	chain string
	cut   bool
}

func iptables(ctx context.Context, args ...string) error {
	b, err := exec.CommandContext(ctx, "iptables", append([]string{"-w", "5"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(b)))
	}
	return nil
}

// newFirewall removes the chains of earlier runs whose process is gone
// (a run killed by SIGKILL), then makes this run's chain, empty, and
// jumps to it from OUTPUT.
func newFirewall(ctx context.Context) (*firewall, error) {
	if _, err := exec.LookPath("iptables"); err != nil {
		return nil, fmt.Errorf("iptables not found (apt-get install iptables): %w", err)
	}
	if err := removeStaleChains(ctx); err != nil {
		return nil, err
	}
	f := &firewall{chain: chainPrefix + strconv.Itoa(os.Getpid())}
	if err := iptables(ctx, "-N", f.chain); err != nil {
		return nil, err
	}
	if err := iptables(ctx, "-I", "OUTPUT", "1", "-o", "lo", "-j", f.chain); err != nil {
		return nil, errors.Join(err, iptables(context.Background(), "-X", f.chain))
	}
	return f, nil
}

// removeStaleChains removes this bench's chains whose run has ended.
func removeStaleChains(ctx context.Context) error {
	b, err := exec.CommandContext(ctx, "iptables", "-w", "5", "-S").Output()
	if err != nil {
		return fmt.Errorf("iptables -S: %w", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	var errs []error
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 || f[0] != "-N" || !strings.HasPrefix(f[1], chainPrefix) {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimPrefix(f[1], chainPrefix))
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue
		}
		errs = append(errs, (&firewall{chain: f[1]}).remove())
	}
	return errors.Join(errs...)
}

// cutRules are the rules that cut off the member whose peer listener is
// on port peer and whose cgroup is cgroup from the peer listeners on
// others.
func cutRules(chain string, peer int, cgroup string, others []int) string {
	var ports []string
	for _, p := range others {
		ports = append(ports, strconv.Itoa(p))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*filter\n")
	fmt.Fprintf(&b, "-A %s -p tcp --dport %d -j DROP\n", chain, peer)
	fmt.Fprintf(&b, "-A %s -p tcp --sport %d -j DROP\n", chain, peer)
	fmt.Fprintf(&b, "-A %s -p tcp -m multiport --dports %s -m cgroup --path %s -j CONNMARK --set-xmark %s\n", chain, strings.Join(ports, ","), cgroup, connMark)
	fmt.Fprintf(&b, "-A %s -m connmark --mark %s -j DROP\n", chain, connMark)
	fmt.Fprintf(&b, "COMMIT\n")
	return b.String()
}

// cutOff installs the rules at once (one iptables-restore transaction).
func (f *firewall) cutOff(ctx context.Context, peer int, cgroup string, others []int) error {
	cmd := exec.CommandContext(ctx, "iptables-restore", "-w", "5", "--noflush")
	cmd.Stdin = strings.NewReader(cutRules(f.chain, peer, cgroup, others))
	f.cut = true // whatever it did, heal flushes the chain
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("iptables-restore: %w: %s", err, strings.TrimSpace(string(b)))
	}
	return nil
}

// drops reads how many packets each of the cut's rules matched, by
// rule: "to the leader's peer port", "from it", "the leader's
// connections marked", "their packets dropped".
func (f *firewall) drops(ctx context.Context) map[string]int64 {
	b, err := exec.CommandContext(ctx, "iptables", "-w", "5", "-L", f.chain, "-n", "-v", "-x").Output()
	if err != nil {
		return nil
	}
	names := []string{"to_peer_port", "from_peer_port", "leader_connections_marked", "marked_dropped"}
	out := map[string]int64{}
	i := 0
	for _, line := range strings.Split(string(b), "\n") {
		fs := strings.Fields(line)
		if len(fs) < 2 || i >= len(names) {
			continue
		}
		if n, err := strconv.ParseInt(fs[0], 10, 64); err == nil {
			out[names[i]] = n
			i++
		}
	}
	return out
}

// heal removes the cut's rules.
func (f *firewall) heal() error {
	if !f.cut {
		return nil
	}
	f.cut = false
	return iptables(context.Background(), "-F", f.chain)
}

// remove deletes the jump to the chain and the chain.
func (f *firewall) remove() error {
	bg := context.Background()
	var errs []error
	for iptables(bg, "-C", "OUTPUT", "-o", "lo", "-j", f.chain) == nil {
		if err := iptables(bg, "-D", "OUTPUT", "-o", "lo", "-j", f.chain); err != nil {
			errs = append(errs, err)
			break
		}
	}
	errs = append(errs, iptables(bg, "-F", f.chain), iptables(bg, "-X", f.chain))
	return errors.Join(errs...)
}

// cgroups are the members' cgroups v2, one each, under a directory of
// the run's own; Path(i) is member i's as iptables' cgroup match names
// it (relative to the hierarchy's root).
type cgroups struct {
	root, base string
	fds        []*os.File
}

// cgroup2Root is where the cgroup v2 hierarchy is mounted
// (/sys/fs/cgroup, or /sys/fs/cgroup/unified beside v1's).
func cgroup2Root() (string, error) {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[2] == "cgroup2" {
			return f[1], nil
		}
	}
	return "", errors.New("no cgroup v2 hierarchy mounted (the partition tells the leader's packets by its cgroup)")
}

// newCgroups makes n cgroups, removing those of earlier runs whose
// process is gone.
func newCgroups(n int) (g *cgroups, err error) {
	root, err := cgroup2Root()
	if err != nil {
		return nil, err
	}
	if old, _ := filepath.Glob(filepath.Join(root, chainPrefix+"*")); len(old) > 0 {
		for _, d := range old {
			pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), chainPrefix))
			if err == nil && pid != os.Getpid() && syscall.Kill(pid, 0) != nil {
				_ = removeCgroupTree(d)
			}
		}
	}
	g = &cgroups{root: root, base: filepath.Join(root, chainPrefix+strconv.Itoa(os.Getpid()))}
	if err := os.Mkdir(g.base, 0o755); err != nil {
		return nil, fmt.Errorf("making a cgroup: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, g.close())
			g = nil
		}
	}()
	for i := range n {
		d := filepath.Join(g.base, fmt.Sprintf("m%d", i+1))
		if err := os.Mkdir(d, 0o755); err != nil {
			return g, fmt.Errorf("making a cgroup: %w", err)
		}
		f, err := os.Open(d)
		if err != nil {
			return g, err
		}
		g.fds = append(g.fds, f)
	}
	return g, nil
}

// Path is member i's cgroup relative to the hierarchy's root.
func (g *cgroups) Path(i int) string {
	rel, _ := filepath.Rel(g.root, g.fds[i].Name())
	return rel
}

// Wrap starts member i's process in its cgroup (clone3's
// CLONE_INTO_CGROUP, so that every socket it opens carries it), and has
// it killed should this bench die (SIGKILL on the parent's death).
func (g *cgroups) Wrap(i int) func(*exec.Cmd) {
	return func(cmd *exec.Cmd) {
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(g.fds[i].Fd()), Pdeathsig: syscall.SIGKILL}
	}
}

// close removes the cgroups (their processes must have exited).
func (g *cgroups) close() error {
	for _, f := range g.fds {
		f.Close()
	}
	g.fds = nil
	return removeCgroupTree(g.base)
}

// removeCgroupTree removes the cgroup d and those under it, retrying for
// a second while exited processes leave them.
func removeCgroupTree(d string) error {
	subs, _ := filepath.Glob(filepath.Join(d, "m[0-9]*"))
	var err error
	for range 100 {
		err = nil
		for _, s := range append(subs, d) {
			if rerr := syscall.Rmdir(s); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
				err = errors.Join(err, fmt.Errorf("removing cgroup %s: %w", s, rerr))
			}
		}
		if err == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}
