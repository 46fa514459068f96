package kubernetes

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"etcdbench/internal/result"
)

// runScript runs run.sh with args and PATH starting at pathDir (if set).
func runScript(t *testing.T, pathDir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	cmd := exec.Command("bash", append([]string{"run.sh"}, args...)...)
	if pathDir != "" {
		cmd.Env = append(os.Environ(), "PATH="+pathDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}

func TestScriptPrint(t *testing.T) {
	const image = "registry.example.com/team/etcdbench:1.2.3"
	out, stderr, code := runScript(t, "", "--print", "--node", sampleNode, "--node", "cp-2",
		"--image", image, "--quick", "--", "--textfile", `/odd "dir"\x`)
	if code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	var m manifests
	if err := decodeManifests([]byte(out), &m); err != nil {
		t.Fatalf("run.sh --print: %v\n%s", err, out)
	}
	if len(m.jobs) != 2 {
		t.Fatalf("want one Job per --node (2), got %d", len(m.jobs))
	}
	for i, node := range []string{sampleNode, "cp-2"} {
		checkJob(t, m.jobs[i], node, image)
		args := m.jobs[i].Spec.Template.Spec.Containers[0].Args
		want := []string{"check", "--dir", "/scratch", "-o", "json", "--quick", "--textfile", `/odd "dir"\x`}
		if !slices.Equal(args, want) {
			t.Errorf("args %q, want %q", args, want)
		}
	}
	if strings.Contains(out, nodePlaceholder) {
		t.Errorf("%s left in the output", nodePlaceholder)
	}
}

func TestScriptPrintHostPath(t *testing.T) {
	out, stderr, code := runScript(t, "", "--print", "--node", sampleNode, "--host-path", "/mnt/etcd/etcdbench")
	if code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	var m manifests
	if err := decodeManifests([]byte(out), &m); err != nil || len(m.jobs) != 1 {
		t.Fatalf("run.sh --print: %v, %d Jobs", err, len(m.jobs))
	}
	if got := m.jobs[0].Spec.Template.Spec.Volumes[0].HostPath.Path; got != "/mnt/etcd/etcdbench" {
		t.Errorf("hostPath %q, want /mnt/etcd/etcdbench", got)
	}
}

func TestScriptUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown option", []string{"--nope"}, "unknown option --nope"},
		{"relative host path", []string{"--print", "--node", "a", "--host-path", "etcd"}, "absolute"},
		{"bad node name", []string{"--print", "--node", "A_B"}, "not a node name"},
		{"print without node", []string{"--print"}, "--print needs --node"},
		{"missing value", []string{"--image"}, "--image needs a value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runScript(t, "", tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit code %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
		})
	}
}

// fakeKubectl answers the calls run.sh makes: two control-plane nodes; the
// Job made for cp-2 fails with exit code 1 (a FAIL verdict), the other
// succeeds. Every Job manifest it is given is saved in $FAKE_DIR.
const fakeKubectl = `#!/usr/bin/env bash
set -eu
echo "$*" >>"$FAKE_DIR/calls"
case "$1 $2" in
"get nodes") echo "cp-1 cp-2" ;;
"apply -f") ;;
"create -f")
	n=$(ls "$FAKE_DIR" | grep -c '^job-' || true)
	cat >"$FAKE_DIR/job-$n.yaml"
	grep -q 'values: \[cp-2\]' "$FAKE_DIR/job-$n.yaml" && s=x || s=$n
	echo "job.batch/etcdbench-check-$s" ;;
"get -n")
	case "$4" in
	job.batch/etcdbench-check-x) echo "FailureTarget Failed" ;;
	job.batch/*) echo "SuccessCriteriaMet Complete" ;;
	pods) case "$6" in *-x) echo 1 ;; *) echo 0 ;; esac ;;
	esac ;;
"logs -n")
	echo "etcdbench: a line on stderr"
	printf '{\n  "schema": "etcdbench.result/v1",\n  "status": "PASS"\n}\n' ;;
*) echo "fake kubectl: unexpected $*" >&2; exit 99 ;;
esac
`

func TestScriptRun(t *testing.T) {
	bin, fake, out := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(fakeKubectl), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_DIR", fake)
	_, stderr, code := runScript(t, bin, "--out", out)
	if code != 1 {
		t.Errorf("exit code %d, want 1 (cp-2's FAIL)\n%s", code, stderr)
	}
	calls, _ := os.ReadFile(filepath.Join(fake, "calls"))
	if !strings.HasPrefix(string(calls), "get nodes -l node-role.kubernetes.io/control-plane") ||
		!strings.Contains(string(calls), "apply -f "+mustAbs(t, "namespace.yaml")) {
		t.Errorf("kubectl calls:\n%s", calls)
	}
	for i, node := range []string{"cp-1", "cp-2"} {
		data, err := os.ReadFile(filepath.Join(fake, "job-"+string(rune('0'+i))+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var m manifests
		if err := decodeManifests(data, &m); err != nil || len(m.jobs) != 1 {
			t.Fatalf("Job %d given to kubectl: %v", i, err)
		}
		checkJob(t, m.jobs[0], node, "etcdbench:"+result.Version)
		js, err := os.ReadFile(filepath.Join(out, node+".json"))
		if err != nil || !strings.HasPrefix(string(js), "{\n") || strings.Contains(string(js), "stderr") {
			t.Errorf("%s.json: %v %q", node, err, js)
		}
	}
	if !strings.Contains(stderr, "cp-2: exit code 1") {
		t.Errorf("stderr does not report cp-2's exit code:\n%s", stderr)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
