package data

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/scratch"
	"etcdbench/internal/testutil"
	"etcdbench/internal/testutil/hostetcd"
	"etcdbench/internal/testutil/kubedata"
	"etcdbench/internal/testutil/loopmount"
)

// snapshotDir is every file under dir with its bytes' hash and mtime.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		v := st.ModTime().String() + " " + st.Mode().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + hashOf(b)
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return string(h[:])
}

func sameDir(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Errorf("%d files before, %d after", len(before), len(after))
	}
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s changed", p)
		}
	}
}

// TestDataDirReadOnly analyses a stopped embedded member's data dir
// through Run: the figures agree with etcd's and bbolt's, the rules find
// the culprits kubedata wrote, and nothing in the data dir changed.
func TestDataDirReadOnly(t *testing.T) {
	cfg := kubedata.Small()
	f := fillEmbedded(t, cfg)
	before := snapshotDir(t, f.dataDir)
	th := DefaultThresholds()
	th.FragmentedMin.Limit = 0
	res, err := Run(context.Background(), Config{DataDir: f.dataDir, Thresholds: &th, Args: []string{"test"}})
	if err != nil {
		t.Fatal(err)
	}
	// Predictions probe --dir; inside the data dir they are refused.
	_, err = Run(context.Background(), Config{DataDir: f.dataDir, Dir: filepath.Join(f.dataDir, "member"), Predict: true})
	if !run.IsUsage(err) || !strings.Contains(err.Error(), "inside --data-dir") {
		t.Errorf("--dir inside --data-dir: %v", err)
	}
	sameDir(t, before, snapshotDir(t, f.dataDir))
	d := res.Workloads[0].Data
	if d.Source != "data-dir" || d.Keys == 0 {
		t.Fatalf("data %+v", d)
	}
	fired := map[string]bool{}
	for _, v := range res.Workloads[0].Verdicts {
		fired[v.Check] = true
	}
	var all, events int64
	for _, r := range d.Resources {
		all += r.BytesAllRevisions
		if r.Resource == "events" {
			events = r.BytesAllRevisions
		}
	}
	for rule, want := range map[string]bool{
		"helm-history":     cfg.HelmRevisions > int(th.HelmRevisions.Limit),
		"events-dominate":  float64(events)/float64(all) >= th.EventsShare.Limit,
		"key-rewritten":    float64(d.TopKeys[0].Revisions) >= th.HotKey.Limit,
		"db-fragmentation": float64(d.DB.InUseBytes)/float64(d.DB.SizeBytes) < th.Fragmentation.Limit,
	} {
		if fired[rule] != want {
			t.Errorf("%s fired %v, want %v: %+v", rule, fired[rule], want, res.Workloads[0].Verdicts)
		}
	}
	// A compaction keeps each key's revision at it, then every write.
	if want := int64(cfg.NodeLeaseWrites/cfg.Nodes/2 + 1); d.TopKeys[0].Revisions != want {
		t.Errorf("top key %+v: each node lease was written %d times after the compaction", d.TopKeys[0], want-1)
	}
	if d.Tombstones != int64(cfg.PodDeletes) {
		t.Errorf("%d tombstones, %d pods deleted after the compaction", d.Tombstones, cfg.PodDeletes)
	}
}

// TestHostEtcd34 writes the key space through Debian's etcd 3.4 as a
// process of its own: a running member's data dir is refused in one
// line naming --endpoints and --snapshot (and left as it was); online,
// its snapshot is streamed into a scratch directory that is gone
// afterwards, its quota read from /metrics, and the figures agree with
// its own counts, its status and bbolt's; stopped, its data dir gives
// the same figures.
func TestHostEtcd34(t *testing.T) {
	if _, err := os.Stat("/usr/bin/etcd"); err != nil {
		testutil.Missing(t, "Debian's etcd (apt-get install etcd-server)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dataDir := t.TempDir()
	e := hostetcd.Start(t, "data34", dataDir, "--quota-backend-bytes", "4294967296", "--unsafe-no-fsync")
	cli := e.Client(t)
	defer cli.Close()
	cfg := kubedata.Small()
	w, err := kubedata.Write(ctx, cli, cfg)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := countPrefixes(ctx, cli, prefixesOf(cfg))
	if err != nil {
		t.Fatal(err)
	}

	// The member commits its last writes on its own (every 100 ms at
	// most); once its db has held still for a second, the refusal must
	// leave it so.
	snap := filepath.Join(dataDir, "member", "snap")
	testutil.WaitFor(t, 30*time.Second, "the member's db to hold still", func() bool {
		st, err := os.Stat(filepath.Join(snap, "db"))
		return err == nil && time.Since(st.ModTime()) > time.Second
	})
	before := snapshotDir(t, snap)
	_, err = Run(ctx, Config{DataDir: dataDir})
	if !errors.Is(err, ErrLocked) || !run.IsUsage(err) || !strings.Contains(err.Error(), "--endpoints") || !strings.Contains(err.Error(), "--snapshot") {
		t.Errorf("a running member's data dir: %v", err)
	}
	sameDir(t, before, snapshotDir(t, snap))

	dir := t.TempDir()
	res, err := Run(ctx, Config{Endpoints: []string{e.Endpoint}, HTTP: etcdload.HTTPClient(nil), Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, scratch.Prefix+"*")); len(left) > 0 {
		t.Errorf("scratch left behind: %v", left)
	}
	st, err := cli.Status(ctx, e.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Workloads[0].Data
	checkData(t, d, counts, w)
	if d.DB.QuotaBytes != 4294967296 {
		t.Errorf("quota %d, etcd runs with 4 GiB", d.DB.QuotaBytes)
	}
	if d.DB.SizeBytes != st.DbSize {
		t.Errorf("db size %d, etcd's status %d", d.DB.SizeBytes, st.DbSize)
	}
	// etcd's in use counts the pages its last commits freed but still
	// holds for open reads (bbolt's pending pages) as in use; the
	// snapshot's freelist, rebuilt from the pages reachable, frees them.
	if diff := st.DbSizeInUse - d.DB.InUseBytes; diff < 0 || diff > 64*d.DB.PageSize {
		t.Errorf("in use %d, etcd's status %d", d.DB.InUseBytes, st.DbSizeInUse)
	}

	e.Stop()
	res, err = Run(ctx, Config{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	checkData(t, res.Workloads[0].Data, counts, w)
}

// checkData holds a result's figures to etcd's count-only answers.
func checkData(t *testing.T, d *result.Data, counts map[string]int64, w kubedata.Written) {
	t.Helper()
	got := map[string]result.DataResource{}
	for _, r := range d.Resources {
		got[r.Prefix] = r
	}
	for p, n := range counts {
		if n == 0 || got[p].Keys != n {
			t.Errorf("%s: %d live keys, etcd counts %d", p, got[p].Keys, n)
		}
	}
	if d.DB.Revision != w.Revision || d.DB.CompactedRevision != w.CompactRevision {
		t.Errorf("revision %d compacted %d, etcd said %d and %d", d.DB.Revision, d.DB.CompactedRevision, w.Revision, w.CompactRevision)
	}
	if d.Leases.Count != int64(w.Leases) || d.Leases.KeysAttached == 0 {
		t.Errorf("leases %+v, %d granted", d.Leases, w.Leases)
	}
}

// TestBadInput: each bad source is one line, a usage error, and writes
// nothing.
func TestBadInput(t *testing.T) {
	f := fillEmbedded(t, kubedata.Config{Pods: 200, Namespaces: 2, Seed: 2})
	db := filepath.Join(f.dataDir, "member", "snap", "db")
	good, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	corrupt := append([]byte(nil), good...)
	for i := 4 * 4096; i < len(corrupt); i++ {
		corrupt[i] = 0xa5
	}
	noDB := t.TempDir()
	for _, tc := range []struct {
		name string
		cfg  Config
		want error
	}{
		{"not a db", Config{Snapshot: write("text", []byte(strings.Repeat("not an etcd db\n", 1000)))}, ErrNotDB},
		{"empty", Config{Snapshot: write("empty", nil)}, ErrNotDB},
		{"truncated", Config{Snapshot: write("truncated", good[:len(good)/2])}, ErrCorrupt},
		{"corrupt pages", Config{Snapshot: write("corrupt", corrupt)}, ErrCorrupt},
		{"no db in the data dir", Config{DataDir: noDB}, ErrNoDB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshotDir(t, dir)
			_, err := Run(context.Background(), tc.cfg)
			if !errors.Is(err, tc.want) || !run.IsUsage(err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want one line of %v", err, tc.want)
			}
			sameDir(t, before, snapshotDir(t, dir))
		})
	}
}

// TestOnlineNoSpace: a --dir too small for the member's db is refused
// before a byte of the snapshot is written.
func TestOnlineNoSpace(t *testing.T) {
	if _, err := os.Stat("/usr/bin/etcd"); err != nil {
		testutil.Missing(t, "Debian's etcd (apt-get install etcd-server)")
	}
	small := loopmount.Tmpfs(t, 256<<10)
	e := hostetcd.Start(t, "nospace", "", "--unsafe-no-fsync")
	cli := e.Client(t)
	defer cli.Close()
	ctx := context.Background()
	if _, err := kubedata.Write(ctx, cli, kubedata.Config{ConfigMaps: 200, ValueBytes: 4096, Namespaces: 1, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	_, err := Run(ctx, Config{Endpoints: []string{e.Endpoint}, Dir: small})
	if !errors.Is(err, scratch.ErrNoSpace) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v, want one line of %v", err, scratch.ErrNoSpace)
	}
	if ents, _ := os.ReadDir(small); len(ents) > 0 {
		t.Errorf("written under --dir: %v", ents)
	}
	_ = clientv3.WithPrefix // the client is the member's, closed above
}
