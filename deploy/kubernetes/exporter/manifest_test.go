package exporter

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor
// (monitoring.coreos.com/v1) that exporter.yaml uses; decoding it
// strictly rejects a misspelt field.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port        string `json:"port"`
			Path        string `json:"path"`
			Interval    string `json:"interval"`
			Relabelings []struct {
				SourceLabels []string `json:"sourceLabels"`
				TargetLabel  string   `json:"targetLabel"`
			} `json:"relabelings"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// The exporter's port, documented in docs/exporter.md and the default of
// --listen.
const metricsPort = 9479

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// load decodes exporter.yaml strictly into its three objects.
func load(t *testing.T) (*appsv1.DaemonSet, *corev1.Service, *serviceMonitor) {
	t.Helper()
	data, err := os.ReadFile("exporter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ds *appsv1.DaemonSet
	var svc *corev1.Service
	var sm *serviceMonitor
	for i, doc := range docSeparator.Split(string(data), -1) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "apps/v1 DaemonSet":
			ds = new(appsv1.DaemonSet)
			obj = ds
		case "v1 Service":
			svc = new(corev1.Service)
			obj = svc
		case "monitoring.coreos.com/v1 ServiceMonitor":
			sm = new(serviceMonitor)
			obj = sm
		default:
			t.Fatalf("document %d: unexpected %s %s", i, tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("document %d (%s): %v", i, tm.Kind, err)
		}
	}
	if ds == nil || svc == nil || sm == nil {
		t.Fatalf("want a DaemonSet, a Service and a ServiceMonitor; got %v %v %v", ds != nil, svc != nil, sm != nil)
	}
	return ds, svc, sm
}

func check(t *testing.T, what string, ok bool) {
	t.Helper()
	if !ok {
		t.Error(what)
	}
}

// TestDaemonSet: host PID namespace (etcd is another pod's process), root
// with every capability dropped but BPF, PERFMON, SYS_RESOURCE and
// SYS_PTRACE, the shipped seccomp profile, read-only root filesystem, no privilege escalation, limits,
// the host's tracefs read-only, the exporter's port, control-plane nodes.
func TestDaemonSet(t *testing.T) {
	ds, _, _ := load(t)
	ps := ds.Spec.Template.Spec
	if len(ps.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(ps.Containers))
	}
	c := ps.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.Capabilities == nil || ps.SecurityContext == nil {
		t.Fatal("pod and container securityContext with capabilities must be set")
	}
	f := func(b *bool) bool { return b != nil && *b }
	add := slices.Clone(sc.Capabilities.Add)
	slices.Sort(add)
	check(t, "hostPID must be true: etcd runs in another pod", ps.HostPID)
	check(t, "no host network or IPC", !ps.HostNetwork && !ps.HostIPC)
	check(t, "capabilities: drop ALL", slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}))
	check(t, fmt.Sprintf("capabilities added %v, want BPF, PERFMON, SYS_PTRACE, SYS_RESOURCE", add),
		slices.Equal(add, []corev1.Capability{"BPF", "PERFMON", "SYS_PTRACE", "SYS_RESOURCE"}))
	check(t, "readOnlyRootFilesystem must be true", f(sc.ReadOnlyRootFilesystem))
	check(t, "allowPrivilegeEscalation must be false", sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation)
	check(t, "must not be privileged", !f(sc.Privileged))
	check(t, "runAsUser 0: added capabilities reach only root's effective set", ps.SecurityContext.RunAsUser != nil && *ps.SecurityContext.RunAsUser == 0)
	sp := ps.SecurityContext.SeccompProfile
	check(t, "seccompProfile Localhost "+profileFile+" (the runtime's default plus bpf and perf_event_open)",
		sp != nil && sp.Type == corev1.SeccompProfileTypeLocalhost && sp.LocalhostProfile != nil && *sp.LocalhostProfile == profileFile && c.SecurityContext.SeccompProfile == nil)
	check(t, "automountServiceAccountToken false", ps.AutomountServiceAccountToken != nil && !*ps.AutomountServiceAccountToken)
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := c.Resources.Requests[r]
		lim, okLim := c.Resources.Limits[r]
		check(t, fmt.Sprintf("%s: want a request no larger than a limit", r), okReq && okLim && req.Cmp(lim) <= 0)
	}
	check(t, "args: exporter --listen :9479", slices.Equal(c.Args, []string{"exporter", "--listen", fmt.Sprintf(":%d", metricsPort)}))
	check(t, "container port metrics 9479", len(c.Ports) == 1 && c.Ports[0].Name == "metrics" && c.Ports[0].ContainerPort == metricsPort)
	var tracefs bool
	for _, m := range c.VolumeMounts {
		for _, v := range ps.Volumes {
			if v.Name == m.Name && v.HostPath != nil && v.HostPath.Path == "/sys/kernel/tracing" && m.MountPath == "/sys/kernel/tracing" && m.ReadOnly {
				tracefs = true
			}
		}
	}
	check(t, "the host's /sys/kernel/tracing mounted read-only at the same path", tracefs)
	check(t, "only the tracefs volume", len(ps.Volumes) == 1)
	check(t, "on control-plane nodes", ps.NodeSelector["node-role.kubernetes.io/control-plane"] == "")
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	check(t, fmt.Sprintf("the selector matches the pod template (%v)", err), err == nil && sel.Matches(labelSet(ds.Spec.Template.Labels)))
}

// labelSet adapts a map to labels.Labels.
type labelSet map[string]string

func (l labelSet) Has(k string) bool              { _, ok := l[k]; return ok }
func (l labelSet) Get(k string) string            { return l[k] }
func (l labelSet) Lookup(k string) (string, bool) { v, ok := l[k]; return v, ok }

// TestServiceAndMonitor: the Service selects the DaemonSet's pods and
// exposes their metrics port by name; the ServiceMonitor selects the
// Service in its namespace and scrapes that port's /metrics.
func TestServiceAndMonitor(t *testing.T) {
	ds, svc, sm := load(t)
	podLabels := labelSet(ds.Spec.Template.Labels)
	for k, v := range svc.Spec.Selector {
		check(t, fmt.Sprintf("service selector %s=%s does not match the pods", k, v), podLabels[k] == v)
	}
	check(t, "the service has a selector", len(svc.Spec.Selector) > 0)
	check(t, "headless service", svc.Spec.ClusterIP == corev1.ClusterIPNone)
	check(t, "service port metrics -> 9479", len(svc.Spec.Ports) == 1 && svc.Spec.Ports[0].Name == "metrics" && svc.Spec.Ports[0].Port == metricsPort &&
		svc.Spec.Ports[0].TargetPort == intstr.FromString("metrics"))
	sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	check(t, fmt.Sprintf("the ServiceMonitor selects the service (%v)", err), err == nil && sel.Matches(labelSet(svc.Labels)))
	check(t, "the ServiceMonitor looks in the service's namespace", slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{svc.Namespace}))
	check(t, "one endpoint: port metrics, /metrics", len(sm.Spec.Endpoints) == 1 && sm.Spec.Endpoints[0].Port == "metrics" && sm.Spec.Endpoints[0].Path == "/metrics")
	check(t, "everything in namespace etcdbench", ds.Namespace == "etcdbench" && svc.Namespace == "etcdbench" && sm.Namespace == "etcdbench")
	check(t, "the namespace's manifest is the Job's", strings.Contains(mustRead(t, "../namespace.yaml"), "name: etcdbench"))
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
