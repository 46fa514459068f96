package podman

import (
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
		args, err := podArgs(loadDaemonSet(t).Spec.Template.Spec, opts)
		if err != nil {
			t.Fatal(err)
		}
		line := strings.Join(args, " ")
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
		args, err := podArgs(loadJob(t).Spec.Template.Spec, opts)
		if err != nil {
			t.Fatal(err)
		}
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
}

// TestPodArgsUnknownField: a field the mapping does not know fails it,
// naming the field.
func TestPodArgsUnknownField(t *testing.T) {
	opts := mapOptions{SeccompDir: "/s", HostPath: func(p string) string { return p }, Name: "x"}
	tests := []struct {
		name, field string
		edit        func(*corev1.PodSpec)
	}{
		{"host network", "hostNetwork", func(ps *corev1.PodSpec) { ps.HostNetwork = true }},
		{"working dir", "containers[].workingDir", func(ps *corev1.PodSpec) { ps.Containers[0].WorkingDir = "/w" }},
		{"SELinux", "securityContext.seLinuxOptions.type", func(ps *corev1.PodSpec) {
			ps.SecurityContext.SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t"}
		}},
		{"container seccomp", "containers[].securityContext.seccompProfile.type", func(ps *corev1.PodSpec) {
			ps.Containers[0].SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}},
		{"command", "containers[].command[]", func(ps *corev1.PodSpec) { ps.Containers[0].Command = []string{"/bin/sh"} }},
		{"empty configMap volume", "volumes[].configMap", func(ps *corev1.PodSpec) {
			ps.Volumes = append(ps.Volumes, corev1.Volume{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}})
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
