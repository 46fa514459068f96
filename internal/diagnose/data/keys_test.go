package data

import (
	"bytes"
	"flag"
	"strconv"
	"strings"
	"testing"

	"etcdbench/internal/testutil"
)

func TestPrefixOf(t *testing.T) {
	for _, tc := range []struct{ key, prefix, name string }{
		{"/registry/pods/default/web-1", "/registry/pods/", "pods"},
		{"/registry/minions/node-1", "/registry/minions/", "minions"},
		{"/registry/example.com/widgets/ns/w", "/registry/example.com/widgets/", "widgets.example.com"},
		{"/registry/apiregistration.k8s.io/apiservices/v1.apps", "/registry/apiregistration.k8s.io/apiservices/", "apiservices.apiregistration.k8s.io"},
		{"/registry/example.com", "/registry/", "(registry)"},
		{"/registry/health", "/registry/", "(registry)"},
		{"/calico/ipam/v2/block", "/calico/", "/calico/"},
		{"/lonely", "", otherKeys},
		{"plain-key", "", otherKeys},
		{"", "", otherKeys},
	} {
		t.Run(tc.key, func(t *testing.T) {
			p := PrefixOf([]byte(tc.key))
			if string(p) != tc.prefix || ResourceName(string(p)) != tc.name {
				t.Errorf("PrefixOf(%q) = %q (%q), want %q (%q)", tc.key, p, ResourceName(string(p)), tc.prefix, tc.name)
			}
		})
	}
}

func TestHelmRelease(t *testing.T) {
	for _, tc := range []struct {
		key, release string
		rev          int
		ok           bool
	}{
		{"/registry/secrets/apps/sh.helm.release.v1.web.v12", "apps/web", 12, true},
		{"/registry/secrets/apps/sh.helm.release.v1.my.app.v3", "apps/my.app", 3, true},
		{"/registry/secrets/apps/sh.helm.release.v1.web.vx", "", 0, false},
		{"/registry/secrets/apps/token-1", "", 0, false},
		{"/registry/configmaps/apps/sh.helm.release.v1.web.v1", "", 0, false},
	} {
		rel, rev, ok := HelmRelease([]byte(tc.key))
		if rel != tc.release || rev != tc.rev || ok != tc.ok {
			t.Errorf("HelmRelease(%q) = %q %d %v", tc.key, rel, rev, ok)
		}
	}
}

// fuzzSeeds are the seed corpus of FuzzPrefixOf: kube-apiserver's key
// shapes and their edges.
var fuzzSeeds = []string{
	"/registry/pods/default/web-1", "/registry/example.com/widgets/ns/w", "/registry/", "/registry//x",
	"/registry/a.b/", "/registry/a.b//", "/a/", "//", "/", "", "/registry/secrets/ns/sh.helm.release.v1.x.v1",
	"/registry/secrets//sh.helm.release.v1..v0",
}

var update = flag.Bool("update", false, "rewrite the fuzz seeds")

// TestWriteFuzzSeeds writes the seed corpus under -update.
func TestWriteFuzzSeeds(t *testing.T) {
	if !*update {
		t.Skip("writes testdata/fuzz only with -update")
	}
	for i, s := range fuzzSeeds {
		testutil.WriteFuzzSeed(t, "FuzzPrefixOf", "seed"+strconv.Itoa(i), strconv.Quote(s), "[]byte")
	}
}

// FuzzPrefixOf: a key's prefix is a prefix of it, is its own prefix
// (so etcd's --prefix query on it counts the same group), names a
// resource, and the Helm parser never panics and names a Secret.
func FuzzPrefixOf(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, key []byte) {
		p := PrefixOf(key)
		if !bytes.HasPrefix(key, p) {
			t.Fatalf("PrefixOf(%q) = %q, not a prefix", key, p)
		}
		if p != nil && !bytes.Equal(PrefixOf(p), p) {
			t.Fatalf("PrefixOf(%q) = %q, whose own prefix is %q", key, p, PrefixOf(p))
		}
		if p != nil && (p[len(p)-1] != '/' || p[0] != '/') {
			t.Fatalf("PrefixOf(%q) = %q: a group must end in /", key, p)
		}
		if ResourceName(string(p)) == "" {
			t.Fatalf("no name for %q", p)
		}
		if rel, n, ok := HelmRelease(key); ok && (n <= 0 || !strings.Contains(rel, "/") || !bytes.HasPrefix(key, []byte("/registry/secrets/"))) {
			t.Fatalf("HelmRelease(%q) = %q %d", key, rel, n)
		}
	})
}

// TestGroupsBounded: past MaxGroups prefixes, further keys are counted
// under otherKeys, and the analysis says so.
func TestGroupsBounded(t *testing.T) {
	s := newScan(DefaultTop)
	for i := range MaxGroups + 10 {
		s.groupOf([]byte("/p" + strconv.Itoa(i) + "/"))
	}
	if len(s.groups) != MaxGroups+1 || s.groups[MaxGroups].Name != otherKeys || !s.capped {
		t.Fatalf("%d groups, the last %q, capped %v", len(s.groups), s.groups[len(s.groups)-1].Name, s.capped)
	}
	if s.groupOf([]byte("/p3/")) != 3 {
		t.Errorf("a prefix counted before the cap lost its group")
	}
}
