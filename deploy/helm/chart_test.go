package helm

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"etcdbench/internal/exporter"
	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
)

// allOn turns on every optional part of the chart.
const allOn = `
serviceMonitor: {enabled: true}
prometheusRule: {enabled: true}
check: {enabled: true, nodes: [cp-1.example.internal, cp-2.example.internal]}
`

// copies are the chart's files/ and their sources (go generate ./deploy/helm).
var copies = []struct {
	source, copy string
	// optional: neither may exist yet.
	optional bool
}{
	{"../prometheus/etcdbench-rules.yaml", "etcdbench/files/etcdbench-rules.yaml", false},
	{"../grafana/etcdbench-exporter.json", "etcdbench/files/etcdbench-exporter.json", false},
	{"../kubernetes/exporter/etcdbench-exporter-seccomp.json", "etcdbench/files/etcdbench-exporter-seccomp.json", true},
}

// TestChartFilesAreCopies: the rules, dashboard and seccomp profile the
// chart ships are byte for byte deploy/'s.
func TestChartFilesAreCopies(t *testing.T) {
	for _, c := range copies {
		src, errS := os.ReadFile(c.source)
		cp, errC := os.ReadFile(c.copy)
		switch {
		case c.optional && errors.Is(errS, fs.ErrNotExist) && errors.Is(errC, fs.ErrNotExist):
			t.Logf("%s does not exist (yet): the chart ships no copy", c.source)
		case errS != nil:
			t.Errorf("%v", errS)
		case errC != nil || !bytes.Equal(src, cp):
			t.Errorf("%s is not a copy of %s (%v): run go generate ./deploy/helm", c.copy, c.source, errC)
		}
	}
}

// TestLint: helm lint passes, without a warning, on the default values and
// with every optional part on.
func TestLint(t *testing.T) {
	for _, vals := range []string{"", allOn} {
		l := lint.AllWithKubeVersion(chartDir, values(t, vals), namespace, kubeVersion(t))
		for _, m := range l.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("helm lint, values %q: %s", vals, m)
			} else {
				t.Logf("helm lint: %s", m)
			}
		}
	}
}

// TestDefaults: the defaults render the exporter's DaemonSet and Service
// and the dashboard, and none of the parts that need the Prometheus
// Operator or a choice of nodes.
func TestDefaults(t *testing.T) {
	r := render(t, "")
	checkExporter(t, r)
	if len(r.serviceMonitors)+len(r.rules)+len(r.jobs)+len(r.secrets) != 0 {
		t.Errorf("defaults rendered %d ServiceMonitors, %d PrometheusRules, %d Jobs, %d Secrets; want none",
			len(r.serviceMonitors), len(r.rules), len(r.jobs), len(r.secrets))
	}
	if r.configMap("-dashboard") == nil {
		t.Errorf("no dashboard ConfigMap among %d", len(r.configMaps))
	}
	// The profile's ConfigMap is there when the default is the chart's
	// Localhost profile, installed by the chart.
	_, c := r.exporterDaemonSet(t)
	local := c.SecurityContext.SeccompProfile != nil && c.SecurityContext.SeccompProfile.Type == corev1.SeccompProfileTypeLocalhost
	if installs := local && loadChart(t).Values["seccomp"].(map[string]any)["installer"].(map[string]any)["enabled"] == true; installs != (r.configMap("-seccomp-profile") != nil) {
		t.Errorf("the seccomp profile's ConfigMap: rendered %v, want %v", !installs, installs)
	}
}

// checkExporter checks what holds for every rendering of the exporter:
// the image, valid names and labels, the selectors, the Service and the
// ServiceMonitor, all in the release's namespace.
func checkExporter(t *testing.T, r *rendered) {
	t.Helper()
	ds, c := r.exporterDaemonSet(t)
	if want := "etcdbench:" + result.Version; c.Image != want {
		t.Errorf("image %q, want %q (the chart's appVersion is etcdbench's version)", c.Image, want)
	}
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set(ds.Spec.Template.Labels)) {
		t.Errorf("the DaemonSet's selector does not match its pods (%v)", err)
	}
	metas := []metav1.ObjectMeta{ds.ObjectMeta, ds.Spec.Template.ObjectMeta}
	for _, s := range r.services {
		metas = append(metas, s.ObjectMeta)
		if !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(ds.Spec.Template.Labels)) || len(s.Spec.Selector) == 0 {
			t.Errorf("service %s does not select the exporter's pods", s.Name)
		}
		if s.Spec.ClusterIP != corev1.ClusterIPNone || len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != metricsPort || s.Spec.Ports[0].TargetPort.StrVal != "metrics" {
			t.Errorf("service %s: want headless, port %d -> metrics", s.Name, metricsPort)
		}
		for _, sm := range r.serviceMonitors {
			sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
			if err != nil || !sel.Matches(labels.Set(s.Labels)) || !slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{s.Namespace}) {
				t.Errorf("ServiceMonitor %s does not select service %s in its namespace (%v)", sm.Name, s.Name, err)
			}
			if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" {
				t.Errorf("ServiceMonitor %s: want one endpoint, port metrics, /metrics", sm.Name)
			}
		}
	}
	if len(r.services) != 1 {
		t.Errorf("%d Services, want 1", len(r.services))
	}
	for _, sm := range r.serviceMonitors {
		metas = append(metas, sm.ObjectMeta)
	}
	for _, cm := range r.configMaps {
		metas = append(metas, cm.ObjectMeta)
	}
	for _, j := range r.jobs {
		metas = append(metas, j.ObjectMeta, j.Spec.Template.ObjectMeta)
	}
	for _, m := range metas {
		checkMeta(t, m)
	}
}

// checkMeta: a valid name (a DNS label, as a Job's pods' job-name label
// needs), valid labels, and the release's namespace for an object.
func checkMeta(t *testing.T, m metav1.ObjectMeta) {
	t.Helper()
	if m.Name != "" {
		for _, msg := range content.IsDNS1123Label(m.Name) {
			t.Errorf("name %q: %s", m.Name, msg)
		}
		if m.Namespace != namespace {
			t.Errorf("%s: namespace %q, want the release's %q", m.Name, m.Namespace, namespace)
		}
	}
	for k, v := range m.Labels {
		for _, msg := range append(content.IsLabelKey(k), content.IsLabelValue(v)...) {
			t.Errorf("%s: label %s=%s: %s", m.Name, k, v, msg)
		}
	}
}

// loadManifest decodes deploy/kubernetes' file strictly, with the node
// placeholder replaced.
func loadManifest(t *testing.T, path string) *rendered {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &rendered{}
	if err := r.decode(strings.ReplaceAll(string(b), "__NODE__", sampleNode)); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// exporterSeccomp is the exporter container's effective seccomp profile
// (its own, else the pod's); it clears both, for the comparison of the
// rest.
func exporterSeccomp(ps *corev1.PodSpec) *corev1.SeccompProfile {
	var p *corev1.SeccompProfile
	if ps.SecurityContext != nil {
		p, ps.SecurityContext.SeccompProfile = ps.SecurityContext.SeccompProfile, nil
	}
	for i := range ps.Containers {
		if sc := ps.Containers[i].SecurityContext; ps.Containers[i].Name == "exporter" && sc != nil && sc.SeccompProfile != nil {
			p, sc.SeccompProfile = sc.SeccompProfile, nil
		}
	}
	return p
}

// withoutInstaller removes the seccomp profile's installer (an init
// container and its two volumes) from the chart's pod spec: the manifest
// leaves installing the profile to the operator.
func withoutInstaller(ps *corev1.PodSpec) {
	ps.InitContainers = slices.DeleteFunc(ps.InitContainers, func(c corev1.Container) bool { return c.Name == "install-seccomp-profile" })
	if len(ps.InitContainers) == 0 {
		ps.InitContainers = nil
	}
	ps.Volumes = slices.DeleteFunc(ps.Volumes, func(v corev1.Volume) bool { return v.Name == "seccomp-profile" || v.Name == "kubelet-seccomp" })
}

// TestChartMatchesManifests: with the default values (the check on one
// node), the chart's exporter pod and check Job are deploy/kubernetes'
// (exporter/exporter.yaml, job.yaml), field for field, so that the
// manifests' tests hold for the chart too; the seccomp profile the
// exporter runs under is the manifest's, wherever it is set.
func TestChartMatchesManifests(t *testing.T) {
	m := loadManifest(t, "../kubernetes/exporter/exporter.yaml")
	want := m.daemonSets[0].Spec.Template.Spec
	wantSeccomp := exporterSeccomp(&want)
	// The chart's seccomp.type and profile are the manifest's.
	vals := "check: {enabled: true, nodes: [" + sampleNode + "]}\n"
	if wantSeccomp != nil && wantSeccomp.Type == corev1.SeccompProfileTypeLocalhost {
		vals += fmt.Sprintf("seccomp: {type: Localhost, localhostProfile: %s}\n", *wantSeccomp.LocalhostProfile)
		t.Logf("the manifest runs the exporter under %s: the chart's defaults must too", *wantSeccomp.LocalhostProfile)
	}
	r := render(t, vals)
	ds, _ := r.exporterDaemonSet(t)
	got := ds.Spec.Template.Spec
	gotSeccomp := exporterSeccomp(&got)
	withoutInstaller(&got)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the chart's exporter pod spec differs from deploy/kubernetes/exporter/exporter.yaml's (-manifest +chart):\n%s", d)
	}
	if !reflect.DeepEqual(wantSeccomp, gotSeccomp) {
		t.Errorf("the exporter's seccomp profile: chart %+v, manifest %+v", gotSeccomp, wantSeccomp)
	}
	if d, _ := render(t, "").exporterDaemonSet(t); !reflect.DeepEqual(exporterSeccomp(&d.Spec.Template.Spec), wantSeccomp) {
		t.Errorf("the chart's default seccomp is not the manifest's %+v: set seccomp.type in values.yaml", wantSeccomp)
	}

	jm := loadManifest(t, "../kubernetes/job.yaml")
	if len(r.jobs) != 1 || len(jm.jobs) != 1 {
		t.Fatalf("%d Jobs rendered, %d in job.yaml; want 1 and 1", len(r.jobs), len(jm.jobs))
	}
	wantJob, gotJob := jm.jobs[0], r.jobs[0]
	for _, j := range []*batchv1.Job{wantJob, gotJob} {
		if j.Spec.Template.Annotations["etcdbench/node"] != sampleNode || j.Annotations["etcdbench/node"] != sampleNode {
			t.Errorf("Job %s: annotation etcdbench/node is not %s", j.Name, sampleNode)
		}
		j.Spec.Template.ObjectMeta = metav1.ObjectMeta{}
	}
	if d := cmp.Diff(wantJob.Spec, gotJob.Spec); d != "" {
		t.Errorf("the chart's check Job differs from deploy/kubernetes/job.yaml's (-manifest +chart):\n%s", d)
	}
}

// TestEverythingOn: every optional part renders, each object strictly
// valid and consistent with the exporter's; the check Jobs are Helm test
// hooks run one after the other, one per node.
func TestEverythingOn(t *testing.T) {
	r := render(t, allOn)
	checkExporter(t, r)
	if len(r.serviceMonitors) != 1 || len(r.rules) != 1 {
		t.Fatalf("%d ServiceMonitors and %d PrometheusRules, want 1 and 1", len(r.serviceMonitors), len(r.rules))
	}
	ep := r.serviceMonitors[0].Spec.Endpoints[0]
	if len(ep.Relabelings) == 0 || ep.Relabelings[0].TargetLabel != "node" || ep.Scheme != "http" {
		t.Errorf("ServiceMonitor endpoint %+v: want scheme http and the node relabeling", ep)
	}
	if len(r.jobs) != 2 {
		t.Fatalf("%d Jobs, want one per node (2)", len(r.jobs))
	}
	for i, j := range r.jobs {
		if r.hooks[j.Name] != "test" || j.Annotations["helm.sh/hook-weight"] != fmt.Sprint(i) {
			t.Errorf("Job %s: hook %q weight %q, want a test hook of weight %d (one node after the other)", j.Name, r.hooks[j.Name], j.Annotations["helm.sh/hook-weight"], i)
		}
	}
	if r.jobs[0].Name == r.jobs[1].Name {
		t.Errorf("two Jobs named %s", r.jobs[0].Name)
	}
}

// TestRulesAndDashboard: the PrometheusRule holds deploy/prometheus'
// groups, every rule as it is there ($labels templates untouched by
// Helm's); the dashboard's ConfigMap holds deploy/grafana's JSON, with
// the label Grafana's sidecar looks for.
func TestRulesAndDashboard(t *testing.T) {
	r := render(t, allOn)
	b, err := os.ReadFile("../prometheus/etcdbench-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var want ruleGroups
	if err := yaml.UnmarshalStrict(b, &want); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, r.rules[0].Spec); d != "" {
		t.Errorf("the PrometheusRule is not deploy/prometheus/etcdbench-rules.yaml (-file +chart):\n%s", d)
	}
	if !strings.Contains(fmt.Sprint(r.rules[0].Spec), "{{ $labels.member }}") {
		t.Error("the alerts' {{ $labels.member }} did not survive the rendering")
	}
	dash, err := os.ReadFile("../grafana/etcdbench-exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	cm := r.configMap("-dashboard")
	if cm == nil {
		t.Fatal("no dashboard ConfigMap")
	}
	if cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("dashboard ConfigMap labels %v: want grafana_dashboard=1", cm.Labels)
	}
	if got := cm.Data["etcdbench-exporter.json"]; got != strings.TrimRight(string(dash), "\n") {
		t.Errorf("the ConfigMap's dashboard is not deploy/grafana/etcdbench-exporter.json (%d bytes, file %d)", len(got), len(dash))
	}
	if render(t, "dashboard: {enabled: false}").configMap("-dashboard") != nil {
		t.Error("dashboard.enabled false still renders a ConfigMap")
	}
}

// TestBadValues: a value the chart cannot honour fails the rendering with
// a message naming it.
func TestBadValues(t *testing.T) {
	tests := []struct{ name, vals, want string }{
		{"check without nodes", "check: {enabled: true}", "check.nodes"},
		{"unknown seccomp type", "seccomp: {type: Default}", "seccomp.type"},
		{"capacity without nodes", "capacity: {enabled: true, when: empty-scratch}", "capacity.nodes"},
		{"capacity without when", "capacity: {enabled: true, nodes: [cp-1]}", "capacity.when"},
		{"capacity at any time", "capacity: {enabled: true, nodes: [cp-1], when: always}", "capacity.when"},
	}
	if _, err := os.Stat("etcdbench/files/etcdbench-exporter-seccomp.json"); errors.Is(err, fs.ErrNotExist) {
		tests = append(tests, struct{ name, vals, want string }{"Localhost without a profile", "seccomp: {type: Localhost}", "seccomp.profile"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := template(t, tt.vals)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("values %q: error %v, want one naming %s", tt.vals, err, tt.want)
			}
		})
	}
}

// TestSeccomp: Localhost runs the exporter's container (only) under the
// profile, which an init container writes from a ConfigMap into the
// kubelet's seccomp directory before the exporter's container is created;
// Unconfined turns the filter off for the exporter alone.
func TestSeccomp(t *testing.T) {
	profile := `{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["bpf", "perf_event_open"], "action": "SCMP_ACT_ALLOW"}]}`
	r := render(t, fmt.Sprintf("seccomp:\n  type: Localhost\n  localhostProfile: etcdbench/x.json\n  profile: '%s'\n", profile))
	ds, c := r.exporterDaemonSet(t)
	ps := ds.Spec.Template.Spec
	if sp := c.SecurityContext.SeccompProfile; sp == nil || sp.Type != corev1.SeccompProfileTypeLocalhost || sp.LocalhostProfile == nil || *sp.LocalhostProfile != "etcdbench/x.json" {
		t.Errorf("the exporter's seccompProfile %+v, want Localhost etcdbench/x.json", sp)
	}
	if sp := ps.SecurityContext.SeccompProfile; sp == nil || sp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("the pod's seccompProfile %+v, want RuntimeDefault (the sandbox and the installer start before the profile is there)", sp)
	}
	cm := r.configMap("-seccomp-profile")
	if cm == nil || cm.Data["profile.json"] != profile {
		t.Fatalf("the profile's ConfigMap %+v does not hold the profile", cm)
	}
	checkInstaller(t, ps, cm.Name)
	if ds.Spec.Template.Annotations["checksum/seccomp-profile"] == "" {
		t.Error("no checksum annotation: a new profile would not roll the pods")
	}

	r = render(t, "seccomp: {type: Localhost, installer: {enabled: false}}")
	ds, c = r.exporterDaemonSet(t)
	if sp := c.SecurityContext.SeccompProfile; sp == nil || sp.Type != corev1.SeccompProfileTypeLocalhost || len(ds.Spec.Template.Spec.InitContainers) != 0 || r.configMap("-seccomp-profile") != nil {
		t.Errorf("Localhost without the installer: want the profile referenced, no init container, no ConfigMap; got %+v, %d init containers", sp, len(ds.Spec.Template.Spec.InitContainers))
	}
	_, c = render(t, "seccomp: {type: Unconfined}").exporterDaemonSet(t)
	if sp := c.SecurityContext.SeccompProfile; sp == nil || sp.Type != corev1.SeccompProfileTypeUnconfined {
		t.Errorf("Unconfined: the exporter's seccompProfile %+v", sp)
	}
}

// checkInstaller: the init container copies the ConfigMap's profile into
// the kubelet's seccomp directory, with nothing else of the host writable
// and every capability dropped.
func checkInstaller(t *testing.T, ps corev1.PodSpec, configMap string) {
	t.Helper()
	if len(ps.InitContainers) != 1 {
		t.Fatalf("%d init containers, want the installer", len(ps.InitContainers))
	}
	ic := ps.InitContainers[0]
	script := strings.Join(ic.Command, " ")
	if !strings.Contains(script, "/host-seccomp/etcdbench/x.json") || !strings.Contains(script, "/profile/profile.json") {
		t.Errorf("the installer's command does not copy the profile to its place:\n%s", script)
	}
	sc := ic.SecurityContext
	if sc == nil || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("the installer's securityContext %+v: want every capability dropped, read-only root, no privilege escalation", sc)
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range ic.VolumeMounts {
		mounts[m.Name] = m
	}
	for _, v := range ps.Volumes {
		switch v.Name {
		case "seccomp-profile":
			if v.ConfigMap == nil || v.ConfigMap.Name != configMap || mounts[v.Name].MountPath != "/profile" {
				t.Errorf("volume %s: want ConfigMap %s at /profile", v.Name, configMap)
			}
		case "kubelet-seccomp":
			if v.HostPath == nil || v.HostPath.Path != "/var/lib/kubelet/seccomp" || mounts[v.Name].MountPath != "/host-seccomp" {
				t.Errorf("volume %s: want the host's /var/lib/kubelet/seccomp at /host-seccomp", v.Name)
			}
		}
	}
	if len(mounts) != 2 {
		t.Errorf("the installer mounts %d volumes, want the profile and the seccomp directory", len(mounts))
	}
	for _, c := range ps.Containers {
		for _, m := range c.VolumeMounts {
			if m.Name == "kubelet-seccomp" {
				t.Errorf("container %s mounts the kubelet's seccomp directory", c.Name)
			}
		}
	}
}

// labelsOf is for the DaemonSet's pod template, in failure messages.
func labelsOf(ds *appsv1.DaemonSet) string { return labels.Set(ds.Spec.Template.Labels).String() }

// webPaths are where the pod mounts the web config and the TLS secret.
var webPaths = map[string]string{"web-config": "/etc/etcdbench/web", "web-tls": "/etc/etcdbench/tls"}

// TestWebConfig: web.config becomes a Secret holding the exporter's
// --web.config.file, which the exporter-toolkit accepts; with tlsSecret
// the certificate's Secret is mounted where the config says; the liveness
// probe only connects (basic auth would refuse it); the ServiceMonitor
// scrapes over https with the given tlsConfig and basicAuth.
func TestWebConfig(t *testing.T) {
	vals := `
web:
  tlsSecret: etcdbench-tls
  config:
    tls_server_config: {cert_file: /etc/etcdbench/tls/tls.crt, key_file: /etc/etcdbench/tls/tls.key}
    basic_auth_users: {prometheus: $2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi}
serviceMonitor:
  enabled: true
  scheme: https
  tlsConfig: {ca: {secret: {name: etcdbench-ca, key: ca.crt}}, serverName: etcdbench-exporter}
  basicAuth: {username: {name: etcdbench-scrape, key: username}, password: {name: etcdbench-scrape, key: password}}
`
	r := render(t, vals)
	checkExporter(t, r)
	ds, c := r.exporterDaemonSet(t)
	if len(r.secrets) != 1 {
		t.Fatalf("%d Secrets, want the web config's", len(r.secrets))
	}
	sec := r.secrets[0]
	conf, ok := sec.StringData["web-config.yml"]
	if !ok {
		t.Fatalf("Secret %s has no web-config.yml", sec.Name)
	}
	checkWebConfigAccepted(t, conf)
	i := slices.Index(c.Args, "--web.config.file")
	if i < 0 || i+1 >= len(c.Args) || c.Args[i+1] != webPaths["web-config"]+"/web-config.yml" {
		t.Errorf("args %q: want --web.config.file %s/web-config.yml", c.Args, webPaths["web-config"])
	}
	secretOf := map[string]string{"web-config": sec.Name, "web-tls": "etcdbench-tls"}
	for name, path := range webPaths {
		mounted := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == name && m.MountPath == path && m.ReadOnly })
		vol := slices.ContainsFunc(ds.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
			return v.Name == name && v.Secret != nil && v.Secret.SecretName == secretOf[name]
		})
		if !mounted || !vol {
			t.Errorf("Secret %s is not mounted read-only at %s (%s)", secretOf[name], path, labelsOf(ds))
		}
	}
	if p := c.LivenessProbe; p == nil || p.TCPSocket == nil || p.HTTPGet != nil {
		t.Errorf("liveness probe %+v: want a TCP probe (basic auth refuses the kubelet's GET)", p)
	}
	ep := r.serviceMonitors[0].Spec.Endpoints[0]
	if ep.Scheme != "https" || ep.TLSConfig["serverName"] != "etcdbench-exporter" || ep.BasicAuth["password"] == nil {
		t.Errorf("ServiceMonitor endpoint %+v: want https with the tlsConfig and basicAuth given", ep)
	}

	r = render(t, "web: {existingSecret: mine}")
	ds, _ = r.exporterDaemonSet(t)
	if len(r.secrets) != 0 || !slices.ContainsFunc(ds.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Secret != nil && v.Secret.SecretName == "mine" }) {
		t.Errorf("web.existingSecret: want no Secret rendered and Secret mine mounted")
	}
}

// checkWebConfigAccepted writes conf, its certificate paths pointed at a
// real certificate, and checks that the exporter would start with it.
func checkWebConfigAccepted(t *testing.T, conf string) {
	t.Helper()
	w := testutil.NewWebTLS(t, "u", "p")
	dir := filepath.Dir(w.Config)
	conf = strings.ReplaceAll(conf, "/etc/etcdbench/tls/", dir+"/")
	path := filepath.Join(t.TempDir(), "web-config.yml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := exporter.ValidateWebConfig(path); err != nil {
		t.Errorf("the rendered web config is refused: %v\n%s", err, conf)
	}
}

// TestValuesDocumented: every value of values.yaml, down to the second
// level (seccomp.installer, check.nodes), is in the README's table, as
// `top.key` or as `.key` in a row of its section.
func TestValuesDocumented(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	vals := loadChart(t).Values
	n := 0
	for top, v := range vals {
		n++
		if !strings.Contains(string(readme), "`"+top) {
			t.Errorf("value %s is not in the chart's README", top)
		}
		sub, ok := v.(map[string]any)
		if !ok {
			continue
		}
		for k := range sub {
			n++
			if !strings.Contains(string(readme), top+"."+k) && !strings.Contains(string(readme), "`."+k) {
				t.Errorf("value %s.%s is not in the chart's README", top, k)
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d values found: the test is not reading values.yaml", n)
	}
	checkReadmeDefaults(t, string(readme), vals)
}

// checkReadmeDefaults holds the default column of the README's values
// table to values.yaml for scalar values (strings, numbers, booleans).
// A row names its values as `top.key`, then `.key` for a sibling of the
// one before; its defaults are separated by commas outside backquotes.
// With one value, the whole column is its default. With one default for
// several values, a `literal` must be every scalar's value and prose
// stands for the group. Otherwise the defaults go one per value or one
// per scalar value, in order: a scalar's default is its `literal`, on or
// off for a boolean, and prose only for an empty string (a default the
// chart computes: "the chart's appVersion", "none").
func checkReadmeDefaults(t *testing.T, readme string, vals map[string]any) {
	t.Helper()
	lookup := func(path string) (any, bool) {
		var v any = vals
		for _, k := range strings.Split(path, ".") {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[k]; !ok {
				return nil, false
			}
		}
		return v, true
	}
	scalar := func(v any) (string, bool) {
		switch v := v.(type) {
		case string:
			return v, true
		case bool, float64, int, int64:
			return fmt.Sprint(v), true
		}
		return "", false
	}
	// check compares default d of value name (v scalar).
	check := func(name string, v any, d string, prose bool) {
		s, _ := scalar(v)
		lit, quoted := strings.CutPrefix(d, "`")
		lit, closed := strings.CutSuffix(lit, "`")
		switch {
		case quoted && closed:
			if lit != s {
				t.Errorf("the chart's README gives %s the default `%s`; values.yaml has %q", name, lit, s)
			}
		case d == "on" || d == "off":
			if b, ok := v.(bool); !ok || b != (d == "on") {
				t.Errorf("the chart's README gives %s the default %s; values.yaml has %q", name, d, s)
			}
		case s != "" && !prose:
			t.Errorf("the chart's README gives %s the default %q; values.yaml has %q: write it as `%s`", name, d, s, s)
		}
	}
	rows := 0
	for _, line := range strings.Split(readme, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) != 3 {
			continue
		}
		rows++
		var names []string
		parent := ""
		for _, n := range splitOutsideQuotes(cells[0]) {
			n = strings.Trim(n, "`")
			if strings.HasPrefix(n, ".") {
				n = parent + n
			} else if i := strings.LastIndex(n, "."); i >= 0 {
				parent = n[:i]
			} else {
				parent = ""
			}
			names = append(names, n)
		}
		var values, scalars []any
		var scalarNames []string
		for _, n := range names {
			v, ok := lookup(n)
			if !ok {
				t.Errorf("the chart's README names value %s, which values.yaml does not have", n)
				continue
			}
			values = append(values, v)
			if _, ok := scalar(v); ok {
				scalars, scalarNames = append(scalars, v), append(scalarNames, n)
			}
		}
		if len(values) != len(names) || len(scalars) == 0 {
			continue
		}
		defaults := splitOutsideQuotes(cells[1])
		switch {
		case len(names) == 1:
			check(names[0], values[0], strings.TrimSpace(cells[1]), false)
		case len(defaults) == 1:
			for i, v := range scalars {
				check(scalarNames[i], v, defaults[0], true)
			}
		case len(defaults) == len(names):
			for i, v := range values {
				if _, ok := scalar(v); ok {
					check(names[i], v, defaults[i], false)
				}
			}
		case len(defaults) == len(scalars):
			for i, v := range scalars {
				check(scalarNames[i], v, defaults[i], false)
			}
		default:
			t.Errorf("the chart's README row of %s gives %d defaults for %d values (%d scalar): give one per value", cells[0], len(defaults), len(names), len(scalars))
		}
	}
	if rows < 15 {
		t.Errorf("only %d rows in the chart's README's values table: the test is not reading it", rows)
	}
}

// splitOutsideQuotes splits s at the commas outside backquotes, trimmed.
func splitOutsideQuotes(s string) []string {
	var out []string
	in, start := false, 0
	for i, r := range s {
		switch {
		case r == '`':
			in = !in
		case r == ',' && !in:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}
