package podman

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"etcdbench/deploy/helm"
)

// chartDir is the Helm chart (deploy/helm's tests lint it and check
// every object it renders; this package runs its exporter pod).
const chartDir = "../../helm/etcdbench"

// renderedChart is what the chart renders, as `helm template etcdbench
// deploy/helm/etcdbench --namespace monitoring -f VALUES`: the exporter's
// DaemonSet, the Jobs of its test hooks and every ConfigMap's data by
// name.
type renderedChart struct {
	ds         *appsv1.DaemonSet
	jobs       []*batchv1.Job
	configMaps map[string]map[string]string
	// kubeletRoot is the default seccomp.installer.kubeletRoot, under
	// which the installer writes the profile (its hostPath's seccomp/).
	kubeletRoot string
}

// renderChart renders the chart with values (YAML, a -f file; "": the
// defaults) as `helm template` does (helm.Template, what deploy/helm's
// tests render).
func renderChart(t *testing.T, values string) *renderedChart {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		t.Fatalf("values %q: %v", values, err)
	}
	docs, err := helm.Template(c, vals, helm.Options{Release: "etcdbench", Namespace: "monitoring", KubeVersion: kubeVersion(t)})
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	r := &renderedChart{configMaps: map[string]map[string]string{}}
	for i, doc := range docs {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("rendered document %d: %v", i, err)
		}
		switch tm.APIVersion + " " + tm.Kind {
		case "apps/v1 DaemonSet":
			if r.ds != nil {
				t.Fatal("the chart renders two DaemonSets")
			}
			r.ds = new(appsv1.DaemonSet)
			if err := yaml.UnmarshalStrict([]byte(doc), r.ds); err != nil {
				t.Fatalf("rendered DaemonSet: %v", err)
			}
		case "batch/v1 Job":
			j := new(batchv1.Job)
			if err := yaml.UnmarshalStrict([]byte(doc), j); err != nil {
				t.Fatalf("rendered Job: %v", err)
			}
			r.jobs = append(r.jobs, j)
		case "v1 ConfigMap":
			cm := new(corev1.ConfigMap)
			if err := yaml.UnmarshalStrict([]byte(doc), cm); err != nil {
				t.Fatalf("rendered ConfigMap: %v", err)
			}
			r.configMaps[cm.Name] = cm.Data
		}
	}
	if r.ds == nil {
		t.Fatal("the chart renders no DaemonSet")
	}
	seccomp, _ := c.Values["seccomp"].(map[string]any)
	installer, _ := seccomp["installer"].(map[string]any)
	if r.kubeletRoot, _ = installer["kubeletRoot"].(string); r.kubeletRoot == "" {
		t.Fatal("the chart's values have no seccomp.installer.kubeletRoot")
	}
	return r
}

// kubeVersion is the Kubernetes version go.mod's k8s.io/api stands for
// (helm.KubeVersion).
func kubeVersion(t *testing.T) *chartutil.KubeVersion {
	t.Helper()
	b, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	kv, err := helm.KubeVersion(b)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// nodeOptions maps the chart's pods onto this machine: the kubelet's
// seccomp directory (the installer's hostPath) is seccompDir, tracefs is
// the host's, and each of hostPaths (a hostPath -> where it is here) is
// where it says; the ConfigMaps are the rendered ones.
func (r *renderedChart) nodeOptions(t *testing.T, seccompDir string, hostPaths map[string]string) mapOptions {
	kubeletSeccomp := filepath.Join(r.kubeletRoot, "seccomp")
	return mapOptions{ConfigMaps: r.configMaps, HostPath: func(p string) string {
		switch p {
		case kubeletSeccomp:
			return seccompDir
		case "/sys/kernel/tracing":
			return p
		}
		if here, ok := hostPaths[p]; ok {
			return here
		}
		t.Errorf("the chart's pod has hostPath %s, which the test does not map", p)
		return filepath.Join(t.TempDir(), p)
	}}
}

// shellTools are the commands the chart's installer script runs (echo is
// the shell's).
var shellTools = []string{"sh", "mkdir", "cp", "mv", "dirname"}

// buildShellImage builds an image FROM scratch holding this machine's sh
// (Debian: dash) and the coreutils of shellTools at /bin, with the
// shared libraries ldd names, tagged tag: without the network, a
// stand-in for the chart's installer image (busybox), of which the
// installer's script uses only these commands.
func (p *podman) buildShellImage(tag string) {
	p.t.Helper()
	ctxDir := filepath.Join(p.dir, "shell-image")
	root := filepath.Join(ctxDir, "rootfs")
	copyFile := func(src, dst string) {
		p.t.Helper()
		b, err := os.ReadFile(src) // through symlinks: the file's content
		if err != nil {
			p.t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			p.t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			p.t.Fatal(err)
		}
	}
	libs := map[string]bool{}
	for _, tool := range shellTools {
		path, err := exec.LookPath(tool)
		if err != nil {
			p.t.Fatalf("the installer's stand-in image needs %s: %v", tool, err)
		}
		copyFile(path, filepath.Join(root, "bin", tool))
		out, err := exec.Command("ldd", path).Output()
		if err != nil {
			continue // static
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
				libs[f[2]] = true
			case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
				libs[f[0]] = true // the dynamic loader
			}
		}
	}
	for lib := range libs {
		copyFile(lib, filepath.Join(root, lib))
	}
	containerfile := "FROM scratch\nCOPY rootfs/ /\nENV PATH=/bin\n"
	if err := os.WriteFile(filepath.Join(ctxDir, "Containerfile"), []byte(containerfile), 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.must("build", "--pull=never", "--network", "none", "--tag", tag, ctxDir)
	p.t.Logf("installer image %s: a stand-in FROM scratch with this machine's %s and %d shared libraries", tag, strings.Join(shellTools, ", "), len(libs))
}

// chartImages checks that the chart's exporter runs the image built here
// and returns its init containers' images.
func chartImages(t *testing.T, ps corev1.PodSpec, image string) []string {
	t.Helper()
	if got := ps.Containers[0].Image; got != image {
		t.Fatalf("the chart's exporter runs %s, the manifests %s: one image is built here", got, image)
	}
	var init []string
	for _, c := range ps.InitContainers {
		init = append(init, c.Image)
	}
	return init
}
