package exporter

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	corev1 "k8s.io/api/core/v1"

	"etcdbench/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite "+profileFile+" from the container runtime's default profile on this machine")

const (
	// profileFile is the exporter's Localhost seccomp profile; the
	// DaemonSet names it relative to the kubelet's seccomp directory,
	// where docs/exporter.md installs it under this name.
	profileFile = "etcdbench-exporter-seccomp.json"
	// runtimeDefault is the default profile containers/common ships
	// (Debian 12: golang-github-containers-common 0.50.1), the one podman
	// and CRI-O apply for RuntimeDefault.
	runtimeDefault = "/usr/share/containers/seccomp.json"
	// sourceFile records the package and version runtimeDefault came
	// from when profileFile was made ("PACKAGE VERSION", dpkg's words):
	// another version's default is not expected to give the same profile.
	sourceFile = "etcdbench-exporter-seccomp.source"
)

// The profile is the runtime's default for the exporter's container on
// these architectures (the Dockerfile's platforms), plus these syscalls:
// containers/common allows them only with CAP_SYS_ADMIN, which the
// exporter does not have (moby's default allows them with CAP_BPF and
// CAP_PERFMON).
var (
	profileArches = []string{"amd64", "arm64"}
	extraSyscalls = []string{"bpf", "perf_event_open"}
	// nativeArch is libseccomp's name of each GOARCH, as archMap lists it.
	nativeArch = map[string]string{"amd64": "SCMP_ARCH_X86_64", "arm64": "SCMP_ARCH_AARCH64"}
)

// sourceProfile is the profile format of containers/common and moby:
// rules conditional on the container's capabilities and architecture.
type sourceProfile struct {
	DefaultAction   string   `json:"defaultAction"`
	DefaultErrnoRet *uint    `json:"defaultErrnoRet"`
	DefaultErrno    string   `json:"defaultErrno"`
	Architectures   []string `json:"architectures"`
	ArchMap         []struct {
		Architecture     string   `json:"architecture"`
		SubArchitectures []string `json:"subArchitectures"`
	} `json:"archMap"`
	Syscalls []sourceRule `json:"syscalls"`
}

type sourceRule struct {
	Names    []string                `json:"names"`
	Name     string                  `json:"name"`
	Action   string                  `json:"action"`
	Args     []specs.LinuxSeccompArg `json:"args"`
	Comment  string                  `json:"comment"`
	ErrnoRet *uint                   `json:"errnoRet"`
	Errno    string                  `json:"errno"`
	Includes ruleFilter              `json:"includes"`
	Excludes ruleFilter              `json:"excludes"`
}

type ruleFilter struct {
	Caps      []string `json:"caps"`
	Arches    []string `json:"arches"`
	MinKernel string   `json:"minKernel"`
}

// flatProfile is what the shipped profile holds: the OCI runtime spec's
// LinuxSeccomp, the only format containerd reads for a Localhost profile
// (it ignores includes and excludes), and one podman, CRI-O and docker
// read as well.
type flatProfile = specs.LinuxSeccomp

// flatten applies the source's conditions for a container with the
// capabilities caps on the architectures arches, as the runtime does when
// it applies its default: a rule is kept when the container has every
// capability it includes and none it excludes, and when it includes one
// of the architectures (or names none) and excludes none of them.
// Conditions the flat format cannot keep (a minimum kernel) are errors.
func flatten(src sourceProfile, caps, arches []string) (flatProfile, error) {
	out := flatProfile{DefaultAction: specs.LinuxSeccompAction(src.DefaultAction), DefaultErrnoRet: src.DefaultErrnoRet}
	if len(src.Architectures) > 0 {
		return out, errors.New("the source lists architectures, not an archMap: flatten it by hand")
	}
	for _, a := range arches {
		i := slices.IndexFunc(src.ArchMap, func(m struct {
			Architecture     string   `json:"architecture"`
			SubArchitectures []string `json:"subArchitectures"`
		}) bool {
			return m.Architecture == nativeArch[a]
		})
		if i < 0 {
			return out, fmt.Errorf("architecture %s (%s) is not in the source's archMap", a, nativeArch[a])
		}
		out.Architectures = append(out.Architectures, specs.Arch(src.ArchMap[i].Architecture))
		for _, s := range src.ArchMap[i].SubArchitectures {
			out.Architectures = append(out.Architectures, specs.Arch(s))
		}
	}
	has := func(set, of []string) (all, any bool) {
		all = true
		for _, x := range of {
			if slices.Contains(set, x) {
				any = true
			} else {
				all = false
			}
		}
		return all, any
	}
	for i, r := range src.Syscalls {
		if r.Includes.MinKernel != "" || r.Excludes.MinKernel != "" {
			return out, fmt.Errorf("rule %d (%v): a minKernel condition has no flat form", i, r.Names)
		}
		if r.Name != "" || r.Errno != "" && r.ErrnoRet == nil {
			return out, fmt.Errorf("rule %d (%v): an old-style name or an errno without errnoRet", i, r.Names)
		}
		if all, _ := has(caps, r.Includes.Caps); !all {
			continue
		}
		if _, any := has(caps, r.Excludes.Caps); any {
			continue
		}
		if _, any := has(r.Includes.Arches, arches); len(r.Includes.Arches) > 0 && !any {
			continue
		}
		if _, any := has(r.Excludes.Arches, arches); any {
			continue
		}
		out.Syscalls = append(out.Syscalls, specs.LinuxSyscall{Names: slices.Clone(r.Names), Action: specs.LinuxSeccompAction(r.Action), ErrnoRet: r.ErrnoRet, Args: r.Args})
	}
	return out, nil
}

// allow takes names out of every rule of p (a rule left with no name
// goes) and allows them unconditionally in one rule at the end.
func allow(p flatProfile, names []string) flatProfile {
	var rules []specs.LinuxSyscall
	for _, r := range p.Syscalls {
		r.Names = slices.DeleteFunc(slices.Clone(r.Names), func(n string) bool { return slices.Contains(names, n) })
		if len(r.Names) > 0 {
			rules = append(rules, r)
		}
	}
	p.Syscalls = append(rules, specs.LinuxSyscall{Names: names, Action: specs.ActAllow})
	return p
}

// exporterProfile makes the shipped profile from the runtime's default
// and the capabilities the DaemonSet gives the exporter.
func exporterProfile(defaultJSON []byte, caps []string) ([]byte, error) {
	var src sourceProfile
	if err := json.Unmarshal(defaultJSON, &src); err != nil {
		return nil, fmt.Errorf("the default profile: %w", err)
	}
	flat, err := flatten(src, caps, profileArches)
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(allow(flat, extraSyscalls), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// containerCaps are the exporter container's capabilities as the runtime
// names them: drop ALL, then the added ones.
func containerCaps(t *testing.T) []string {
	t.Helper()
	ds, _, _ := load(t)
	c := ds.Spec.Template.Spec.Containers[0].SecurityContext.Capabilities
	if !slices.Equal(c.Drop, []corev1.Capability{"ALL"}) {
		t.Fatalf("capabilities drop %v: the profile is made for drop ALL", c.Drop)
	}
	var caps []string
	for _, a := range c.Add {
		caps = append(caps, "CAP_"+string(a))
	}
	return caps
}

// installedSource is the package owning runtimeDefault and its
// installed version, as dpkg names them ("PACKAGE VERSION").
func installedSource() (string, error) {
	out, err := exec.Command("dpkg-query", "-S", runtimeDefault).Output()
	if err != nil {
		return "", fmt.Errorf("dpkg-query -S %s: %w", runtimeDefault, err)
	}
	pkg, _, ok := strings.Cut(strings.TrimSpace(string(out)), ":")
	if !ok || strings.Contains(pkg, ",") {
		return "", fmt.Errorf("dpkg-query -S %s: %q: not one package", runtimeDefault, out)
	}
	v, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", pkg).Output()
	if err != nil {
		return "", fmt.Errorf("dpkg-query -W %s: %w", pkg, err)
	}
	return pkg + " " + strings.TrimSpace(string(v)), nil
}

// TestSeccompProfile: the shipped profile is what exporterProfile makes
// of this machine's default profile; -update rewrites it and records the
// default's package version in sourceFile. With another version
// installed (a Debian update of containers-common), or one dpkg cannot
// name, the test skips: regenerate with -update and review the
// difference. Without the default profile it skips (fails under CI=true).
func TestSeccompProfile(t *testing.T) {
	def, err := os.ReadFile(runtimeDefault)
	if err != nil {
		testutil.Missing(t, "no runtime default profile to compare with (%v): install podman's containers-common (Debian: apt-get install podman)", err)
	}
	want, err := exporterProfile(def, containerCaps(t))
	if err != nil {
		t.Fatal(err)
	}
	installed, err := installedSource()
	if *update {
		if err != nil {
			t.Fatalf("cannot record which version of %s the profile is made from: %v", runtimeDefault, err)
		}
		if err := os.WriteFile(profileFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sourceFile, []byte(installed+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	recorded, rerr := os.ReadFile(sourceFile)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if err != nil {
		t.Skipf("%s was made from %s; which version this machine's %s is cannot be told (%v): not compared; regenerate with -update on a machine where dpkg knows it", profileFile, strings.TrimSpace(string(recorded)), runtimeDefault, err)
	}
	if r := strings.TrimSpace(string(recorded)); r != installed {
		t.Skipf("%s was made from %s, this machine has %s: not compared; regenerate with go test ./deploy/kubernetes/exporter -run TestSeccompProfile -update and review the difference", profileFile, r, installed)
	}
	got, err := os.ReadFile(profileFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not %s for the exporter's capabilities plus %v: run go test ./deploy/kubernetes/exporter -run TestSeccompProfile -update and review the difference", profileFile, runtimeDefault, extraSyscalls)
	}
}

// TestSeccompProfileShape holds without the runtime's default: the
// profile decodes strictly as the OCI runtime spec's LinuxSeccomp (what
// containerd reads), denies by default, and bpf and perf_event_open are
// allowed by one unconditional rule and named by no other.
func TestSeccompProfileShape(t *testing.T) {
	b, err := os.ReadFile(profileFile)
	if err != nil {
		t.Fatal(err)
	}
	var p specs.LinuxSeccomp
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("%s is not an OCI LinuxSeccomp: %v", profileFile, err)
	}
	if p.DefaultAction != specs.ActErrno {
		t.Errorf("defaultAction %s, want SCMP_ACT_ERRNO (deny what is not listed)", p.DefaultAction)
	}
	for _, a := range []specs.Arch{specs.ArchX86_64, specs.ArchAARCH64} {
		if !slices.Contains(p.Architectures, a) {
			t.Errorf("architectures %v lack %s", p.Architectures, a)
		}
	}
	var allowing int
	for i, r := range p.Syscalls {
		for _, n := range extraSyscalls {
			if !slices.Contains(r.Names, n) {
				continue
			}
			if r.Action != specs.ActAllow || len(r.Args) > 0 || !slices.Equal(r.Names, extraSyscalls) {
				t.Errorf("rule %d names %s: %+v; want it only in the last rule, allowed without condition", i, n, r)
			}
		}
		if slices.Equal(r.Names, extraSyscalls) {
			allowing++
		}
	}
	if allowing != 1 {
		t.Errorf("%d rules allow %v, want 1", allowing, extraSyscalls)
	}
}

// TestFlatten: the runtime's conditions applied to a small profile.
func TestFlatten(t *testing.T) {
	const src = `{"defaultAction":"SCMP_ACT_ERRNO","defaultErrnoRet":38,
	"archMap":[{"architecture":"SCMP_ARCH_X86_64","subArchitectures":["SCMP_ARCH_X86","SCMP_ARCH_X32"]},{"architecture":"SCMP_ARCH_AARCH64","subArchitectures":["SCMP_ARCH_ARM"]},{"architecture":"SCMP_ARCH_S390X","subArchitectures":["SCMP_ARCH_S390"]}],
	"syscalls":[
	{"names":["read","write"],"action":"SCMP_ACT_ALLOW"},
	{"names":["bpf","setns"],"action":"SCMP_ACT_ALLOW","includes":{"caps":["CAP_SYS_ADMIN"]}},
	{"names":["bpf","setns"],"action":"SCMP_ACT_ERRNO","errnoRet":1,"excludes":{"caps":["CAP_SYS_ADMIN"]}},
	{"names":["kcmp"],"action":"SCMP_ACT_ALLOW","includes":{"caps":["CAP_SYS_PTRACE"]}},
	{"names":["arch_prctl"],"action":"SCMP_ACT_ALLOW","includes":{"arches":["amd64","x32"]}},
	{"names":["s390_runtime_instr"],"action":"SCMP_ACT_ALLOW","includes":{"arches":["s390x"]}},
	{"names":["clone"],"action":"SCMP_ACT_ALLOW","args":[{"index":0,"value":2114060288,"op":"SCMP_CMP_MASKED_EQ"}],"excludes":{"arches":["s390x"]}}
	]}`
	got, err := exporterProfile([]byte(src), []string{"CAP_BPF", "CAP_SYS_PTRACE"})
	if err != nil {
		t.Fatal(err)
	}
	var p specs.LinuxSeccomp
	if err := json.Unmarshal(got, &p); err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, r := range p.Syscalls {
		rules = append(rules, fmt.Sprintf("%s %s", strings.Join(r.Names, ","), r.Action))
	}
	want := []string{
		"read,write SCMP_ACT_ALLOW",
		"setns SCMP_ACT_ERRNO",      // no CAP_SYS_ADMIN: still refused
		"kcmp SCMP_ACT_ALLOW",       // CAP_SYS_PTRACE held
		"arch_prctl SCMP_ACT_ALLOW", // amd64 is a target
		"clone SCMP_ACT_ALLOW",      // s390x is not
		"bpf,perf_event_open SCMP_ACT_ALLOW",
	}
	if !slices.Equal(rules, want) {
		t.Errorf("rules\n%q\nwant\n%q", rules, want)
	}
	if !slices.Equal(p.Architectures, []specs.Arch{"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"}) {
		t.Errorf("architectures %v", p.Architectures)
	}
	if p.DefaultErrnoRet == nil || *p.DefaultErrnoRet != 38 || p.Syscalls[1].ErrnoRet == nil || *p.Syscalls[1].ErrnoRet != 1 {
		t.Errorf("errno values lost: %+v", p)
	}
	for _, bad := range []string{
		`{"archMap":[{"architecture":"SCMP_ARCH_X86_64"},{"architecture":"SCMP_ARCH_AARCH64"}],"syscalls":[{"names":["ptrace"],"action":"SCMP_ACT_ALLOW","includes":{"minKernel":"4.8"}}]}`,
		`{"archMap":[{"architecture":"SCMP_ARCH_X86_64"}],"syscalls":[]}`,
		`{"architectures":["SCMP_ARCH_X86_64"],"syscalls":[]}`,
	} {
		if _, err := exporterProfile([]byte(bad), nil); err == nil {
			t.Errorf("no error for %s", bad)
		}
	}
}
