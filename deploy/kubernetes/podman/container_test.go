package podman

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"

	"golang.org/x/sys/unix"

	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/testutil"
	"etcdbench/internal/testutil/hostetcd"
)

// labelsOf is a sample's labels by name.
func labelsOf(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// TestContainers builds the image and runs the shipped pod specs in
// podman: the check Job, the exporter DaemonSet under its Localhost
// seccomp profile, the DaemonSet under the runtime's default profile, the
// Helm chart's DaemonSet (default values) with its profile installer, and
// the chart's capacity Job and exporter as the headroom loop.
func TestContainers(t *testing.T) {
	p := newPodman(t)
	job, ds := loadJob(t), loadDaemonSet(t)
	image := sameImage(t, job, ds)
	start := time.Now()
	p.buildImage(image)
	t.Logf("image %s built FROM scratch in %s (podman %s, runtime runc, storage vfs)", image, time.Since(start).Round(time.Millisecond), strings.TrimSpace(p.must("version", "--format", "{{.Client.Version}}")))

	t.Run("check Job", func(t *testing.T) { runJob(t, p.on(t), job.Spec.Template.Spec) })
	t.Run("exporter DaemonSet", func(t *testing.T) {
		tracefsMounted(t)
		if _, err := exec.LookPath("etcd"); err != nil {
			testutil.Missing(t, "etcd is not on PATH (Debian: apt-get install etcd-server): the exporter has nothing to trace")
		}
		// Debian's etcd on the host, a process of its own: what a static
		// pod's etcd is to the exporter's pod.
		e := hostetcd.Start(t, "podman-test", "")
		t.Run("shipped seccomp profile traces etcd", func(t *testing.T) {
			ps := ds.Spec.Template.Spec
			runExporter(t, p.on(t), ps, e, func(seccompDir string) mapOptions {
				installProfile(t, ps, seccompDir)
				return mapOptions{HostPath: func(p string) string { return p }}
			})
		})
		t.Run("RuntimeDefault refuses bpf and says so", func(t *testing.T) { runExporterRuntimeDefault(t, p.on(t), ds.Spec.Template.Spec) })
		// The Helm chart's pod with the default values: the pod and the
		// installer under RuntimeDefault, the installer (an init
		// container) copying the profile from its ConfigMap into the
		// kubelet's seccomp directory, the exporter under that profile.
		t.Run("chart's DaemonSet installs the profile and traces etcd", func(t *testing.T) {
			p := p.on(t)
			r := renderChart(t, "")
			ps := r.ds.Spec.Template.Spec
			for _, img := range chartImages(t, ps, image) {
				p.buildShellImage(img)
			}
			runExporter(t, p, ps, e, func(seccompDir string) mapOptions {
				o := r.nodeOptions(t, seccompDir, nil)
				o.Name = "etcdbench-chart-exporter"
				return o
			})
		})
		// The chart's capacity Job and exporter together: the headroom
		// loop on a real etcd of its own.
		t.Run("chart's capacity Job and exporter serve the headroom", func(t *testing.T) { runLoop(t, p.on(t), image) })
	})
}

// runJob runs the Job's pod with --quick appended to its args (the
// default check takes a minute), its hostPath scratch directory in a
// temporary directory, and takes the result record from its log as
// run.sh does.
func runJob(t *testing.T, p *podman, ps corev1.PodSpec) {
	scratch := t.TempDir()
	pod, err := podArgs(ps, mapOptions{Name: "etcdbench-check", ExtraArgs: []string{"--quick"},
		HostPath: func(path string) string { return filepath.Join(scratch, path) }})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p.start(pod)
	code := p.waitExit("etcdbench-check", 3*time.Minute)
	log := p.logs("etcdbench-check")
	if code != 0 && code != 1 {
		t.Fatalf("exit code %d, want 0 or 1 (a verdict)\n%s", code, log)
	}
	var r struct {
		Schema    string `json:"schema"`
		Status    string `json:"status"`
		Workloads []struct {
			Name     string `json:"name"`
			Verdicts []struct {
				Check, Status string
				Value         float64
			} `json:"verdicts"`
		} `json:"workloads"`
		Environment struct {
			Device *struct {
				Name string `json:"name"`
			} `json:"device"`
			Notes []string `json:"notes"`
		} `json:"environment"`
	}
	if err := json.Unmarshal([]byte(extractResult(log)), &r); err != nil {
		t.Fatalf("no result record in the log: %v\n%s", err, log)
	}
	if r.Schema != "etcdbench.result/v1" || r.Status == "" || len(r.Workloads) == 0 {
		t.Errorf("result record: schema %q, status %q, %d workloads", r.Schema, r.Status, len(r.Workloads))
	}
	// The scratch directory's device, found from the host's view
	// although podman masks /sys/dev/block.
	var st unix.Stat_t
	if err := unix.Stat(scratch, &st); err == nil && unix.Major(st.Dev) != 0 {
		host, herr := hostDevice(st.Dev)
		if r.Environment.Device == nil || herr == nil && r.Environment.Device.Name != host {
			t.Errorf("the result's device %+v, the host's %q (%v); notes %q", r.Environment.Device, host, herr, r.Environment.Notes)
		}
	}
	left, _ := os.ReadDir(filepath.Join(scratch, "/var/lib/etcd-etcdbench"))
	if len(left) > 0 {
		t.Errorf("the scratch hostPath holds %d entries after the run, want none", len(left))
	}
	var failed []string // a FAIL is an answer, not the test's failure: said in the log
	for _, w := range r.Workloads {
		for _, v := range w.Verdicts {
			if v.Status == "FAIL" {
				failed = append(failed, fmt.Sprintf("%s/%s %g", w.Name, v.Check, v.Value))
			}
		}
	}
	dev := "none"
	if r.Environment.Device != nil {
		dev = r.Environment.Device.Name
	}
	t.Logf("check --quick in the Job's pod: status %s %q, exit code %d, %d workloads, device %s, %s", r.Status, failed, code, len(r.Workloads), dev, time.Since(start).Round(100*time.Millisecond))
}

// extractResult is run.sh's sed -n '/^{$/,/^}$/p'.
func extractResult(log string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.SplitAfter(log, "\n") {
		l := strings.TrimSuffix(line, "\n")
		if l == "{" {
			in = true
		}
		if in {
			b.WriteString(line)
		}
		if in && l == "}" {
			in = false
		}
	}
	return b.String()
}

// tracefsMounted makes sure the host has tracefs at /sys/kernel/tracing,
// as a node does (the DaemonSet mounts the host's); one mounted here is
// unmounted when the test ends. Without it, t skips (fails under CI=true).
func tracefsMounted(t *testing.T) {
	t.Helper()
	const dir = "/sys/kernel/tracing"
	if _, err := os.Stat(filepath.Join(dir, "events", "syscalls")); err == nil {
		return
	}
	if err := unix.Mount("tracefs", dir, "tracefs", 0, ""); err != nil {
		testutil.Missing(t, "tracefs is not at %s and cannot be mounted there (mount -t tracefs nodev %s): %v", dir, dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Logf("unmounting the tracefs mounted at %s: %v", dir, err)
		}
	})
}

// exporterPort is the DaemonSet's container port.
func exporterPort(t *testing.T, ps corev1.PodSpec) int32 {
	t.Helper()
	ports := ps.Containers[0].Ports
	if len(ports) != 1 {
		t.Fatalf("%d ports, want the metrics port", len(ports))
	}
	return ports[0].ContainerPort
}

// shippedProfile is the exporter's seccomp profile as shipped beside the
// DaemonSet.
const shippedProfile = "../exporter/etcdbench-exporter-seccomp.json"

// installProfile installs the shipped profile in the stand-in kubelet
// seccomp directory under the name the pod's exporter container gives it,
// as docs/exporter.md says to on each node.
func installProfile(t *testing.T, ps corev1.PodSpec, seccompDir string) {
	t.Helper()
	sp := effectiveSeccomp(ps, ps.Containers[0])
	if sp == nil || sp.LocalhostProfile == nil {
		t.Fatal("the DaemonSet names no Localhost seccomp profile")
	}
	profile, err := os.ReadFile(shippedProfile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(seccompDir, *sp.LocalhostProfile), profile, 0o644); err != nil {
		t.Fatal(err)
	}
}

// exporterPod is an exporter's pod started by startExporter.
type exporterPod struct {
	t    *testing.T
	p    *podman
	name string
	// client reaches the pod's port inside its network namespace, at url.
	client *http.Client
	url    string
	// started is when the pod was about to be created.
	started time.Time
}

// startExporter runs the DaemonSet's pod: node prepares the node, given
// the stand-in kubelet seccomp directory (empty), and says how the pod's
// hostPaths and ConfigMaps are found (and the container's name, default
// etcdbench-exporter); the exporter's container must run under the
// shipped profile, found in that directory once the pod's init
// containers (if any) have run.
func startExporter(t *testing.T, p *podman, ps corev1.PodSpec, node func(seccompDir string) mapOptions) *exporterPod {
	t.Helper()
	seccompDir := t.TempDir()
	sp := effectiveSeccomp(ps, ps.Containers[0])
	if sp == nil || sp.Type != corev1.SeccompProfileTypeLocalhost || sp.LocalhostProfile == nil {
		t.Fatalf("the exporter's container has seccomp profile %+v, not Localhost", sp)
	}
	o := node(seccompDir)
	if o.Name == "" {
		o.Name = "etcdbench-exporter"
	}
	o.SeccompDir = seccompDir
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	pod, err := podArgs(ps, o)
	if err != nil {
		t.Fatal(err)
	}
	x := &exporterPod{t: t, p: p, name: o.Name, started: time.Now(), url: fmt.Sprintf("http://127.0.0.1:%d", exporterPort(t, ps))}
	// The init containers, then the profile they may have installed.
	p.runInit(pod.Init)
	installed, err := os.ReadFile(filepath.Join(seccompDir, *sp.LocalhostProfile))
	if err != nil {
		t.Fatalf("the exporter's profile is not in the kubelet's seccomp directory: %v", err)
	}
	// The chart's ConfigMap holds the file in a "|-" block, which drops
	// its final newline: the one difference allowed.
	if shipped, err := os.ReadFile(shippedProfile); err != nil || !bytes.Equal(bytes.TrimSuffix(installed, []byte("\n")), bytes.TrimSuffix(shipped, []byte("\n"))) {
		t.Fatalf("the profile in the kubelet's seccomp directory (%d bytes) is not %s (%d bytes, %v)", len(installed), shippedProfile, len(shipped), err)
	}
	p.startMain(pod.Main)
	status, _, pid := p.state(x.name)
	if status != "running" {
		t.Fatalf("the exporter is %s\n%s", status, p.logs(x.name))
	}
	x.client = netnsClient(pid)
	return x
}

// scrape reads the exporter's /metrics (nil when it cannot).
func (x *exporterPod) scrape() metrics.Families {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f, err := metrics.Scrape(ctx, x.client, x.url+"/metrics")
	if err != nil {
		return nil
	}
	return f
}

// until waits for cond on a scrape, failing when the container exits.
func (x *exporterPod) until(what string, timeout time.Duration, cond func(metrics.Families) bool) metrics.Families {
	x.t.Helper()
	var f metrics.Families
	if !testutil.Poll(timeout, func() bool {
		if f = x.scrape(); f != nil && cond(f) {
			return true
		}
		if s, code, _ := x.p.state(x.name); s != "running" {
			x.t.Fatalf("waiting for %s: the exporter is %s (exit code %d)\n%s", what, s, code, x.p.logs(x.name))
		}
		return false
	}) {
		x.t.Fatalf("no %s after %s\n%s", what, timeout, x.p.logs(x.name))
	}
	return f
}

// stop sends SIGTERM as the kubelet does: every tracer detached, exit 143.
func (x *exporterPod) stop(ps corev1.PodSpec) {
	x.t.Helper()
	x.p.must("stop", "--time", strconv.Itoa(int(*ps.TerminationGracePeriodSeconds)), x.name)
	if code := x.p.waitExit(x.name, 30*time.Second); code != 143 || !strings.Contains(x.p.logs(x.name), "every tracer detached") {
		x.t.Errorf("stopped: exit code %d, want 143 and the line saying every tracer is detached\n%s", code, x.p.logs(x.name))
	}
}

// runExporter runs the DaemonSet's pod (startExporter) and counts the
// host etcd's WAL syncs through the exporter's /metrics.
func runExporter(t *testing.T, p *podman, ps corev1.PodSpec, e *hostetcd.Etcd, node func(seccompDir string) mapOptions) {
	x := startExporter(t, p, ps, node)
	name, client, url, until := x.name, x.client, x.url, x.until
	mine := map[string]string{"data_dir": e.DataDir}
	up := until("etcd traced (etcdbench_target_up 1)", time.Minute, func(f metrics.Families) bool {
		v, ok := value(f, "etcdbench_target_up", mine)
		return ok && v == 1
	})
	attached := time.Since(x.started)
	walSyncs := func(f metrics.Families) float64 {
		v, _ := value(f, "etcdbench_syncs_total", map[string]string{"data_dir": e.DataDir, "file": "wal"})
		return v
	}
	exp0, etcd0 := walSyncs(up), e.WALFsyncs(t)
	const puts = 300
	e.Put(t, puts, 1) // one at a time: each a WAL fdatasync
	etcdDelta := e.WALFsyncs(t) - etcd0
	f := until(fmt.Sprintf("%.0f WAL syncs counted (etcd's own count)", etcdDelta), 30*time.Second, func(f metrics.Families) bool {
		return walSyncs(f)-exp0 >= etcdDelta
	})
	expDelta := walSyncs(f) - exp0
	if expDelta != etcdDelta {
		t.Errorf("the exporter counted %.0f WAL syncs, etcd %.0f", expDelta, etcdDelta)
	}
	if etcdDelta < puts {
		t.Errorf("etcd counted %.0f WAL syncs for %d puts sent one at a time, want at least one each", etcdDelta, puts)
	}

	// The device under the data dir, found from the host's view although
	// podman masks /sys/dev/block.
	var device string
	for _, m := range f["etcdbench_target_info"].GetMetric() {
		if l := labelsOf(m); l["data_dir"] == e.DataDir {
			device = l["device"]
		}
	}
	writes, ok := value(f, "etcdbench_disk_writes_completed_total", mine)
	if device == "" || !ok || writes == 0 {
		t.Errorf("device metrics empty: target_info device %q, etcdbench_disk_writes_completed_total %v (found %v)\n%s", device, writes, ok, p.logs(name))
	}
	var st unix.Stat_t
	if err := unix.Stat(e.DataDir, &st); err == nil {
		if host, err := hostDevice(st.Dev); err == nil && host != device {
			t.Errorf("the exporter names device %q, the host %q", device, host)
		}
	}

	// The liveness probe's GET.
	resp, err := client.Get(url + ps.Containers[0].LivenessProbe.HTTPGet.Path)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("liveness probe: %v %v", resp, err)
	}
	if resp != nil {
		resp.Body.Close()
	}
	t.Logf("exporter under %s: attached in %s; %d puts: etcd counted %.0f WAL fsyncs, the exporter %.0f; device %s (%.0f writes completed)",
		*effectiveSeccomp(ps, ps.Containers[0]).LocalhostProfile, attached.Round(100*time.Millisecond), puts, etcdDelta, expDelta, device, writes)
	x.stop(ps)
}

// runExporterRuntimeDefault runs the DaemonSet's pod under the runtime's
// default seccomp profile instead of the shipped one: bpf() is refused,
// and the exporter must say that seccomp refused it, and what to do.
func runExporterRuntimeDefault(t *testing.T, p *podman, ps corev1.PodSpec) {
	const name = "etcdbench-exporter-runtime-default"
	pod, err := podArgs(ps, mapOptions{Name: name, HostPath: func(p string) string { return p },
		SeccompOverride: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}})
	if err != nil {
		t.Fatal(err)
	}
	p.start(pod)
	code := p.waitExit(name, time.Minute)
	log := p.logs(name)
	if code != 3 || !strings.Contains(log, "seccomp") || !strings.Contains(log, "etcdbench-exporter-seccomp.json") || strings.Contains(log, "MEMLOCK") {
		t.Errorf("exit code %d, want 3 and a line naming seccomp and the shipped profile, not MEMLOCK:\n%s", code, log)
	}
	t.Logf("under RuntimeDefault: exit code %d: %s", code, strings.TrimSpace(log))
}

// hostDevice names the block device numbered dev as the host sees it.
func hostDevice(dev uint64) (string, error) {
	link, err := os.Readlink(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(dev), unix.Minor(dev)))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join("/sys/dev/block", fmt.Sprintf("%d:%d", unix.Major(dev), unix.Minor(dev)), "partition")); err == nil {
		return filepath.Base(filepath.Dir(link)), nil
	}
	if link == "" {
		return "", errors.New("no link")
	}
	return filepath.Base(link), nil
}
