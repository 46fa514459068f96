package observe

import (
	"fmt"
	"strings"
)

// Target is one /metrics endpoint and the name its figures carry.
type Target struct {
	// Name prefixes the figures, e.g. "member0".
	Name string
	URL  string
	// About says what the figures cover, for the notes.
	About string
}

// EmbeddedTargets returns what to scrape for an embedded cluster, given
// its members' /metrics URLs in member order (etcdcluster's
// Cluster.MetricsURLs): one target per member, named member0, member1...
// Three members run in processes of their own, so each target covers
// only its member.
func EmbeddedTargets(urls []string) []Target {
	if len(urls) == 1 {
		return []Target{{Name: "member0", URL: urls[0], About: "the embedded member"}}
	}
	ts := make([]Target, len(urls))
	for i, u := range urls {
		ts[i] = Target{Name: fmt.Sprintf("member%d", i), URL: u, About: fmt.Sprintf("embedded member %d (its own process)", i)}
	}
	return ts
}

// ExternalTargets returns a target per client endpoint, named member0,
// member1... in the order given; an endpoint without a scheme gets http://
// (WithScheme).
func ExternalTargets(endpoints []string) []Target {
	ts := make([]Target, len(endpoints))
	for i, ep := range endpoints {
		u, _ := withScheme(strings.TrimSuffix(ep, "/"), false) // no error without TLS
		ts[i] = Target{Name: fmt.Sprintf("member%d", i), URL: u + "/metrics", About: "the member at " + ep}
	}
	return ts
}

// PlainHTTPError is a plain http:// URL where TLS is on.
type PlainHTTPError struct{ URL string }

func (e *PlainHTTPError) Error() string { return e.URL + " is plain HTTP but TLS is on" }

// WithScheme is the one place a URL gets its scheme: each URL without one
// gets https:// when tls is set and http:// otherwise ("" stays ""). With
// tls, a plain http:// URL is a *PlainHTTPError.
func WithScheme(urls []string, tls bool) ([]string, error) {
	out := make([]string, len(urls))
	for i, u := range urls {
		var err error
		if out[i], err = withScheme(u, tls); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func withScheme(u string, tls bool) (string, error) {
	switch {
	case tls && strings.HasPrefix(u, "http://"):
		return "", &PlainHTTPError{URL: u}
	case u == "" || strings.Contains(u, "://"):
		return u, nil
	case tls:
		return "https://" + u, nil
	}
	return "http://" + u, nil
}
