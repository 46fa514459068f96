package helm

import (
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// Options are the flags of `helm template` that the tests give.
type Options struct {
	Release, Namespace string
	APIVersions        []string               // --api-versions
	KubeVersion        *chartutil.KubeVersion // --kube-version; nil: Helm's default
}

// Template renders chart c with vals (a -f file's values) as `helm
// template` does, client only: the same steps as Helm's install action in
// its client-only dry run (dependencies merged, the chart's kubeVersion
// checked, the release values built and validated against the chart's
// schema, the engine's render, NOTES.txt dropped, the manifests sorted
// into install order and their hooks apart), from Helm's own packages.
// The install action itself would link Helm's Kubernetes client, storage
// and registry code, some 400 packages more to compile for every cold
// test build, for steps a client-only render skips. It returns the
// manifests, then the hooks, one YAML document each.
func Template(c *chart.Chart, vals map[string]any, o Options) ([]string, error) {
	if err := chartutil.ProcessDependenciesWithMerge(c, vals); err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	if o.KubeVersion != nil {
		caps.KubeVersion = *o.KubeVersion
	}
	caps.APIVersions = append(caps.APIVersions, o.APIVersions...)
	if c.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(c.Metadata.KubeVersion, caps.KubeVersion.String()) {
		return nil, fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", c.Metadata.KubeVersion, caps.KubeVersion.String())
	}
	opts := chartutil.ReleaseOptions{Name: o.Release, Namespace: o.Namespace, Revision: 1, IsInstall: true}
	rv, err := chartutil.ToRenderValuesWithSchemaValidation(c, vals, opts, caps, false)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(c, rv)
	if err != nil {
		return nil, err
	}
	for name := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(files, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	docs := make([]string, 0, len(manifests)+len(hooks))
	for _, m := range manifests {
		docs = append(docs, m.Content)
	}
	for _, h := range hooks {
		docs = append(docs, h.Manifest)
	}
	return docs, nil
}
