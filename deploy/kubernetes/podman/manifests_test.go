package podman

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// decodeKind decodes strictly, into obj, the one document of the YAML
// file path whose kind is kind (the manifests' own tests check the rest).
func decodeKind(t *testing.T, path, kind string, obj any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The Job is a template: run.sh puts the node's name in.
	data = bytes.ReplaceAll(data, []byte("__NODE__"), []byte("this-node"))
	found := 0
	for i, doc := range docSeparator.Split(string(data), -1) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("%s document %d: %v", path, i, err)
		}
		if tm.Kind != kind {
			continue
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("%s document %d (%s): %v", path, i, kind, err)
		}
		found++
	}
	if found != 1 {
		t.Fatalf("%s: %d documents of kind %s, want 1", path, found, kind)
	}
}

func loadJob(t *testing.T) *batchv1.Job {
	j := new(batchv1.Job)
	decodeKind(t, "../job.yaml", "Job", j)
	return j
}

func loadDaemonSet(t *testing.T) *appsv1.DaemonSet {
	ds := new(appsv1.DaemonSet)
	decodeKind(t, "../exporter/exporter.yaml", "DaemonSet", ds)
	return ds
}

// sameImage says that both manifests run one image, the one the test builds.
func sameImage(t *testing.T, job *batchv1.Job, ds *appsv1.DaemonSet) string {
	t.Helper()
	a, b := job.Spec.Template.Spec.Containers[0].Image, ds.Spec.Template.Spec.Containers[0].Image
	if a != b {
		t.Fatalf("the Job runs %s and the DaemonSet %s: one image is built here", a, b)
	}
	return fmt.Sprint(a)
}
