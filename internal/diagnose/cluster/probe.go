package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"etcdbench/internal/stats"
)

// Why a member did not answer; the exit code tells a wrong endpoint
// (WrongEndpoint, TLSMismatch: bad input) from a member that is down.
const (
	NotAnswering  = "not-answering"
	Down          = "down"
	WrongEndpoint = "not-etcd"
	TLSMismatch   = "tls"
)

// probe is what one endpoint answered.
type probe struct {
	endpoint string
	// failure is empty when the member answered; else one of the
	// reasons above, and reason says it in words.
	failure, reason string
	version         serverVersion
	status          *clientv3.StatusResponse
	members         []*pb.Member
	alarms          []*pb.AlarmMember
	serializable    *hdr.Histogram
	linearizable    *hdr.Histogram
	notes           []string
	hash            *clientv3.HashKVResponse
	cli             *clientv3.Client
	// ownSlow counts its reads that took slowApply or longer: the member
	// may count each as a slow apply (ownSlowApplies).
	ownSlow int
}

// serverVersion is etcd's answer to GET /version.
type serverVersion struct {
	Server  string `json:"etcdserver"`
	Cluster string `json:"etcdcluster"`
}

// probeKey is the key the reads ask for: it need not exist, a read of a
// missing key costs what a small read costs.
const probeKey = "/etcdbench-diagnose-read-probe"

// classify asks the endpoint GET /version within timeout and says why it
// is not an etcd that answers, or returns its version.
func classify(ctx context.Context, client *http.Client, endpoint string, timeout time.Duration) (serverVersion, string, string) {
	var v serverVersion
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(endpoint, "/")+"/version", nil)
	if err != nil {
		return v, WrongEndpoint, fmt.Sprintf("%q is not a URL: %v", endpoint, err)
	}
	resp, err := client.Do(req)
	if err != nil && strings.HasPrefix(endpoint, "http://") && errors.Is(err, io.EOF) {
		// etcd's client port with TLS closes a plain HTTP request's
		// connection without a word.
		return v, TLSMismatch, "TLS mismatch: it closed the connection at a plain HTTP request, as a member that serves TLS does; give https:// (and --cacert) to reach it"
	}
	if err != nil {
		f, r := failureOf(ctx, err, timeout)
		return v, f, r
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode == http.StatusBadRequest && strings.Contains(string(body), "HTTPS server") {
		return v, TLSMismatch, "TLS mismatch: it serves TLS; give https:// (and --cacert) to reach it"
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &v) != nil || v.Server == "" {
		return v, WrongEndpoint, fmt.Sprintf("not etcd: GET /version answered %s without etcd's {\"etcdserver\":...}; is this a member's client URL (--advertise-client-urls)?", resp.Status)
	}
	return v, "", ""
}

// failureOf says why a request to a member failed.
func failureOf(ctx context.Context, err error, timeout time.Duration) (string, string) {
	var rec tls.RecordHeaderError
	var unknown x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	var hostname x509.HostnameError
	switch {
	case errors.As(err, &rec):
		return TLSMismatch, "TLS mismatch: it speaks plain HTTP, not TLS; give http:// (and no TLS flags) for it"
	case errors.As(err, &unknown), errors.As(err, &verify), errors.As(err, &hostname):
		return TLSMismatch, fmt.Sprintf("TLS: its certificate is not accepted (%v); give the CA that signed it with --cacert", errors.Unwrap(err))
	case strings.Contains(err.Error(), "tls:"):
		return TLSMismatch, fmt.Sprintf("TLS handshake failed: %v (does it want a client certificate: --cert, --key?)", err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return Down, "down: connection refused (no process listens there)"
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return NotAnswering, fmt.Sprintf("not answering within %v (frozen, partitioned or overloaded)", timeout)
	}
	return Down, fmt.Sprintf("cannot reach it: %v", err)
}

// connect makes the endpoint's own client.
func connect(endpoint string, tc *tls.Config, timeout time.Duration) (*clientv3.Client, error) {
	cfg := clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: timeout, Logger: zap.NewNop()}
	if strings.HasPrefix(endpoint, "https://") {
		cfg.TLS = tc
		if cfg.TLS == nil {
			cfg.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
		}
	}
	return clientv3.New(cfg)
}

// ask runs one call with the per-member deadline.
func ask[T any](ctx context.Context, timeout time.Duration, call func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return call(ctx)
}

// run asks one member everything but its hash: its version, status,
// member list, alarms and reads. A member that fails the first calls is
// not answering; one that fails later ones keeps what it answered, with
// a note.
func (p *probe) run(ctx context.Context, cfg Config) {
	p.version, p.failure, p.reason = classify(ctx, cfg.HTTP, p.endpoint, cfg.Timeout)
	if p.failure != "" {
		return
	}
	cli, err := connect(p.endpoint, cfg.TLS, cfg.Timeout)
	if err != nil {
		p.failure, p.reason = failureOf(ctx, err, cfg.Timeout)
		return
	}
	p.cli = cli
	st, err := ask(ctx, cfg.Timeout, func(c context.Context) (*clientv3.StatusResponse, error) { return cli.Status(c, p.endpoint) })
	if err != nil {
		p.failure, p.reason = failureOf(ctx, err, cfg.Timeout)
		p.reason += " (its status)"
		return
	}
	p.status = st
	// The serializable list is the member's own view, which is what is
	// compared; a linearizable one would fail without a quorum.
	if ml, err := ask(ctx, cfg.Timeout, func(c context.Context) (*clientv3.MemberListResponse, error) {
		return cli.MemberList(c, clientv3.WithSerializable())
	}); err == nil {
		p.members = ml.Members
	} else {
		p.notes = append(p.notes, fmt.Sprintf("member list: %v", err))
	}
	if al, err := ask(ctx, cfg.Timeout, cli.AlarmList); err == nil {
		p.alarms = al.Alarms
	} else {
		p.notes = append(p.notes, fmt.Sprintf("alarm list: %v", err))
	}
	p.serializable = p.reads(ctx, cfg, "serializable", clientv3.WithSerializable())
	if st.IsLearner {
		p.notes = append(p.notes, "a learner serves no linearizable reads: only serializable ones were timed")
		return
	}
	p.linearizable = p.reads(ctx, cfg, "linearizable")
}

// reads times up to cfg.Reads small reads, all within one deadline; a
// series cut short keeps what it measured, with a note.
func (p *probe) reads(ctx context.Context, cfg Config, kind string, opts ...clientv3.OpOption) *hdr.Histogram {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	opts = append(opts, clientv3.WithLimit(1))
	get := func() (time.Duration, error) {
		t0 := time.Now()
		_, err := p.cli.Get(ctx, probeKey, opts...)
		took := time.Since(t0)
		if took >= slowApply {
			p.ownSlow++
		}
		return took, err
	}
	// One read before the clock: the connection is made, not timed.
	if _, err := get(); err != nil {
		p.notes = append(p.notes, fmt.Sprintf("%s reads: %v", kind, err))
		return nil
	}
	h := stats.NewLatencyHistogram()
	for range cfg.Reads {
		took, err := get()
		if err != nil {
			why := err.Error()
			if ctx.Err() != nil {
				why = "the rest were still waiting when the budget ended"
			}
			p.notes = append(p.notes, fmt.Sprintf("%s reads: %d of %d within the budget of %v (%s); the figures are of those done", kind, h.TotalCount(), cfg.Reads, cfg.Timeout, why))
			break
		}
		stats.Record(h, took)
	}
	return h
}

// hashAt asks the member for the hash of its key space at rev.
func (p *probe) hashAt(ctx context.Context, timeout time.Duration, rev int64) {
	h, err := ask(ctx, timeout, func(c context.Context) (*clientv3.HashKVResponse, error) { return p.cli.HashKV(c, p.endpoint, rev) })
	if err != nil {
		p.notes = append(p.notes, fmt.Sprintf("hash of the key space at revision %d: %v", rev, err))
		return
	}
	p.hash = h
}
