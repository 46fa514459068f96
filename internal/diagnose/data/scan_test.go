package data

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/internal/testutil/kubedata"
)

// filled is an embedded etcd's data dir filled with kubedata.Small, the
// member stopped, with etcd's own counts taken before it stopped.
type filled struct {
	dataDir string
	// counts are etcd's count-only answers per resource prefix.
	counts  map[string]int64
	status  *clientv3.StatusResponse
	written kubedata.Written
}

// fillEmbedded writes cfg through a real embedded etcd and stops it,
// asking etcd for its counts and status before.
func fillEmbedded(t *testing.T, cfg kubedata.Config) filled {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var f filled
	var err error
	f.dataDir, f.written, err = kubedata.Embedded(ctx, t.TempDir(), cfg, func(cli *clientv3.Client, ep string) error {
		var err error
		if f.counts, err = countPrefixes(ctx, cli, prefixesOf(cfg)); err != nil {
			return err
		}
		f.status, err = cli.Status(ctx, ep)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// prefixesOf are the resource prefixes cfg writes.
func prefixesOf(cfg kubedata.Config) []string {
	return []string{"/registry/minions/", "/registry/pods/", "/registry/events/", "/registry/configmaps/",
		"/registry/secrets/", "/registry/leases/", "/registry/" + kubedata.CRGroup + "/" + kubedata.CRResource + "/"}
}

// countPrefixes asks etcd how many keys live under each prefix.
func countPrefixes(ctx context.Context, cli *clientv3.Client, prefixes []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, p := range prefixes {
		r, err := cli.Get(ctx, p, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			return nil, err
		}
		out[p] = r.Count
	}
	return out, nil
}

// checkAgainstEtcd holds an analysis to etcd's own counts and to bbolt's
// own statistics of the same file.
func checkAgainstEtcd(t *testing.T, a *Analysis, f filled, dbPath string) {
	t.Helper()
	got := map[string]Resource{}
	for _, r := range a.Resources {
		got[r.Prefix] = r
	}
	for p, n := range f.counts {
		if n == 0 {
			t.Errorf("etcd counts no key under %s: the generator wrote none", p)
		}
		if got[p].Keys != n {
			t.Errorf("%s: %d live keys, etcd counts %d", p, got[p].Keys, n)
		}
		if r := got[p]; r.Revisions < r.Keys || r.BytesAllRevisions < r.Bytes || r.Bytes <= 0 {
			t.Errorf("%s: inconsistent %+v", p, r)
		}
	}
	if a.DB.Revision != f.status.Header.Revision {
		t.Errorf("revision %d, etcd says %d", a.DB.Revision, f.status.Header.Revision)
	}
	if a.DB.CompactedRevision != f.written.CompactRevision {
		t.Errorf("compacted revision %d, compacted at %d", a.DB.CompactedRevision, f.written.CompactRevision)
	}
	db, err := bolt.Open(dbPath, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second, PreLoadFreelist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_ = db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket([]byte("key")).Stats().KeyN; int64(n) != a.Revisions {
			t.Errorf("%d revisions, bbolt's key bucket holds %d", a.Revisions, n)
		}
		if n := tx.Bucket([]byte("lease")).Stats().KeyN; int64(n) != a.Leases.Count {
			t.Errorf("%d leases, bbolt's lease bucket holds %d", a.Leases.Count, n)
		}
		if tx.Size() != a.DB.SizeBytes {
			t.Errorf("size %d, bbolt's %d", a.DB.SizeBytes, tx.Size())
		}
		return nil
	})
	if free := int64(db.Stats().FreePageN) * a.DB.PageSize; free != a.DB.FreeBytes {
		t.Errorf("%d bytes free, bbolt's freelist %d", a.DB.FreeBytes, free)
	}
}

func TestAnalyzeEmbedded(t *testing.T) {
	cfg := kubedata.Small()
	f := fillEmbedded(t, cfg)
	path := filepath.Join(f.dataDir, "member", "snap", "db")
	a, err := Analyze(context.Background(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstEtcd(t, a, f, path)
	t.Logf("%+v", a)
}
