package podman

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestPodArgs maps the shipped pod specs without running them: each field
// becomes the podman option the documentation of podFields says.
func TestPodArgs(t *testing.T) {
	opts := mapOptions{SeccompDir: "/var/lib/kubelet/seccomp", HostPath: func(p string) string { return p }, Name: "x"}
	t.Run("exporter", func(t *testing.T) {
		pod, err := podArgs(loadDaemonSet(t).Spec.Template.Spec, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(pod.Init) != 0 {
			t.Errorf("%d init containers, want none", len(pod.Init))
		}
		line := strings.Join(pod.Main.Args, " ")
		for _, want := range []string{"--pid host", "--user 0:0", "--cap-drop all", "--cap-add CAP_BPF", "--cap-add CAP_PERFMON",
			"--cap-add CAP_SYS_RESOURCE", "--cap-add CAP_SYS_PTRACE", "--read-only --read-only-tmpfs=false",
			"--security-opt no-new-privileges", "--security-opt seccomp=/var/lib/kubelet/seccomp/etcdbench-exporter-seccomp.json",
			"--volume /sys/kernel/tracing:/sys/kernel/tracing:ro", "--network none", "--cpus 0.25", "--memory 134217728",
			"--stop-timeout 15", "etcdbench:0.1.0-dev exporter --listen :9479"} {
			if !strings.Contains(line, want) {
				t.Errorf("podman %s\nlacks %q", line, want)
			}
		}
	})
	t.Run("job", func(t *testing.T) {
		pod, err := podArgs(loadJob(t).Spec.Template.Spec, opts)
		if err != nil {
			t.Fatal(err)
		}
		args := pod.Main.Args
		line := strings.Join(args, " ")
		for _, want := range []string{"--user 0:0", "--cap-drop all", "--read-only --read-only-tmpfs=false", "--security-opt no-new-privileges",
			"--volume /var/lib/etcd-etcdbench:/scratch", "--tmpfs /tmp:rw,nosuid,nodev,size=16777216", "--cpus 2", "--memory 1073741824",
			"etcdbench:0.1.0-dev check --dir /scratch -o json"} {
			if !strings.Contains(line, want) {
				t.Errorf("podman %s\nlacks %q", line, want)
			}
		}
		if slices.Contains(args, "--pid") || strings.Contains(line, "seccomp=") || strings.Contains(line, "--cap-add") {
			t.Errorf("the Job gets the host's pids, a seccomp file or a capability: %s", line)
		}
	})
	// The chart's pod: RuntimeDefault for the pod and its installer, the
	// exporter's own Localhost profile, the installer an init container
	// writing the ConfigMap's profile into the kubelet's seccomp directory.
	t.Run("chart", func(t *testing.T) {
		r := renderChart(t, "")
		seccompDir, dir := t.TempDir(), t.TempDir()
		o := r.nodeOptions(t, seccompDir, nil)
		o.Name, o.SeccompDir, o.Dir = "x", seccompDir, dir
		pod, err := podArgs(r.ds.Spec.Template.Spec, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(pod.Init) != 1 || pod.Init[0].Name != "x-install-seccomp-profile" {
			t.Fatalf("init containers %+v, want x-install-seccomp-profile", pod.Init)
		}
		init := strings.Join(pod.Init[0].Args, " ")
		for _, want := range []string{"--name x-install-seccomp-profile", "--pid host", "--user 0:0", "--cap-drop all", "--read-only",
			"--volume " + dir + "/configmap-etcdbench-seccomp-profile:/profile:ro", "--volume " + seccompDir + ":/host-seccomp",
			`--entrypoint ["sh","-c","set -e\ndst=/host-seccomp/etcdbench-exporter-seccomp.json`, "--cpus 0.1", "busybox:1.37"} {
			if !strings.Contains(init, want) {
				t.Errorf("init: podman %s\nlacks %q", init, want)
			}
		}
		if strings.Contains(init, "seccomp=") || strings.Contains(init, "--cap-add") {
			t.Errorf("the installer gets a seccomp file or a capability: %s", init)
		}
		main := strings.Join(pod.Main.Args, " ")
		for _, want := range []string{"--name x", "--pid host", "--cap-add CAP_BPF", "--security-opt seccomp=" + seccompDir + "/etcdbench-exporter-seccomp.json",
			"--volume /sys/kernel/tracing:/sys/kernel/tracing:ro", "etcdbench:0.1.0-dev exporter --listen :9479"} {
			if !strings.Contains(main, want) {
				t.Errorf("main: podman %s\nlacks %q", main, want)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, "configmap-etcdbench-seccomp-profile", "profile.json"))
		if err != nil || string(b) != r.configMaps["etcdbench-seccomp-profile"]["profile.json"] {
			t.Errorf("the ConfigMap's profile.json is not written as the volume's file (%v)", err)
		}
	})
	// With capacity on: the Job and the exporter in the node's network and
	// UTS namespaces (the node's hostname in the result and in the
	// exporter that compares it), each other pod in one of its own.
	t.Run("chart with capacity", func(t *testing.T) {
		r := renderChart(t, "capacity: {enabled: true, when: empty-scratch, nodes: [cp-1]}\n")
		if len(r.jobs) != 1 {
			t.Fatalf("%d Jobs, want the capacity Job of cp-1", len(r.jobs))
		}
		seccompDir := t.TempDir()
		o := r.nodeOptions(t, seccompDir, map[string]string{"/var/lib/etcdbench": "/r", "/var/lib/etcd-etcdbench": "/s"})
		o.Name, o.SeccompDir, o.Dir = "x", seccompDir, t.TempDir()
		job, err := podArgs(r.jobs[0].Spec.Template.Spec, o)
		if err != nil {
			t.Fatal(err)
		}
		exporter, err := podArgs(r.ds.Spec.Template.Spec, o)
		if err != nil {
			t.Fatal(err)
		}
		for name, args := range map[string][]string{"job": job.Main.Args, "exporter": exporter.Main.Args} {
			line := strings.Join(args, " ")
			if !strings.Contains(line, "--network host --uts host") || strings.Contains(line, "--network none") {
				t.Errorf("%s: podman %s\nwant --network host --uts host", name, line)
			}
		}
		for _, want := range []string{"--volume /s:/scratch", "--volume /r:/results", "etcdbench:0.1.0-dev capacity --dir /scratch --json /results/capacity.json -o json"} {
			if line := strings.Join(job.Main.Args, " "); !strings.Contains(line, want) {
				t.Errorf("job: podman %s\nlacks %q", line, want)
			}
		}
		if line := strings.Join(exporter.Main.Args, " "); !strings.Contains(line, "--volume /r:/etc/etcdbench/capacity:ro") || !strings.Contains(line, "--capacity /etc/etcdbench/capacity/capacity.json") {
			t.Errorf("exporter: podman %s\nwant the results directory read-only and --capacity", line)
		}
		if init := strings.Join(exporter.Init[0].Args, " "); !strings.Contains(init, "--network host --uts host") {
			t.Errorf("init: podman %s\nwant the pod's namespaces", init)
		}
	})
}

// TestPodArgsContainerSeccomp: a container's own seccompProfile wins over
// the pod's, for each type.
func TestPodArgsContainerSeccomp(t *testing.T) {
	opts := mapOptions{SeccompDir: "/s", HostPath: func(p string) string { return p }, Name: "x"}
	local := "mine.json"
	tests := []struct {
		name    string
		profile corev1.SeccompProfile
		want    string // the seccomp option, "" none
	}{
		{"Localhost", corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: &local}, "seccomp=/s/mine.json"},
		{"RuntimeDefault", corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}, ""},
		{"Unconfined", corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}, "seccomp=unconfined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := *loadDaemonSet(t).Spec.Template.Spec.DeepCopy()
			ps.Containers[0].SecurityContext.SeccompProfile = &tt.profile
			pod, err := podArgs(ps, opts)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			if i := slices.IndexFunc(pod.Main.Args, func(a string) bool { return strings.HasPrefix(a, "seccomp=") }); i >= 0 {
				got = pod.Main.Args[i]
			}
			if got != tt.want {
				t.Errorf("seccomp option %q, want %q (the pod's is Localhost etcdbench-exporter-seccomp.json)", got, tt.want)
			}
		})
	}
}

// TestPodArgsUnknownField: a field the mapping does not know fails it,
// naming the field.
func TestPodArgsUnknownField(t *testing.T) {
	opts := mapOptions{SeccompDir: "/s", HostPath: func(p string) string { return p }, Name: "x"}
	tests := []struct {
		name, field string
		edit        func(*corev1.PodSpec)
	}{
		{"host IPC", "hostIPC", func(ps *corev1.PodSpec) { ps.HostIPC = true }},
		{"working dir", "containers[].workingDir", func(ps *corev1.PodSpec) { ps.Containers[0].WorkingDir = "/w" }},
		{"SELinux", "securityContext.seLinuxOptions.type", func(ps *corev1.PodSpec) {
			ps.SecurityContext.SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t"}
		}},
		{"container SELinux", "containers[].securityContext.seLinuxOptions.type", func(ps *corev1.PodSpec) {
			ps.Containers[0].SecurityContext.SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t"}
		}},
		{"stdin", "containers[].stdin", func(ps *corev1.PodSpec) { ps.Containers[0].Stdin = true }},
		{"init container's working dir", "initContainers[].workingDir", func(ps *corev1.PodSpec) {
			c := *ps.Containers[0].DeepCopy()
			c.WorkingDir = "/w"
			ps.InitContainers = append(ps.InitContainers, c)
		}},
		{"empty configMap volume", "volumes[].configMap", func(ps *corev1.PodSpec) {
			ps.Volumes = append(ps.Volumes, corev1.Volume{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}})
		}},
		{"configMap items", "volumes[].configMap.items[].key", func(ps *corev1.PodSpec) {
			ps.Volumes = append(ps.Volumes, corev1.Volume{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, Items: []corev1.KeyToPath{{Key: "k", Path: "p"}}}}})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := *loadDaemonSet(t).Spec.Template.Spec.DeepCopy()
			tt.edit(&ps)
			_, err := podArgs(ps, opts)
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("err = %v, want one naming %s", err, tt.field)
			}
		})
	}
}
