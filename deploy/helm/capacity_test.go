package helm

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestCapacityJobs: with capacity on, one Job per node measures the etcd
// volume's filesystem (the scratch hostPath) and saves its result with
// --json in the results hostPath, as test hooks after the check's, in
// the node's network namespace; the exporter mounts that directory
// read-only, reads the file with --capacity and runs in the node's
// network namespace too. With capacity off, none of it.
func TestCapacityJobs(t *testing.T) {
	r := render(t, "check: {enabled: true, nodes: [cp-1, cp-2]}\ncapacity: {enabled: true, when: maintenance-window, nodes: [cp-1, cp-2], resultsHostPath: /srv/etcdbench}\n")
	var capJobs int
	for _, j := range r.jobs {
		if j.Labels["app.kubernetes.io/component"] != "capacity" {
			continue
		}
		w := j.Annotations["helm.sh/hook-weight"]
		if r.hooks[j.Name] != "test" || (w != "2" && w != "3") {
			t.Errorf("capacity Job %s: hook %q weight %q, want a test hook after the 2 check Jobs", j.Name, r.hooks[j.Name], w)
		}
		ps := j.Spec.Template.Spec
		if !ps.HostNetwork {
			t.Errorf("capacity Job %s: not in the node's network namespace (its result's hostname would be the pod's)", j.Name)
		}
		args := strings.Join(ps.Containers[0].Args, " ")
		if !strings.HasPrefix(args, "capacity --dir /scratch --json /results/capacity.json") {
			t.Errorf("capacity Job %s: args %q", j.Name, args)
		}
		if hostPathOf(ps, "results") != "/srv/etcdbench" || hostPathOf(ps, "scratch") != "/var/lib/etcd-etcdbench" {
			t.Errorf("capacity Job %s: results %q, scratch %q", j.Name, hostPathOf(ps, "results"), hostPathOf(ps, "scratch"))
		}
		capJobs++
	}
	if capJobs != 2 {
		t.Errorf("%d capacity Jobs, want one per node (2)", capJobs)
	}
	ds, c := r.exporterDaemonSet(t)
	ps := ds.Spec.Template.Spec
	if !ps.HostNetwork || ps.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		t.Errorf("exporter: hostNetwork %v, dnsPolicy %s; want the node's network namespace", ps.HostNetwork, ps.DNSPolicy)
	}
	if i := slices.Index(c.Args, "--capacity"); i < 0 || c.Args[i+1] != "/etc/etcdbench/capacity/capacity.json" {
		t.Errorf("exporter args %q: want --capacity /etc/etcdbench/capacity/capacity.json", c.Args)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		mounted = mounted || (m.Name == "capacity" && m.MountPath == "/etc/etcdbench/capacity" && m.ReadOnly)
	}
	if !mounted || hostPathOf(ps, "capacity") != "/srv/etcdbench" {
		t.Errorf("exporter: the results directory is not mounted read-only from /srv/etcdbench: %+v", c.VolumeMounts)
	}

	off := render(t, "")
	ds, c = off.exporterDaemonSet(t)
	if ds.Spec.Template.Spec.HostNetwork || slices.Contains(c.Args, "--capacity") || len(off.jobs) != 0 {
		t.Errorf("capacity off: hostNetwork %v, args %q, %d Jobs", ds.Spec.Template.Spec.HostNetwork, c.Args, len(off.jobs))
	}
}

// hostPathOf is the hostPath of ps's volume name ("" when none).
func hostPathOf(ps corev1.PodSpec, name string) string {
	for _, v := range ps.Volumes {
		if v.Name == name && v.HostPath != nil {
			return fmt.Sprint(v.HostPath.Path)
		}
	}
	return ""
}
