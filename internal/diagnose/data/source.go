package data

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"etcdbench/internal/diagnose/data/cost"
	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/run"
	"etcdbench/internal/walfile"
)

// ErrNoDB is returned for a data dir without member/snap/db.
var ErrNoDB = errors.New("no etcd database here")

// findDB is the db and WAL directory of a data dir (or its member dir).
func findDB(dir string) (db, wal string, err error) {
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return "", "", fmt.Errorf("--data-dir %s: %w", dir, err)
	case !st.IsDir():
		return "", "", fmt.Errorf("--data-dir %s is not a directory (a db file or a snapshot goes to --snapshot)", dir)
	}
	for _, member := range []string{filepath.Join(dir, "member"), dir} {
		p := filepath.Join(member, "snap", "db")
		if _, err := os.Stat(p); err == nil {
			return p, filepath.Join(member, "wal"), nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", "", err
		}
	}
	return "", "", fmt.Errorf("--data-dir %s: %w: neither member/snap/db nor snap/db is there; give etcd's --data-dir", dir, ErrNoDB)
}

// walSince is the WAL a restart reads, in entry records' bytes and
// entries: all of it (every segment, decoded once to find the valid
// snapshots), the part after the last snapshot record (replayed), and
// the part ReadAll decodes to replay it: every entry from the start of
// the segment that holds the last snapshot record (wal.Open selects
// segments by their first index, then ReadAll decodes and skips the
// entries up to the snapshot). A data dir without a WAL gives zeros.
func walSince(dir string) (all, since, replay cost.WAL, err error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	if err != nil || len(names) == 0 {
		return all, since, replay, err
	}
	for _, n := range names { // sorted by Glob: segment names sort in order
		b, err := os.ReadFile(n) // read-only, no lock
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return all, since, replay, err
		}
		var segment cost.WAL
		walfile.DecodeSegment(b, func(r walfile.Record) {
			switch r.Type {
			case walfile.SnapshotType:
				since, replay = cost.WAL{}, segment
			case walfile.EntryType:
				for _, w := range []*cost.WAL{&all, &since, &replay, &segment} {
					w.Bytes += r.Frame.Size()
					w.Entries++
				}
			}
		})
	}
	return all, since, replay, nil
}

// live is what a live member says of itself beside its snapshot: its
// quota and its resident memory (0: it did not say).
type live struct{ quota, resident int64 }

// online streams a snapshot of the first endpoint's member into a
// scratch directory under cfg.Dir, after checking it has room for the
// member's db, and returns the run (whose Close removes it), the file
// and what the member says of itself.
func online(ctx context.Context, cfg Config) (*run.Run, string, live, error) {
	ep := cfg.Endpoints[0]
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, TLS: cfg.TLS, DialTimeout: cfg.Timeout, Logger: zap.NewNop(), Context: ctx})
	if err != nil {
		return nil, "", live{}, fmt.Errorf("%s: %w", ep, err)
	}
	defer cli.Close()
	sctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	st, err := cli.Status(sctx, ep)
	cancel()
	if err != nil {
		return nil, "", live{}, fmt.Errorf("%s did not answer its status: %w", ep, err)
	}
	// The snapshot is the db's pages up to their high-water mark, and
	// a hash; a little more keeps the filesystem from filling.
	need := st.DbSize + st.DbSize/10 + 1<<20
	r, err := run.Open(cfg.Dir, need, fmt.Sprintf("the snapshot of %s needs %d MiB: give --dir on a filesystem with room", ep, need>>20), cfg.Args)
	if err != nil {
		return nil, "", live{}, err
	}
	path := r.Scratch.File("snapshot.db")
	if err := save(ctx, cli, path); err != nil {
		var none error
		r.Close(&none)
		return nil, "", live{}, fmt.Errorf("streaming the snapshot of %s: %w", ep, err)
	}
	lv := liveOf(ctx, cfg, ep)
	if lv.quota == 0 {
		lv.quota = st.DbSizeQuota
	}
	return r, path, lv, nil
}

// save writes the member's snapshot stream to path.
func save(ctx context.Context, cli *clientv3.Client, path string) error {
	rc, err := cli.Snapshot(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// liveOf is the member's --quota-backend-bytes and resident memory from
// its /metrics (etcd_server_quota_backend_bytes, etcd 3.4 and later;
// process_resident_memory_bytes), 0 for what it does not say.
func liveOf(ctx context.Context, cfg Config, ep string) live {
	if cfg.HTTP == nil {
		return live{}
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	f, err := metrics.Scrape(ctx, cfg.HTTP, strings.TrimSuffix(ep, "/")+"/metrics")
	if err != nil {
		return live{}
	}
	var lv live
	if v, err := metrics.ValueOf(f, "etcd_server_quota_backend_bytes"); err == nil {
		lv.quota = int64(v)
	}
	if v, err := metrics.ValueOf(f, "process_resident_memory_bytes"); err == nil {
		lv.resident = int64(v)
	}
	return lv
}

// DefaultTimeout bounds each call to the member (the snapshot stream
// excepted): etcdctl's --command-timeout.
const DefaultTimeout = 5 * time.Second
