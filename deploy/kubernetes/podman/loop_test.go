package podman

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"golang.org/x/sys/unix"

	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/exporter/headroom"
	"etcdbench/internal/testutil"
	"etcdbench/internal/testutil/hostetcd"
)

// loopCapacityArgs keep the chart's capacity Job short in the test
// (capacity.extraArgs): one rung at 1,000 writes/s, at most 5 s for the
// disk's step and 1 s for the etcd side's. On a memory filesystem the
// disk side passes whatever the machine's load, and the estimate is
// capped at 1,000 puts/s: the test is about the loop, not the figure.
var loopCapacityArgs = []string{"--quick", "--start", "1000", "--max-rate", "1000", "--step-runtime", "5s", "--cpu-step", "1s"}

// loopDrive is how long the test drives puts at the member: the longer
// next to the exporter's start-up, the narrower the band its rate is
// held to.
const loopDrive = 8 * time.Second

// runLoop runs the headroom loop with the Helm chart's rendered pods:
// the capacity Job (capacity.enabled) measures a scratch directory on
// the filesystem of a real etcd's data dir and saves its result in the
// results hostPath; the chart's exporter, reading that directory with
// --capacity, must serve the member's estimate and, while the test
// drives puts at the member, its put rate and ratio, consistent with
// the puts made and with the estimate in the Job's JSON. A copy of the
// result naming another machine is refused. Both pods are in the node's
// network namespace (hostNetwork, the chart's), so their hostname is the
// node's: the result's identity check holds inside a container.
func runLoop(t *testing.T, p *podman, image string) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	mem := testutil.MemDir(t, "etcdbench-loop-")
	results := t.TempDir()
	port := hostetcd.FreePort(t)
	dataDir := filepath.Join(mem, "etcd")
	values := fmt.Sprintf(`capacity: {enabled: true, when: empty-scratch, nodes: [%q], extraArgs: %s}
exporter:
  port: %d
  extraArgs: [--interval, 1s, --data-dir, %q, --capacity, /etc/etcdbench/capacity/other-machine.json]
`, host, flowList(loopCapacityArgs), port, dataDir)
	r := renderChart(t, values)
	if len(r.jobs) != 1 {
		t.Fatalf("%d Jobs rendered with capacity on one node, want 1", len(r.jobs))
	}
	job := r.jobs[0].Spec.Template.Spec
	ds := r.ds.Spec.Template.Spec
	if !job.HostNetwork || !ds.HostNetwork {
		t.Fatalf("hostNetwork: the capacity Job %v, the exporter %v; the loop needs both in the node's namespaces", job.HostNetwork, ds.HostNetwork)
	}
	scratchPath, resultsPath, readPath := hostPathNamed(t, job, "scratch"), hostPathNamed(t, job, "results"), hostPathNamed(t, ds, "capacity")
	if readPath != resultsPath {
		t.Fatalf("the Job saves its result in hostPath %s, the exporter reads %s", resultsPath, readPath)
	}
	for _, img := range chartImages(t, ds, image) {
		if _, err := p.run(context.Background(), "image", "exists", img); err != nil {
			p.buildShellImage(img)
		}
	}

	// Measure: the Job's pod on a scratch directory on the memory
	// filesystem that will hold etcd's data dir.
	scratch := filepath.Join(mem, "etcd-etcdbench")
	pod, err := podArgs(job, mapOptions{Name: "etcdbench-capacity", HostPath: func(p string) string {
		switch p {
		case scratchPath:
			return scratch
		case resultsPath:
			return results
		}
		t.Errorf("the capacity Job has hostPath %s, which the test does not map", p)
		return filepath.Join(t.TempDir(), p)
	}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p.start(pod)
	code := p.waitExit("etcdbench-capacity", 3*time.Minute)
	if code != 0 && code != 1 {
		t.Fatalf("capacity Job: exit code %d, want 0 or 1 (a verdict)\n%s", code, p.logs("etcdbench-capacity"))
	}
	measured := time.Since(start)
	capFile := filepath.Join(results, "capacity.json")
	b, err := os.ReadFile(capFile)
	if err != nil {
		t.Fatalf("the Job saved no result in the results hostPath: %v\n%s", err, p.logs("etcdbench-capacity"))
	}
	est, err := headroom.Parse(b)
	if err != nil {
		t.Fatalf("the Job's result: %v", err)
	}
	if left, _ := os.ReadDir(scratch); len(left) > 0 {
		t.Errorf("the scratch hostPath holds %d entries after the Job, want none", len(left))
	}
	if est.Hostname != host {
		t.Errorf("the Job's result names machine %q, this node is %q: the exporter would refuse it", est.Hostname, host)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(dataDir, &st); err != nil {
		t.Fatal(err)
	}
	if fs := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev)); est.Filesystem != fs {
		t.Fatalf("the Job measured filesystem %q, etcd's data dir is on %s", est.Filesystem, fs)
	}
	writeOtherMachine(t, b, filepath.Join(results, "other-machine.json"), "elsewhere-"+host)

	// Watch: a real etcd on that filesystem, the chart's exporter.
	e := hostetcd.Start(t, "loop", dataDir)
	x := startExporter(t, p, ds, func(seccompDir string) mapOptions {
		o := r.nodeOptions(t, seccompDir, map[string]string{readPath: results})
		o.Name = "etcdbench-loop-exporter"
		return o
	})
	mine := map[string]string{"data_dir": e.DataDir}
	f := x.until("the member's ratio", time.Minute, func(f metrics.Families) bool {
		_, ok := value(f, "etcdbench_capacity_used_ratio", mine)
		return ok
	})
	if v, _ := value(f, "etcdbench_capacity_puts_per_second", mine); v != est.PutsPerSecond {
		t.Errorf("etcdbench_capacity_puts_per_second %v, the Job's JSON says %v", v, est.PutsPerSecond)
	}
	if v, _ := value(f, "etcdbench_capacity_used_ratio", mine); v != 0 {
		t.Errorf("etcdbench_capacity_used_ratio %v before any put, want 0", v)
	}
	for file, want := range map[string]float64{"/etc/etcdbench/capacity/capacity.json": 1, "/etc/etcdbench/capacity/other-machine.json": 0} {
		if v, ok := value(f, "etcdbench_capacity_file_ok", map[string]string{"file": file}); !ok || v != want {
			t.Errorf("etcdbench_capacity_file_ok{file=%q} %v (served %v), want %v", file, v, ok, want)
		}
	}
	if n := strings.Count(x.p.logs(x.name), "another machine"); n != 1 {
		t.Errorf("%d log lines say a file is another machine's, want 1\n%s", n, x.p.logs(x.name))
	}

	// Drive puts at half the estimate. Every sample of the put count the
	// exporter takes is before the drive (it served a ratio: two samples)
	// or after it, or during it; once one is after, its rate is the n
	// puts over the time between its first sample, after the pod was
	// started, and its last, before the scrape that read it: at least n
	// over that time, at most n over the drive's. The last sample's time
	// is its scan's start, which can precede its read of etcd's count by
	// the scan's own time: up to a second (its --interval) is allowed.
	t0 := time.Now()
	n := drive(t, e, est.PutsPerSecond/2, loopDrive)
	t1 := time.Now()
	hi := float64(n) / (t1.Sub(t0) - time.Second).Seconds()
	var rate, ratio, lo float64
	var ok bool
	if !testutil.Poll(20*time.Second, func() bool {
		f := x.scrape()
		lo = float64(n) / time.Since(x.started).Seconds()
		var okRate, okRatio bool
		rate, okRate = value(f, "etcdbench_capacity_member_puts_per_second", mine)
		ratio, okRatio = value(f, "etcdbench_capacity_used_ratio", mine)
		ok = okRate && okRatio
		return ok && rate >= lo && rate <= hi
	}) {
		t.Fatalf("the exporter's put rate %.1f/s (served %v), want the %d puts made: %.1f..%.1f/s\n%s", rate, ok, n, lo, hi, x.p.logs(x.name))
	}
	if math.Abs(ratio-rate/est.PutsPerSecond) > 1e-9*ratio {
		t.Errorf("ratio %v, want the rate %v over the JSON's estimate %v", ratio, rate, est.PutsPerSecond)
	}
	t.Logf("capacity Job: %.0f puts/s (%s) on filesystem %s of machine %s, in %s (exit code %d); exporter: %d puts at %.0f/s driven: rate %.1f/s (%.1f..%.1f), ratio %.3f",
		est.PutsPerSecond, map[bool]string{true: "the disk sweep's", false: "capacity's estimate"}[est.FromDiskSweep], est.Filesystem, est.Hostname,
		measured.Round(100*time.Millisecond), code, n, float64(n)/t1.Sub(t0).Seconds(), rate, lo, hi, ratio)
	x.stop(ds)
}

// flowList is a YAML flow sequence of strings.
func flowList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// hostPathNamed is the hostPath of ps's volume name.
func hostPathNamed(t *testing.T, ps corev1.PodSpec, name string) string {
	t.Helper()
	for _, v := range ps.Volumes {
		if v.Name == name && v.HostPath != nil {
			return v.HostPath.Path
		}
	}
	t.Fatalf("no hostPath volume %s", name)
	return ""
}

// writeOtherMachine saves result (a capacity result's JSON) as path,
// its environment.hostname made hostname: another machine's result.
func writeOtherMachine(t *testing.T, result []byte, path, hostname string) {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatal(err)
	}
	env, ok := r["environment"].(map[string]any)
	if !ok {
		t.Fatal("the result has no environment")
	}
	env["hostname"] = hostname
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// drive puts new keys into e at rate per second for d, from 4 clients
// on one connection, each put sent when its turn on the schedule comes
// (as soon as it can when behind), and returns how many were made.
func drive(t *testing.T, e *hostetcd.Etcd, rate float64, d time.Duration) int {
	t.Helper()
	cli := e.Client(t)
	defer cli.Close()
	val := strings.Repeat("v", 256)
	start := time.Now()
	var next, made atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
				if due.Sub(start) >= d {
					return
				}
				time.Sleep(time.Until(due))
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err := cli.Put(ctx, fmt.Sprintf("/loop/%d", i), val)
				cancel()
				if err != nil {
					errs <- err
					return
				}
				made.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatalf("put: %v", err)
	}
	return int(made.Load())
}
