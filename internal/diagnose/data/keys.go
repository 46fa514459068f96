package data

import (
	"bytes"
	"strconv"
	"strings"
)

// registry is kube-apiserver's default etcd prefix (--etcd-prefix).
const registry = "/registry/"

// otherKeys names the group of keys that fit no prefix (no leading
// slash, or no second one); it is also where keys go once MaxGroups
// groups exist.
const otherKeys = "(other keys)"

// PrefixOf is the prefix a key is grouped under, a prefix of key itself:
// kube-apiserver's /registry/<resource>/ (/registry/<group>/<resource>/
// when the first segment is an API group, which has a dot: custom
// resources and aggregated APIs), /registry/ for a key directly under it,
// /<first segment>/ for other keys with two slashes, and nil for the rest
// (otherKeys). It is pure and allocates nothing, so the analysis calls
// it once per revision.
func PrefixOf(key []byte) []byte {
	if rest, ok := bytes.CutPrefix(key, []byte(registry)); ok {
		i := bytes.IndexByte(rest, '/')
		if i <= 0 {
			return key[:len(registry)]
		}
		seg := rest[:i]
		if bytes.IndexByte(seg, '.') >= 0 {
			if j := bytes.IndexByte(rest[i+1:], '/'); j > 0 {
				return key[:len(registry)+i+1+j+1]
			}
			return key[:len(registry)]
		}
		return key[:len(registry)+i+1]
	}
	if len(key) < 2 || key[0] != '/' {
		return nil
	}
	if i := bytes.IndexByte(key[1:], '/'); i > 0 {
		return key[:i+2]
	}
	return nil
}

// ResourceName is how a prefix of PrefixOf is shown: the resource of a
// /registry/ prefix ("pods", "widgets.example.com" as kubectl names a
// resource of a group), "(registry)" for /registry/ itself, the prefix
// of other keys, and otherKeys for none.
func ResourceName(prefix string) string {
	rest, ok := strings.CutPrefix(prefix, registry)
	switch {
	case prefix == "":
		return otherKeys
	case !ok:
		return prefix
	case rest == "":
		return "(registry)"
	}
	rest = strings.TrimSuffix(rest, "/")
	if group, res, ok := strings.Cut(rest, "/"); ok {
		return res + "." + group
	}
	return rest
}

// helmSecret is the part of a Helm 3 release Secret's name before the
// release's name.
const helmSecret = "sh.helm.release.v1."

// HelmRelease says whether key is a Helm 3 release Secret
// (/registry/secrets/<namespace>/sh.helm.release.v1.<release>.v<N>) and
// returns "<namespace>/<release>" and N. It is pure.
func HelmRelease(key []byte) (release string, revision int, ok bool) {
	rest, ok := bytes.CutPrefix(key, []byte(registry+"secrets/"))
	if !ok {
		return "", 0, false
	}
	ns, name, ok := bytes.Cut(rest, []byte("/"))
	if !ok || len(ns) == 0 {
		return "", 0, false
	}
	name, ok = bytes.CutPrefix(name, []byte(helmSecret))
	if !ok {
		return "", 0, false
	}
	i := bytes.LastIndex(name, []byte(".v"))
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(string(name[i+2:]))
	if err != nil || n <= 0 {
		return "", 0, false
	}
	return string(ns) + "/" + string(name[:i]), n, true
}
