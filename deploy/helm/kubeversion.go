package helm

import (
	"fmt"
	"regexp"

	"helm.sh/helm/v3/pkg/chartutil"
)

// KubeVersion is the Kubernetes version of the k8s.io/api that goMod (the
// contents of go.mod) requires (v0.35.x: Kubernetes 1.35.x), for the
// chart's kubeVersion constraint when it is linted and rendered: Helm's
// library alone says 1.20. The chart's tests and the container tests
// that run the rendered chart use it.
func KubeVersion(goMod []byte) (*chartutil.KubeVersion, error) {
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/api v0\.(\d+\.\d+)`).FindSubmatch(goMod)
	if m == nil {
		return nil, fmt.Errorf("go.mod requires no k8s.io/api v0.x.y")
	}
	return chartutil.ParseKubeVersion("v1." + string(m[1]))
}
