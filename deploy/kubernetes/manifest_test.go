package kubernetes

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"etcdbench/internal/result"
)

// Facts of the deployment that docs/kubernetes.md and the Dockerfile state.
const (
	nodePlaceholder = "__NODE__"
	sampleNode      = "cp-1.example.internal"
	etcdDataDir     = "/var/lib/etcd"
	scratchHostPath = "/var/lib/etcd-etcdbench"
	controlPlaneKey = "node-role.kubernetes.io/control-plane"
	nodeAnnotation  = "etcdbench/node"
	imageRepo       = "etcdbench"
	containerName   = "etcdbench"
)

// manifests is what the YAML files of a directory decode to.
type manifests struct {
	jobs       []*batchv1.Job
	namespaces []*corev1.Namespace
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// decodeManifests decodes every YAML document of data strictly (unknown or
// duplicate fields are errors) into the API type its apiVersion and kind name.
func decodeManifests(data []byte, into *manifests) error {
	for i, doc := range docSeparator.Split(string(data), -1) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return fmt.Errorf("document %d: %w", i, err)
		}
		if tm == (metav1.TypeMeta{}) {
			if strings.TrimSpace(stripComments(doc)) != "" {
				return fmt.Errorf("document %d has no apiVersion and kind", i)
			}
			continue // only comments
		}
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "batch/v1 Job":
			j := new(batchv1.Job)
			into.jobs, obj = append(into.jobs, j), j
		case "v1 Namespace":
			ns := new(corev1.Namespace)
			into.namespaces, obj = append(into.namespaces, ns), ns
		default:
			return fmt.Errorf("document %d: %s %s: no test knows this kind; add it to decodeManifests", i, tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			return fmt.Errorf("document %d (%s): %w", i, tm.Kind, err)
		}
	}
	return nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// loadDir decodes every *.yaml file of this directory, with __NODE__
// replaced by node as run.sh and the by-hand sed in job.yaml do.
func loadDir(t *testing.T, node string) manifests {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no *.yaml in deploy/kubernetes (%v)", err)
	}
	var m manifests
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.ReplaceAll(data, []byte(nodePlaceholder), []byte(node))
		if err := decodeManifests(data, &m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return m
}

func TestDecodeIsStrict(t *testing.T) {
	tests := []struct{ name, doc string }{
		{"unknown field", "apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    spec:\n      restartPolcy: Never\n"},
		{"duplicate field", "apiVersion: batch/v1\nkind: Job\nspec:\n  backoffLimit: 0\n  backoffLimit: 1\n"},
		{"wrong type", "apiVersion: batch/v1\nkind: Job\nspec:\n  backoffLimit: none\n"},
		{"bad quantity", "apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    spec:\n      containers:\n      - name: x\n        resources:\n          limits:\n            memory: 1 GB\n"},
		{"unknown kind", "apiVersion: apps/v1\nkind: DaemonSet\n"},
		{"no kind", "metadata:\n  name: x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := decodeManifests([]byte(tt.doc), new(manifests)); err == nil {
				t.Errorf("decoded without an error:\n%s", tt.doc)
			}
		})
	}
}

func TestManifests(t *testing.T) {
	m := loadDir(t, sampleNode)
	if len(m.jobs) != 1 {
		t.Fatalf("want exactly one Job (the per-node template), got %d", len(m.jobs))
	}
	checkJob(t, m.jobs[0], sampleNode, "etcdbench:"+result.Version)
	checkNamespace(t, m, m.jobs[0].Namespace)
}

// checkNamespace checks that the Job's namespace is among the manifests and
// admits its hostPath volume.
func checkNamespace(t *testing.T, m manifests, name string) {
	t.Helper()
	i := slices.IndexFunc(m.namespaces, func(ns *corev1.Namespace) bool { return ns.Name == name })
	if i < 0 {
		t.Fatalf("the Job's namespace %q is not in the manifests", name)
	}
	// Pod Security Admission allows hostPath volumes only at "privileged".
	if got := m.namespaces[i].Labels["pod-security.kubernetes.io/enforce"]; got != "privileged" {
		t.Errorf("namespace %s: pod-security.kubernetes.io/enforce = %q, want privileged (hostPath volumes are refused at baseline and restricted)", name, got)
	}
}

// checkJob runs every check of jobChecks on job, made for node and image.
func checkJob(t *testing.T, job *batchv1.Job, node, image string) {
	t.Helper()
	if len(job.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(job.Spec.Template.Spec.Containers))
	}
	for _, c := range jobChecks(node, image) {
		t.Run(c.name, func(t *testing.T) {
			for _, err := range c.check(job) {
				t.Error(err)
			}
		})
	}
}

// jobCheck is one property the Job must have, named for the test output.
type jobCheck struct {
	name  string
	check func(*batchv1.Job) []error
}

func jobChecks(node, image string) []jobCheck {
	return []jobCheck{
		{"names and labels are valid", checkNames(node)},
		{"only a control-plane node, this one", checkPlacement(node)},
		{"one pod, never retried", checkOnePod},
		{"bounded in time and cleaned up", checkLifetime},
		{"scratch hostPath beside the data-dir", checkScratch},
		{"result JSON in the log", checkArgs},
		{"least privilege", checkSecurity},
		{"resources", checkResources},
		{"the Dockerfile's image", checkImage(image)},
	}
}

func errs(conds ...any) []error {
	// conds alternate: a bool that must hold, the message when it does not.
	var out []error
	for i := 0; i+1 < len(conds); i += 2 {
		if !conds[i].(bool) {
			out = append(out, fmt.Errorf("%s", conds[i+1]))
		}
	}
	return out
}

func checkNames(node string) func(*batchv1.Job) []error {
	return func(j *batchv1.Job) []error {
		var out []error
		// The job-name label of the pods takes the Job's name: a DNS label,
		// generateName's prefix plus 5 random characters.
		if j.Name != "" || j.GenerateName == "" {
			out = append(out, fmt.Errorf("want generateName (one Job per run and node), got name %q, generateName %q", j.Name, j.GenerateName))
		}
		for _, msg := range content.IsDNS1123Label(j.GenerateName + "abcde") {
			out = append(out, fmt.Errorf("generateName %q: %s", j.GenerateName, msg))
		}
		for _, msg := range content.IsDNS1123Subdomain(node) {
			out = append(out, fmt.Errorf("node %q: %s", node, msg))
		}
		for _, meta := range []metav1.ObjectMeta{j.ObjectMeta, j.Spec.Template.ObjectMeta} {
			for k, v := range meta.Labels {
				for _, msg := range append(content.IsLabelKey(k), content.IsLabelValue(v)...) {
					out = append(out, fmt.Errorf("label %s=%s: %s", k, v, msg))
				}
			}
			if got := meta.Annotations[nodeAnnotation]; got != node {
				out = append(out, fmt.Errorf("annotation %s = %q, want the node %q", nodeAnnotation, got, node))
			}
		}
		if j.Namespace == "" {
			out = append(out, fmt.Errorf("no namespace: the Job would land in whatever namespace kubectl points at"))
		}
		return out
	}
}

func checkPlacement(node string) func(*batchv1.Job) []error {
	return func(j *batchv1.Job) []error {
		ps := j.Spec.Template.Spec
		var out []error
		if ps.NodeName != "" {
			out = append(out, fmt.Errorf("nodeName %q bypasses the scheduler and the taint checks; pin the node with affinity", ps.NodeName))
		}
		var terms []corev1.NodeSelectorTerm
		if a := ps.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			terms = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		}
		if len(terms) == 0 {
			return append(out, fmt.Errorf("no required node affinity"))
		}
		// Terms are ORed: every one must ask for a control-plane node and
		// for this node by name.
		for i, term := range terms {
			cp := slices.ContainsFunc(term.MatchExpressions, func(r corev1.NodeSelectorRequirement) bool {
				return r.Key == controlPlaneKey && r.Operator == corev1.NodeSelectorOpExists
			})
			named := slices.ContainsFunc(term.MatchFields, func(r corev1.NodeSelectorRequirement) bool {
				return r.Key == "metadata.name" && r.Operator == corev1.NodeSelectorOpIn && slices.Equal(r.Values, []string{node})
			})
			out = append(out, errs(
				cp, fmt.Sprintf("node selector term %d does not require the label %s", i, controlPlaneKey),
				named, fmt.Sprintf("node selector term %d does not pin metadata.name to %q alone", i, node),
			)...)
		}
		tolerates := slices.ContainsFunc(ps.Tolerations, func(tol corev1.Toleration) bool {
			return tol.Key == controlPlaneKey && tol.Operator == corev1.TolerationOpExists && tol.Effect == corev1.TaintEffectNoSchedule
		})
		out = append(out, errs(tolerates, "no toleration of the control-plane taint "+controlPlaneKey+":NoSchedule")...)
		for _, tol := range ps.Tolerations {
			if tol.Key == "" || tol.Effect == corev1.TaintEffectNoExecute {
				out = append(out, fmt.Errorf("toleration %+v is broader than the control-plane taints", tol))
			}
		}
		return out
	}
}

func checkOnePod(j *batchv1.Job) []error {
	s := j.Spec
	is := func(p *int32, want int32) bool { return p != nil && *p == want }
	return errs(
		is(s.Completions, 1), "completions must be 1",
		is(s.Parallelism, 1), "parallelism must be 1",
		is(s.BackoffLimit, 0), "backoffLimit must be 0: a retry would load the disk again",
		s.Template.Spec.RestartPolicy == corev1.RestartPolicyNever, "restartPolicy must be Never",
		s.CompletionMode == nil || *s.CompletionMode == batchv1.NonIndexedCompletion, "one Job per node, not an indexed Job",
	)
}

func checkLifetime(j *batchv1.Job) []error {
	s := j.Spec
	// The default check takes about a minute; the deadline must leave room
	// for it and for pulling the image, and bound a pod that cannot start.
	return errs(
		s.ActiveDeadlineSeconds != nil && *s.ActiveDeadlineSeconds >= 180 && *s.ActiveDeadlineSeconds <= 1800, "activeDeadlineSeconds must be set, 180-1800",
		s.TTLSecondsAfterFinished != nil && *s.TTLSecondsAfterFinished >= 600, "ttlSecondsAfterFinished must be set, and leave time (>= 600 s) to read the log",
		s.Template.Spec.TerminationGracePeriodSeconds == nil || *s.Template.Spec.TerminationGracePeriodSeconds >= 10, "terminationGracePeriodSeconds must leave etcdbench time to remove its scratch directory",
	)
}

// flagValue returns the value of --name or -short in args, in any of the
// forms pflag accepts ("--name v", "--name=v", "-s v", "-s=v", "-sv").
func flagValue(args []string, name, short string) (string, bool) {
	for i, a := range args {
		for _, f := range []string{"--" + name, "-" + short} {
			switch {
			case a == f && i+1 < len(args):
				return args[i+1], true
			case strings.HasPrefix(a, f+"="):
				return strings.TrimPrefix(a, f+"="), true
			case f == "-"+short && strings.HasPrefix(a, f) && !strings.HasPrefix(a, "--") && len(a) > len(f):
				return a[len(f):], true
			}
		}
	}
	return "", false
}

func checkScratch(j *batchv1.Job) []error {
	ps := j.Spec.Template.Spec
	c := ps.Containers[0]
	dir, ok := flagValue(c.Args, "dir", "")
	if !ok {
		return []error{fmt.Errorf("args %q have no --dir", c.Args)}
	}
	var out []error
	var hostPaths []corev1.Volume
	for _, v := range ps.Volumes {
		if v.HostPath != nil {
			hostPaths = append(hostPaths, v)
		}
	}
	if len(hostPaths) != 1 {
		return append(out, fmt.Errorf("want exactly one hostPath volume (the scratch directory), got %d", len(hostPaths)))
	}
	v := hostPaths[0]
	hp := v.HostPath
	rel, err := filepath.Rel(etcdDataDir, hp.Path)
	inside := err == nil && !strings.HasPrefix(rel, "..")
	out = append(out, errs(
		hp.Path == scratchHostPath, fmt.Sprintf("hostPath %q, want %q (docs/kubernetes.md)", hp.Path, scratchHostPath),
		filepath.Dir(hp.Path) == filepath.Dir(etcdDataDir) && !inside, fmt.Sprintf("hostPath %q must be a sibling of %s, outside it", hp.Path, etcdDataDir),
		hp.Type != nil && *hp.Type == corev1.HostPathDirectoryOrCreate, "hostPath type must be DirectoryOrCreate",
	)...)
	mounted := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == v.Name && m.MountPath == dir && !m.ReadOnly && m.SubPath == ""
	})
	out = append(out, errs(mounted, fmt.Sprintf("volume %s is not mounted read-write at --dir %s", v.Name, dir))...)
	// The root filesystem is read-only; the scratch mount must be the only
	// place on the host the container can write.
	for _, m := range c.VolumeMounts {
		if i := slices.IndexFunc(ps.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name }); i < 0 {
			out = append(out, fmt.Errorf("volumeMount %s has no volume", m.Name))
		} else if w := ps.Volumes[i]; w.HostPath == nil && w.EmptyDir == nil {
			out = append(out, fmt.Errorf("volume %s: only the scratch hostPath and emptyDirs are expected", w.Name))
		}
	}
	return out
}

func checkArgs(j *batchv1.Job) []error {
	c := j.Spec.Template.Spec.Containers[0]
	out, _ := flagValue(c.Args, "output", "o")
	return errs(
		len(c.Command) == 0, "command overrides the image's ENTRYPOINT /etcdbench",
		len(c.Args) > 0 && c.Args[0] == "check", fmt.Sprintf("args %q must start with the check command", c.Args),
		out == "json", fmt.Sprintf("args %q: want -o json, the result record in the pod's log", c.Args),
		!c.TTY && !c.Stdin, "tty and stdin must be off: the log must be the plain result",
	)
}

func checkSecurity(j *batchv1.Job) []error {
	ps := j.Spec.Template.Spec
	c := ps.Containers[0]
	sc := c.SecurityContext
	if sc == nil || ps.SecurityContext == nil {
		return []error{fmt.Errorf("pod and container securityContext must be set")}
	}
	psc := ps.SecurityContext
	f := func(b *bool) bool { return b != nil && *b }
	dropsAll := sc.Capabilities != nil && slices.Contains(sc.Capabilities.Drop, "ALL") && len(sc.Capabilities.Add) == 0
	uid := sc.RunAsUser
	if uid == nil {
		uid = psc.RunAsUser
	}
	nonRoot := f(sc.RunAsNonRoot) || f(psc.RunAsNonRoot)
	return errs(
		sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation, "allowPrivilegeEscalation must be false",
		f(sc.ReadOnlyRootFilesystem), "readOnlyRootFilesystem must be true",
		!f(sc.Privileged), "must not be privileged",
		dropsAll, "capabilities: drop ALL, add none",
		uid != nil, "runAsUser must be set: the image's user (65532) cannot write to the root-owned hostPath",
		// Root only as the owner of the scratch directory, with no capability.
		uid == nil || *uid != 0 || (dropsAll && !nonRoot), "runAsUser 0 needs every capability dropped and runAsNonRoot unset or false",
		uid == nil || *uid == 0 || nonRoot, "a non-root runAsUser should say runAsNonRoot: true",
		psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault, "seccompProfile must be RuntimeDefault",
		!ps.HostPID && !ps.HostNetwork && !ps.HostIPC, "no host namespaces",
		ps.AutomountServiceAccountToken != nil && !*ps.AutomountServiceAccountToken, "automountServiceAccountToken must be false: etcdbench does not talk to the API server",
	)
}

func checkResources(j *batchv1.Job) []error {
	r := j.Spec.Template.Spec.Containers[0].Resources
	var out []error
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := r.Requests[name]
		lim, okLim := r.Limits[name]
		switch {
		case !okReq || !okLim:
			out = append(out, fmt.Errorf("%s: want both a request and a limit", name))
		case req.Cmp(lim) > 0:
			out = append(out, fmt.Errorf("%s: request %s above limit %s", name, req.String(), lim.String()))
		}
	}
	// The embedded etcd of the check needs room; a tight CPU limit would
	// throttle the timed loops and show up as latency.
	if lim, ok := r.Limits[corev1.ResourceMemory]; ok && lim.Value() < 512<<20 {
		out = append(out, fmt.Errorf("memory limit %s is below 512Mi", lim.String()))
	}
	if lim, ok := r.Limits[corev1.ResourceCPU]; ok && lim.MilliValue() < 1000 {
		out = append(out, fmt.Errorf("cpu limit %s is below one core", lim.String()))
	}
	return out
}

func checkImage(image string) func(*batchv1.Job) []error {
	return func(j *batchv1.Job) []error {
		c := j.Spec.Template.Spec.Containers[0]
		var rules []batchv1.PodFailurePolicyRule
		if j.Spec.PodFailurePolicy != nil {
			rules = j.Spec.PodFailurePolicy.Rules
		}
		for _, r := range rules {
			if r.OnExitCodes != nil && r.OnExitCodes.ContainerName != nil && *r.OnExitCodes.ContainerName != c.Name {
				return []error{fmt.Errorf("podFailurePolicy names container %q, not %q", *r.OnExitCodes.ContainerName, c.Name)}
			}
		}
		return errs(
			c.Name == containerName, fmt.Sprintf("container %q, want %q", c.Name, containerName),
			c.Image == image, fmt.Sprintf("image %q, want %q", c.Image, image),
		)
	}
}
