package podman

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// podFields are the pod spec's fields podArgs knows, as JSON paths
// ("[]" for each element of a list), and what each becomes. A field set
// in a manifest and missing here fails the test, so that the mapping
// cannot silently fall behind the manifests. A path also covers what lies
// below it. An init container's fields are a container's
// (initContainers[] reads as containers[]): init containers run first,
// one after the other, each to completion.
var podFields = map[string]string{
	"hostPID":                                                      "--pid host",
	"automountServiceAccountToken":                                 "false only: no token is mounted",
	"enableServiceLinks":                                           "false only: no service variables",
	"terminationGracePeriodSeconds":                                "--stop-timeout",
	"restartPolicy":                                                "Never only (the DaemonSet's Always is the kubelet's): --restart no",
	"priorityClassName":                                            "scheduling, nothing on one machine",
	"nodeSelector":                                                 "scheduling",
	"affinity":                                                     "scheduling",
	"tolerations":                                                  "scheduling",
	"securityContext.runAsUser":                                    "--user UID:GID",
	"securityContext.runAsGroup":                                   "--user UID:GID",
	"securityContext.runAsNonRoot":                                 "checked against runAsUser",
	"securityContext.seccompProfile.type":                          "RuntimeDefault: podman's default; Localhost: --security-opt seccomp=FILE; Unconfined: seccomp=unconfined",
	"securityContext.seccompProfile.localhostProfile":              "FILE relative to the kubelet's seccomp directory",
	"hostNetwork":                                                  "--network host --uts host (the runtimes give it the node's hostname too)",
	"dnsPolicy":                                                    "the pod's DNS; nothing here resolves a name",
	"volumes[].name":                                               "the volume a mount names",
	"volumes[].hostPath.path":                                      "-v PATH:MOUNT",
	"volumes[].hostPath.type":                                      "Directory: must exist; DirectoryOrCreate: made",
	"volumes[].emptyDir":                                           "--tmpfs MOUNT (the kubelet's emptyDir is a directory; a tmpfs of sizeLimit is the closest)",
	"volumes[].configMap.name":                                     "the ConfigMap's data (mapOptions.ConfigMaps) written as files into a directory, mounted read-only, as the kubelet does",
	"containers[].name":                                            "--name",
	"containers[].image":                                           "the image, already built here",
	"containers[].imagePullPolicy":                                 "--pull never: the image is local",
	"containers[].command[]":                                       "--entrypoint [COMMAND...]: the image's entrypoint and its cmd replaced, as the kubelet does",
	"containers[].args[]":                                          "the arguments after the image",
	"containers[].env[].name":                                      "--env NAME=VALUE",
	"containers[].env[].value":                                     "--env NAME=VALUE",
	"containers[].ports[]":                                         "nothing published: the test connects inside the pod's network namespace",
	"containers[].resources.requests":                              "scheduling",
	"containers[].resources.limits.cpu":                            "--cpus",
	"containers[].resources.limits.memory":                         "--memory",
	"containers[].livenessProbe":                                   "the test's GET of the metrics port stands for it",
	"containers[].securityContext.privileged":                      "false only",
	"containers[].securityContext.allowPrivilegeEscalation":        "false: --security-opt no-new-privileges",
	"containers[].securityContext.readOnlyRootFilesystem":          "--read-only --read-only-tmpfs=false (no tmpfs the kubelet would not mount)",
	"containers[].securityContext.capabilities.drop[]":             "--cap-drop",
	"containers[].securityContext.capabilities.add[]":              "--cap-add CAP_NAME",
	"containers[].securityContext.seccompProfile.type":             "the container's own, instead of the pod's: as securityContext.seccompProfile",
	"containers[].securityContext.seccompProfile.localhostProfile": "as securityContext.seccompProfile.localhostProfile",
	"containers[].volumeMounts[].name":                             "the volume mounted",
	"containers[].volumeMounts[].mountPath":                        "MOUNT",
	"containers[].volumeMounts[].readOnly":                         ":ro",
}

// mapOptions are what a node gives a pod that its spec does not say.
type mapOptions struct {
	// SeccompDir is the kubelet's seccomp directory, where a Localhost
	// profile is looked up.
	SeccompDir string
	// HostPath says where a hostPath volume's path is on this machine
	// (itself unless the test keeps it in a temporary directory).
	HostPath func(string) string
	// Name is the container's name.
	Name string
	// ExtraArgs are appended to the container's args.
	ExtraArgs []string
	// SeccompOverride, when set, replaces the main container's seccomp
	// profile (the test's RuntimeDefault case).
	SeccompOverride *corev1.SeccompProfile
	// ConfigMaps are the data of the ConfigMaps a configMap volume names,
	// by name (what the API server would give the kubelet).
	ConfigMaps map[string]map[string]string
	// Dir is where a configMap volume's files are written.
	Dir string
}

// mappedPod is a pod spec mapped onto podman: the init containers' run
// arguments, to be run one after the other to completion, then the main
// container's.
type mappedPod struct {
	Init []mappedContainer
	Main mappedContainer
}

// mappedContainer is one container's podman name and run arguments.
type mappedContainer struct {
	Name string
	Args []string
}

// unknownFields lists the set fields of ps that podFields does not know.
func unknownFields(ps corev1.PodSpec) ([]string, error) {
	b, err := json.Marshal(ps)
	if err != nil {
		return nil, err
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return nil, err
	}
	var unknown []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		if known(path) {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			if len(v) == 0 && path != "" {
				unknown = append(unknown, path)
			}
			for k, c := range v {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, c)
			}
		case []any:
			for _, c := range v {
				walk(path+"[]", c)
			}
		default:
			unknown = append(unknown, path)
		}
	}
	walk("", tree)
	sort.Strings(unknown)
	return slices.Compact(unknown), nil
}

// known says whether path or a path above it is in podFields.
func known(path string) bool {
	if rest, ok := strings.CutPrefix(path, "initContainers"); ok {
		path = "containers" + rest
	}
	for p := path; p != ""; {
		if _, ok := podFields[p]; ok {
			return true
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			return false
		}
		p = p[:i]
	}
	return false
}

// podArgs maps a pod spec with one container, and init containers,
// onto podman run's options, the image and each container's args. The
// main container is named o.Name, an init container o.Name-NAME.
func podArgs(ps corev1.PodSpec, o mapOptions) (mappedPod, error) {
	var m mappedPod
	if u, err := unknownFields(ps); err != nil || len(u) > 0 {
		return m, errors.Join(err, fmt.Errorf("fields the mapping onto podman does not know: %s (add them to podFields with what each becomes)", strings.Join(u, ", ")))
	}
	if len(ps.Containers) != 1 {
		return m, fmt.Errorf("%d containers: the mapping runs one", len(ps.Containers))
	}
	bad := func(format string, a ...any) (mappedPod, error) { return mappedPod{}, fmt.Errorf(format, a...) }
	if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
		return bad("automountServiceAccountToken must be false: no token is mounted here")
	}
	if ps.EnableServiceLinks == nil || *ps.EnableServiceLinks {
		return bad("enableServiceLinks must be false: no service variables are set here")
	}
	if ps.RestartPolicy != "" && ps.RestartPolicy != corev1.RestartPolicyNever {
		return bad("restartPolicy %s: the test runs the pod once", ps.RestartPolicy)
	}
	// What every container of the pod gets.
	pod := []string{"--pull", "never", "--restart", "no"}
	if ps.HostNetwork {
		// containerd and CRI-O leave a hostNetwork pod in the node's UTS
		// namespace too: its hostname is the node's, which a capacity
		// result records and the exporter compares with its own.
		pod = append(pod, "--network", "host", "--uts", "host")
	} else {
		// A pod has its own network namespace with only lo until the CNI
		// adds an interface; nothing reaches it from outside here.
		pod = append(pod, "--network", "none")
	}
	if ps.HostPID {
		pod = append(pod, "--pid", "host")
	}
	sc := ps.SecurityContext
	if sc == nil || sc.RunAsUser == nil {
		return bad("securityContext.runAsUser unset: the image's user would be used, say it in the manifest")
	}
	gid := int64(0)
	if sc.RunAsGroup != nil {
		gid = *sc.RunAsGroup
	}
	if sc.RunAsNonRoot != nil && *sc.RunAsNonRoot && *sc.RunAsUser == 0 {
		return bad("runAsNonRoot with runAsUser 0: the kubelet would refuse the pod")
	}
	pod = append(pod, "--user", fmt.Sprintf("%d:%d", *sc.RunAsUser, gid))
	for _, c := range ps.InitContainers {
		args, err := containerArgs(ps, c, sc.SeccompProfile, o)
		if err != nil {
			return bad("init container %s: %v", c.Name, err)
		}
		name := o.Name + "-" + c.Name
		m.Init = append(m.Init, mappedContainer{Name: name, Args: append(append([]string{"run", "--detach", "--name", name}, pod...), args...)})
	}
	c := ps.Containers[0]
	sp := sc.SeccompProfile
	if o.SeccompOverride != nil {
		sp = o.SeccompOverride
		c = *c.DeepCopy()
		if c.SecurityContext != nil {
			c.SecurityContext.SeccompProfile = nil
		}
	}
	args, err := containerArgs(ps, c, sp, o)
	if err != nil {
		return bad("container %s: %v", c.Name, err)
	}
	main := append([]string{"run", "--detach", "--name", o.Name}, pod...)
	if g := ps.TerminationGracePeriodSeconds; g != nil {
		main = append(main, "--stop-timeout", strconv.FormatInt(*g, 10))
	}
	m.Main = mappedContainer{Name: o.Name, Args: append(main, args...)}
	return m, nil
}

// effectiveSeccomp is container c's seccomp profile: its own, else the
// pod's.
func effectiveSeccomp(ps corev1.PodSpec, c corev1.Container) *corev1.SeccompProfile {
	if c.SecurityContext != nil && c.SecurityContext.SeccompProfile != nil {
		return c.SecurityContext.SeccompProfile
	}
	if ps.SecurityContext != nil {
		return ps.SecurityContext.SeccompProfile
	}
	return nil
}

// containerArgs maps container c of pod ps, whose seccomp profile is
// podSeccomp unless c names its own, onto podman run's options, the image
// and the args.
func containerArgs(ps corev1.PodSpec, c corev1.Container, podSeccomp *corev1.SeccompProfile, o mapOptions) ([]string, error) {
	var args []string
	bad := func(format string, a ...any) ([]string, error) { return nil, fmt.Errorf(format, a...) }
	f := func(b *bool) bool { return b != nil && *b }
	sp := podSeccomp
	if c.SecurityContext != nil && c.SecurityContext.SeccompProfile != nil {
		sp = c.SecurityContext.SeccompProfile
	}
	switch {
	case sp == nil:
		return bad("no seccompProfile: the kubelet's default is Unconfined, say which in the manifest")
	case sp.Type == corev1.SeccompProfileTypeRuntimeDefault:
		// podman applies its default profile (containers/common's).
	case sp.Type == corev1.SeccompProfileTypeUnconfined:
		args = append(args, "--security-opt", "seccomp=unconfined")
	case sp.Type == corev1.SeccompProfileTypeLocalhost && sp.LocalhostProfile != nil:
		args = append(args, "--security-opt", "seccomp="+filepath.Join(o.SeccompDir, *sp.LocalhostProfile))
	default:
		return bad("seccompProfile %+v", sp)
	}

	csc := c.SecurityContext
	if csc == nil || csc.Capabilities == nil {
		return bad("no securityContext with capabilities")
	}
	if f(csc.Privileged) {
		return bad("privileged: the test runs no privileged container")
	}
	if csc.AllowPrivilegeEscalation != nil && !*csc.AllowPrivilegeEscalation {
		args = append(args, "--security-opt", "no-new-privileges")
	}
	if f(csc.ReadOnlyRootFilesystem) {
		args = append(args, "--read-only", "--read-only-tmpfs=false")
	}
	for _, d := range csc.Capabilities.Drop {
		args = append(args, "--cap-drop", strings.ToLower(string(d)))
	}
	for _, a := range csc.Capabilities.Add {
		args = append(args, "--cap-add", "CAP_"+string(a))
	}
	if cpu, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		args = append(args, "--cpus", strconv.FormatFloat(float64(cpu.MilliValue())/1000, 'f', -1, 64))
	}
	if mem, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
		args = append(args, "--memory", strconv.FormatInt(mem.Value(), 10))
	}
	for _, e := range c.Env {
		args = append(args, "--env", e.Name+"="+e.Value)
	}
	for _, m := range c.VolumeMounts {
		i := slices.IndexFunc(ps.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 {
			return bad("volumeMount %s: no such volume", m.Name)
		}
		v := ps.Volumes[i]
		switch {
		case v.HostPath != nil:
			src := o.HostPath(v.HostPath.Path)
			if err := hostPathReady(src, v.HostPath.Type); err != nil {
				return bad("volume %s: %v", v.Name, err)
			}
			opt := src + ":" + m.MountPath
			if m.ReadOnly {
				opt += ":ro"
			}
			args = append(args, "--volume", opt)
		case v.EmptyDir != nil:
			opt := m.MountPath + ":rw,nosuid,nodev"
			if v.EmptyDir.SizeLimit != nil {
				opt += ",size=" + strconv.FormatInt(v.EmptyDir.SizeLimit.Value(), 10)
			}
			args = append(args, "--tmpfs", opt)
		case v.ConfigMap != nil:
			dir, err := configMapDir(v.ConfigMap.Name, o)
			if err != nil {
				return bad("volume %s: %v", v.Name, err)
			}
			// The kubelet mounts a configMap volume read-only whatever
			// the mount says.
			args = append(args, "--volume", dir+":"+m.MountPath+":ro")
		default:
			return bad("volume %s: only hostPath, emptyDir and configMap are mapped", v.Name)
		}
	}
	if len(c.Command) > 0 {
		b, err := json.Marshal(c.Command)
		if err != nil {
			return nil, err
		}
		args = append(args, "--entrypoint", string(b))
	}
	args = append(args, c.Image)
	args = append(args, c.Args...)
	return append(args, o.ExtraArgs...), nil
}

// configMapDir writes ConfigMap name's data, one file per key (mode
// 0644, the kubelet's default), into a directory of its own under o.Dir.
func configMapDir(name string, o mapOptions) (string, error) {
	data, ok := o.ConfigMaps[name]
	if !ok {
		return "", fmt.Errorf("ConfigMap %s: not given to the mapping", name)
	}
	if o.Dir == "" {
		return "", errors.New("no directory for the ConfigMap's files")
	}
	dir := filepath.Join(o.Dir, "configmap-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for k, v := range data {
		if strings.ContainsAny(k, "/") || k == "." || k == ".." {
			return "", fmt.Errorf("ConfigMap %s: key %q", name, k)
		}
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}
