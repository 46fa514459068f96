package helm

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// chartDir is the chart, relative to this package.
const chartDir = "etcdbench"

// Facts of the deployment the chart shares with deploy/kubernetes.
const (
	releaseName = "etcdbench"
	namespace   = "monitoring"
	sampleNode  = "cp-1.example.internal"
	metricsPort = 9479
)

// operatorAPI is the Prometheus Operator's API group, which `helm
// template --api-versions` would name.
const operatorAPI = "monitoring.coreos.com/v1"

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor
// the chart writes; decoding it strictly rejects a misspelt field.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port        string         `json:"port"`
			Path        string         `json:"path"`
			Interval    string         `json:"interval"`
			Scheme      string         `json:"scheme"`
			TLSConfig   map[string]any `json:"tlsConfig"`
			BasicAuth   map[string]any `json:"basicAuth"`
			Relabelings []struct {
				SourceLabels []string `json:"sourceLabels"`
				TargetLabel  string   `json:"targetLabel"`
			} `json:"relabelings"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// ruleGroups is a Prometheus rule file's content, and a PrometheusRule's
// spec.
type ruleGroups struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Record      string            `json:"record,omitempty"`
			Alert       string            `json:"alert,omitempty"`
			Expr        string            `json:"expr"`
			For         string            `json:"for,omitempty"`
			Labels      map[string]string `json:"labels,omitempty"`
			Annotations map[string]string `json:"annotations,omitempty"`
		} `json:"rules"`
	} `json:"groups"`
}

// prometheusRule is the Prometheus Operator's PrometheusRule.
type prometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ruleGroups `json:"spec"`
}

// rendered is what the chart rendered, decoded by kind.
type rendered struct {
	daemonSets      []*appsv1.DaemonSet
	services        []*corev1.Service
	configMaps      []*corev1.ConfigMap
	secrets         []*corev1.Secret
	jobs            []*batchv1.Job
	serviceMonitors []*serviceMonitor
	rules           []*prometheusRule
	// hooks are the names of the objects rendered as Helm hooks, with
	// their hook annotation.
	hooks map[string]string
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// decode decodes every YAML document of manifest strictly (unknown or
// duplicate fields are errors) into the API type its apiVersion and kind
// name.
func (r *rendered) decode(manifest string) error {
	for i, doc := range docSeparator.Split(manifest, -1) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return fmt.Errorf("document %d: %w\n%s", i, err, doc)
		}
		if tm == (metav1.TypeMeta{}) {
			continue // empty, or only a "# Source:" comment
		}
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "apps/v1 DaemonSet":
			o := new(appsv1.DaemonSet)
			r.daemonSets, obj = append(r.daemonSets, o), o
		case "v1 Service":
			o := new(corev1.Service)
			r.services, obj = append(r.services, o), o
		case "v1 ConfigMap":
			o := new(corev1.ConfigMap)
			r.configMaps, obj = append(r.configMaps, o), o
		case "v1 Secret":
			o := new(corev1.Secret)
			r.secrets, obj = append(r.secrets, o), o
		case "batch/v1 Job":
			o := new(batchv1.Job)
			r.jobs, obj = append(r.jobs, o), o
		case operatorAPI + " ServiceMonitor":
			o := new(serviceMonitor)
			r.serviceMonitors, obj = append(r.serviceMonitors, o), o
		case operatorAPI + " PrometheusRule":
			o := new(prometheusRule)
			r.rules, obj = append(r.rules, o), o
		default:
			return fmt.Errorf("document %d: %s %s: no test knows this kind; add it to decode", i, tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			return fmt.Errorf("document %d (%s): %w\n%s", i, tm.Kind, err, doc)
		}
	}
	return nil
}

// loadChart loads the chart from its directory, as helm does.
func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	return c
}

// values parses values given as YAML (the user's -f file).
func values(t *testing.T, y string) map[string]any {
	t.Helper()
	v, err := chartutil.ReadValues([]byte(y))
	if err != nil {
		t.Fatalf("values %q: %v", y, err)
	}
	return v
}

// template renders the chart as `helm template etcdbench etcdbench/
// --namespace monitoring --api-versions monitoring.coreos.com/v1 -f
// VALUES` does (Template).
func template(t *testing.T, vals string) (string, error) {
	t.Helper()
	docs, err := Template(loadChart(t), values(t, vals), Options{
		Release: releaseName, Namespace: namespace,
		APIVersions: []string{operatorAPI}, KubeVersion: kubeVersion(t),
	})
	return strings.Join(docs, "\n---\n"), err
}

// kubeVersion is the Kubernetes version go.mod's k8s.io/api stands for
// (KubeVersion).
func kubeVersion(t *testing.T) *chartutil.KubeVersion {
	t.Helper()
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	kv, err := KubeVersion(b)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// render renders the chart with vals and decodes what it rendered.
func render(t *testing.T, vals string) *rendered {
	t.Helper()
	out, err := template(t, vals)
	if err != nil {
		t.Fatalf("helm template with values %q: %v", vals, err)
	}
	r := &rendered{hooks: map[string]string{}}
	if err := r.decode(out); err != nil {
		t.Fatalf("values %q: %v", vals, err)
	}
	for _, j := range r.jobs {
		if h := j.Annotations["helm.sh/hook"]; h != "" {
			r.hooks[j.Name] = h
		}
	}
	return r
}

// exporterDaemonSet returns the one DaemonSet, and its exporter container.
func (r *rendered) exporterDaemonSet(t *testing.T) (*appsv1.DaemonSet, *corev1.Container) {
	t.Helper()
	if len(r.daemonSets) != 1 {
		t.Fatalf("%d DaemonSets, want 1", len(r.daemonSets))
	}
	ds := r.daemonSets[0]
	for i, c := range ds.Spec.Template.Spec.Containers {
		if c.Name == "exporter" {
			return ds, &ds.Spec.Template.Spec.Containers[i]
		}
	}
	t.Fatal("no container named exporter")
	return nil, nil
}

// configMap returns the ConfigMap whose name ends in suffix, or nil.
func (r *rendered) configMap(suffix string) *corev1.ConfigMap {
	for _, cm := range r.configMaps {
		if strings.HasSuffix(cm.Name, suffix) {
			return cm
		}
	}
	return nil
}
