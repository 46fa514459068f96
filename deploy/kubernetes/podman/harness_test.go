package podman

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"golang.org/x/sys/unix"

	"etcdbench/internal/testutil"
)

// containersConf is the podman configuration the tests run with, in a
// file of their own (CONTAINERS_CONF), the machine's left as it is: no
// default ulimits (raising RLIMIT_NOFILE needs CAP_SYS_RESOURCE, which
// this machine's root lacks), runc (crun cannot run on this machine's
// hybrid cgroup hierarchy), no events and cgroupfs (no systemd), and the
// network configuration (where podman writes its lock file even for
// --network none) in the temporary directory.
const containersConf = `[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "none"

[network]
network_config_dir = "%s"
`

// podman runs podman with its own storage, run directory and
// configuration, all in a temporary directory removed when the test ends.
type podman struct {
	t    *testing.T
	dir  string
	base []string
	env  []string
	made []string // of blobCache, deepest first
}

// newPodman skips t without root, podman or runc (fails it under
// CI=true: testutil.Missing), and sets up podman's storage in a
// temporary directory.
func newPodman(t *testing.T) *podman {
	t.Helper()
	if testing.Short() {
		t.Skip("runs containers")
	}
	if os.Geteuid() != 0 {
		testutil.Missing(t, "the container tests run rootful podman: run them as root")
	}
	if _, err := exec.LookPath("podman"); err != nil {
		testutil.Missing(t, "podman is not installed (Debian: apt-get install podman runc): skipping the container tests")
	}
	if _, err := exec.LookPath("runc"); err != nil {
		testutil.Missing(t, "runc is not installed (Debian: apt-get install runc): skipping the container tests")
	}
	dir := t.TempDir()
	for _, d := range []string{"root", "runroot", "tmp", "buildtmp", "net.d"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(dir, "containers.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(containersConf, filepath.Join(dir, "net.d"))), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &podman{t: t, dir: dir,
		base: []string{"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "runroot"),
			"--tmpdir", filepath.Join(dir, "tmp"), "--storage-driver", "vfs",
			"--runtime", "runc", "--cgroup-manager", "cgroupfs", "--events-backend", "none"},
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CONTAINERS_") && !strings.HasPrefix(kv, "TMPDIR=") {
			p.env = append(p.env, kv)
		}
	}
	p.env = append(p.env, "CONTAINERS_CONF="+conf, "TMPDIR="+filepath.Join(dir, "buildtmp"))
	// podman keeps one file outside its storage, whatever the options:
	// the image library's blob cache. Removed after the test when the
	// test made it (leaving a machine's own podman cache alone).
	for _, path := range blobCache {
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			p.made = append(p.made, path)
		}
	}
	t.Cleanup(p.cleanup)
	return p
}

// blobCache is containers/image's cache for root, and the directories
// above it, deepest first.
var blobCache = []string{"/var/lib/containers/cache/blob-info-cache-v1.boltdb", "/var/lib/containers/cache", "/var/lib/containers"}

// on is p reporting to t: a subtest's failures must be its own.
func (p *podman) on(t *testing.T) *podman {
	c := *p
	c.t = t
	return &c
}

// run runs podman with args and returns its combined output.
func (p *podman) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "podman", append(append([]string{}, p.base...), args...)...)
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("podman %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// must runs podman and fails the test on an error.
func (p *podman) must(args ...string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := p.run(ctx, args...)
	if err != nil {
		p.t.Fatal(err)
	}
	return out
}

// cleanup removes every container and image (the storage goes with the
// temporary directory), and unmounts what a
// killed container may have left mounted under the directory.
func (p *podman) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := p.run(ctx, "rm", "--all", "--force", "--time", "0"); err != nil {
		p.t.Logf("cleanup: %v\n%s", err, out)
	}
	// Not "system reset": it also removes the machine's networks.
	if out, err := p.run(ctx, "rmi", "--all", "--force"); err != nil {
		p.t.Logf("cleanup: %v\n%s", err, out)
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	var under []string
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 4 && strings.HasPrefix(f[4], p.dir+"/") {
			under = append(under, f[4])
		}
	}
	for i := len(under) - 1; i >= 0; i-- {
		_ = unix.Unmount(under[i], unix.MNT_DETACH)
	}
	for _, path := range p.made {
		_ = os.Remove(path) // a directory only when empty
	}
}

// buildImage builds etcdbench statically (CGO_ENABLED=0, as the
// Dockerfile does; without its -trimpath, which changes only the paths
// the binary records, so that a suite run with CGO_ENABLED=0 as the
// README's serves every package from its build cache) and an image FROM
// scratch holding only it, tagged tag: the Dockerfile's final stage
// without the network its distroless base would need.
func (p *podman) buildImage(tag string) {
	p.t.Helper()
	ctxDir := filepath.Join(p.dir, "image")
	if err := os.Mkdir(ctxDir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	build := exec.Command("go", "build", "-ldflags", "-s -w", "-o", filepath.Join(ctxDir, "etcdbench"), "etcdbench/cmd/etcdbench")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		p.t.Fatalf("go build: %v\n%s", err, out)
	}
	containerfile := "FROM scratch\nCOPY etcdbench /etcdbench\nUSER 65532:65532\nENTRYPOINT [\"/etcdbench\"]\n"
	if err := os.WriteFile(filepath.Join(ctxDir, "Containerfile"), []byte(containerfile), 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.must("build", "--pull=never", "--network", "none", "--tag", tag, ctxDir)
}

// start runs a mapped pod as the kubelet does: its init containers, then
// its main container.
func (p *podman) start(m mappedPod) {
	p.t.Helper()
	p.runInit(m.Init)
	p.startMain(m.Main)
}

// runInit runs init containers one after the other, each to completion:
// one that fails fails the test (the kubelet would not start the pod).
func (p *podman) runInit(init []mappedContainer) {
	p.t.Helper()
	for _, c := range init {
		p.t.Logf("podman %s", strings.Join(c.Args, " "))
		p.must(c.Args...)
		if code := p.waitExit(c.Name, time.Minute); code != 0 {
			p.t.Fatalf("init container %s: exit code %d\n%s", c.Name, code, p.logs(c.Name))
		}
		p.t.Logf("init container %s: exit code 0: %s", c.Name, strings.TrimSpace(p.logs(c.Name)))
	}
}

// startMain starts a pod's main container, detached.
func (p *podman) startMain(c mappedContainer) {
	p.t.Helper()
	p.t.Logf("podman %s", strings.Join(c.Args, " "))
	p.must(c.Args...)
}

// logs is a container's stdout and stderr.
func (p *podman) logs(name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := p.run(ctx, "logs", name)
	if err != nil {
		return err.Error()
	}
	return out
}

// state is a container's status ("running", "exited"), exit code and,
// while it runs, its pid on the host.
func (p *podman) state(name string) (status string, code, pid int) {
	p.t.Helper()
	out := p.must("inspect", "--format", "{{.State.Status}} {{.State.ExitCode}} {{.State.Pid}}", name)
	if _, err := fmt.Sscan(out, &status, &code, &pid); err != nil {
		p.t.Fatalf("podman inspect %s: %q: %v", name, out, err)
	}
	return status, code, pid
}

// waitExit waits until the container has exited and returns its exit code.
func (p *podman) waitExit(name string, timeout time.Duration) int {
	p.t.Helper()
	var status string
	var code int
	if !testutil.Poll(timeout, func() bool {
		status, code, _ = p.state(name)
		return status == "exited" || status == "stopped"
	}) {
		p.t.Fatalf("container %s still %s after %s\n%s", name, status, timeout, p.logs(name))
	}
	return code
}

// hostPathReady checks a hostPath volume's directory as the kubelet does
// for its type, creating it for DirectoryOrCreate.
func hostPathReady(path string, typ *corev1.HostPathType) error {
	t := corev1.HostPathUnset
	if typ != nil {
		t = *typ
	}
	switch t {
	case corev1.HostPathDirectoryOrCreate:
		return os.MkdirAll(path, 0o755)
	case corev1.HostPathDirectory:
		if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
			return fmt.Errorf("hostPath %s of type Directory: not a directory (%v)", path, err)
		}
		return nil
	case corev1.HostPathUnset:
		return nil
	}
	return fmt.Errorf("hostPath type %s is not mapped", t)
}

// netnsClient is an HTTP client whose connections are made in the
// network namespace of process pid: the pod's, which nothing outside
// reaches (no port is published, as in a cluster without a Service).
func netnsClient(pid int) *http.Client {
	ns := fmt.Sprintf("/proc/%d/ns/net", pid)
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		type res struct {
			c   net.Conn
			err error
		}
		ch := make(chan res, 1)
		go func() {
			// The thread enters the pod's namespace and is never given
			// back: the runtime ends a goroutine's locked thread with it.
			runtime.LockOSThread()
			fd, err := unix.Open(ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				ch <- res{nil, &fs.PathError{Op: "open", Path: ns, Err: err}}
				return
			}
			defer unix.Close(fd)
			if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
				ch <- res{nil, fmt.Errorf("setns %s: %w", ns, err)}
				return
			}
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			ch <- res{c, err}
		}()
		r := <-ch
		return r.c, r.err
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
}
