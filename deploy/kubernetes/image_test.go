package kubernetes

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/result"
)

// dockerfile is what the test reads from the repository's Dockerfile.
type dockerfile struct {
	froms      []string // image of each FROM, in order
	args       map[string]string
	user       string
	entrypoint string
	build      string // the RUN line that runs go build
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	data, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	d := dockerfile{args: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		rest := strings.TrimSpace(strings.TrimPrefix(sc.Text(), f[0]))
		switch f[0] {
		case "FROM":
			img := slices.DeleteFunc(f[1:], func(s string) bool { return strings.HasPrefix(s, "--") })
			d.froms = append(d.froms, img[0])
		case "ARG":
			k, v, _ := strings.Cut(f[1], "=")
			d.args[k] = v
		case "USER":
			d.user = f[1]
		case "ENTRYPOINT":
			d.entrypoint = rest
		case "RUN":
			if strings.Contains(rest, "go build") {
				d.build = rest
			}
		}
	}
	return d
}

// TestDockerfile checks what the Dockerfile says without Docker: its stages,
// user and entrypoint, that its build is the static one buildStatic makes,
// and that the version it stamps is the one the manifests' image carries.
func TestDockerfile(t *testing.T) {
	d := readDockerfile(t)
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if len(d.froms) != 2 {
		t.Fatalf("want a builder and a final stage, got FROM %q", d.froms)
	}
	if goVersion == nil || d.froms[0] != "golang:"+string(goVersion[1]) {
		t.Errorf("builder %q, want golang:%s as go.mod says", d.froms[0], goVersion[1])
	}
	if f := d.froms[1]; f != "scratch" && !strings.HasPrefix(f, "gcr.io/distroless/static") {
		t.Errorf("final stage %q: want distroless/static or scratch (the binary is static)", f)
	}
	if d.user != "65532:65532" && d.user != "65532" && d.user != "nonroot" {
		t.Errorf("USER %q, want the non-root 65532", d.user)
	}
	if d.entrypoint != `["/etcdbench"]` {
		t.Errorf(`ENTRYPOINT %s, want ["/etcdbench"] (the Job's args start after it)`, d.entrypoint)
	}
	for _, want := range []string{"CGO_ENABLED=0", "go build -trimpath", `-ldflags "-s -w -X etcdbench/internal/result.Version=$VERSION"`, "./cmd/etcdbench"} {
		if !strings.Contains(d.build, want) {
			t.Errorf("the go build line %q lacks %q", d.build, want)
		}
	}
	if d.args["VERSION"] != result.Version {
		t.Errorf("ARG VERSION=%s, want etcdbench's version %s (the tag of the manifests' image)", d.args["VERSION"], result.Version)
	}
	ignore, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	ignored := map[string]bool{}
	for _, line := range strings.Split(string(ignore), "\n") {
		ignored[strings.TrimSpace(line)] = true
		for _, needed := range []string{"go.mod", "go.sum", "cmd", "internal"} {
			if ok, _ := filepath.Match(strings.TrimSpace(line), needed); ok {
				t.Errorf(".dockerignore line %q leaves %s out of the build", line, needed)
			}
		}
	}
	// A binary git ignores (one built in the tree) stays out of the
	// image's build context too; bench/ is left out whole.
	gitignore, err := os.ReadFile("../../.gitignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(gitignore), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "/") || strings.HasSuffix(line, "/") || strings.ContainsAny(line, "*?[") || strings.HasPrefix(line, "/bench/") {
			continue
		}
		if !ignored[line] {
			t.Errorf(".gitignore names the built file %s, .dockerignore does not: it would go into the image's build context", line)
		}
	}
}

// TestStaticBinary builds etcdbench as the Dockerfile does (but for
// -trimpath, as buildImage in ./podman) and checks that it is static (no
// interpreter, no shared libraries) and carries the version, then runs
// the manifest's args with it the way the pod does.
func TestStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds etcdbench")
	}
	const version = "9.8.7-test"
	bin := filepath.Join(t.TempDir(), "etcdbench")
	cmd := exec.Command("go", "build", "-ldflags", "-s -w -X etcdbench/internal/result.Version="+version, "-o", bin, "../../cmd/etcdbench")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	t.Run("static", func(t *testing.T) {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("program header %v: the binary is dynamically linked", p.Type)
			}
		}
		if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
			t.Errorf("needs shared libraries %q", libs)
		}
	})

	t.Run("version", func(t *testing.T) {
		out, err := exec.Command(bin, "--version").CombinedOutput()
		if err != nil || !strings.Contains(string(out), version) {
			t.Errorf("etcdbench --version: %v %q, want %s", err, out, version)
		}
	})

	t.Run("the Job's args", func(t *testing.T) { runJobArgs(t, bin) })
}

// runJobArgs runs the Job's args, with a temporary directory for the
// mounted scratch path and --quick. stdout and stderr go to one stream, as
// in a pod's log, and the result record must come out of it the way run.sh
// and docs/kubernetes.md take it.
func runJobArgs(t *testing.T, bin string) {
	help, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("etcdbench --help: %v\n%s", err, help)
	}
	if !regexp.MustCompile(`(?m)^  check\s`).Match(help) {
		t.Skip("this etcdbench has no check command yet")
	}
	m := loadDir(t, sampleNode)
	c := m.jobs[0].Spec.Template.Spec.Containers[0]
	mount, _ := flagValue(c.Args, "dir", "")
	dir := t.TempDir()
	args := append(slices.Clone(c.Args), "--quick")
	for i, a := range args {
		if a == mount {
			args[i] = dir
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 0 && code != 1 {
		t.Fatalf("etcdbench %q: exit code %d (0 or 1 wanted: a verdict)\n%s", args, code, log.String())
	}
	rec := extractResult(log.String())
	var r struct {
		Schema string `json:"schema"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(rec), &r); err != nil {
		t.Fatalf("no result record in the log: %v\n%s", err, log.String())
	}
	if r.Schema != "etcdbench.result/v1" || r.Status == "" {
		t.Errorf("result record: schema %q, status %q", r.Schema, r.Status)
	}
}

// extractResult is run.sh's and the doc's sed -n '/^{$/,/^}$/p'.
func extractResult(log string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.SplitAfter(log, "\n") {
		if strings.TrimSuffix(line, "\n") == "{" {
			in = true
		}
		if in {
			b.WriteString(line)
		}
		if in && strings.TrimSuffix(line, "\n") == "}" {
			in = false
		}
	}
	return b.String()
}
