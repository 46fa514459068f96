package data

import (
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"os"
	"runtime/debug"
	"sort"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/encoding/protowire"
)

// Sentinel errors of opening a db, each one line with what to do.
var (
	// ErrLocked: another process (a running member) holds the db.
	ErrLocked = errors.New("the db is locked by a running etcd: analyse a live member with --endpoints URL, or a saved snapshot with --snapshot FILE (etcdctl snapshot save)")
	// ErrNotDB: the file is not a bbolt database.
	ErrNotDB = errors.New("not an etcd database (bbolt)")
	// ErrCorrupt: a bbolt database whose pages cannot all be read.
	ErrCorrupt = errors.New("a truncated or corrupt etcd database")
	// ErrNotEtcd: a bbolt database without etcd's key bucket.
	ErrNotEtcd = errors.New("a bbolt database without etcd's key bucket")
)

// Defaults of the analysis.
const (
	// DefaultTop is how many keys each top list holds.
	DefaultTop = 10
	// MaxGroups bounds the prefixes counted apart; keys of further
	// prefixes are counted under otherKeys (and a note says so).
	MaxGroups = 10000
	// lockTimeout is how long opening waits for a lock a running member
	// holds: etcd never lets go, so a short wait tells.
	lockTimeout = 500 * time.Millisecond
)

// Resource is what one prefix holds.
type Resource struct {
	Prefix, Name string
	// Keys live at the latest revision and their bytes (key + value).
	Keys, Bytes int64
	// Revisions kept since the last compaction (tombstones included)
	// and their bytes.
	Revisions, BytesAllRevisions int64
}

// Key is one key of a top list.
type Key struct {
	Key string
	// Revisions kept of it since the last compaction; Bytes at its
	// latest (key + value; 0 when deleted).
	Revisions, Bytes int64
}

// Leases are the lease bucket and the keys attached to leases.
type Leases struct {
	Count, KeysAttached int64
	// The TTLs' spread, in seconds.
	TTLMin, TTLMedian, TTLMax int64
}

// DB is the file and bbolt's view of it.
type DB struct {
	// FileBytes is the file's size; SizeBytes the pages bbolt uses up to
	// its high-water mark (what etcd reports as its db size).
	FileBytes, SizeBytes int64
	// InUseBytes are SizeBytes less the free pages (etcd's in use),
	// FreeBytes the free pages, as bbolt's freelist counts them.
	InUseBytes, FreeBytes, FreePages, PageSize int64
	// Fill is the bytes used over the bytes allocated in the buckets'
	// pages.
	Fill float64
	// Revision is the store's revision; CompactedRevision the revision
	// compacted at (scheduled; FinishedCompaction the one done).
	Revision, CompactedRevision, FinishedCompaction int64
	ConsistentIndex                                 uint64
	// Quota is the member's --quota-backend-bytes (0: not known).
	Quota int64
}

// Helm is the Helm 3 release history among the Secrets.
type Helm struct {
	Releases int
	// Secrets and Bytes of every release's revisions, live.
	Secrets, Bytes int64
	// Most is the release keeping the most revisions, and how many.
	Most          string
	MostRevisions int
}

// Analysis is what a db holds.
type Analysis struct {
	Resources                 []Resource // by bytes of all revisions, largest first
	TopByRevisions, TopBySize []Key
	Leases                    Leases
	DB                        DB
	Helm                      Helm
	// Keys live, Revisions kept, Tombstones among them.
	Keys, Revisions, Tombstones int64
	Notes                       []string
	Duration                    time.Duration
}

// keyState is what the scan keeps per key: bounded, no key bytes.
type keyState struct {
	revs, bytes, group uint32
	dead, leased       bool
}

// Analyze opens the bbolt file at path read-only (nothing in it is
// written, and its lock is shared) and streams its buckets. top is the
// length of the top lists (0: DefaultTop). A db a running member holds
// fails with ErrLocked, a file that is no db with ErrNotDB or ErrNotEtcd,
// one whose pages are cut off or damaged with ErrCorrupt.
func Analyze(ctx context.Context, path string, top int) (a *Analysis, err error) {
	start := time.Now()
	if top <= 0 {
		top = DefaultTop
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file", path, ErrNotDB)
	}
	if st.Size() < 2*1024 { // two meta pages at the smallest page size; an empty file would be initialised
		return nil, fmt.Errorf("%s: %w: %d bytes", path, ErrNotDB, st.Size())
	}
	if ok, err := hasMagic(path); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%s: %w: no bbolt meta page at its start", path, ErrNotDB)
	}
	// Pages past the end of a truncated file fault when read: a panic
	// then, turned into ErrCorrupt, instead of a crash; bbolt's own
	// assertions on a damaged page panic too.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			a, err = nil, fmt.Errorf("%s: %w: %v", path, ErrCorrupt, r)
		}
	}()
	// Every page is read on this goroutine, where a damaged one is
	// recovered from (a freelist rebuilt on opening would be read on a
	// goroutine of bbolt's).
	db, err := open(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	defer trim(db, st.Size())()
	a = &Analysis{}
	a.DB.FileBytes = st.Size()
	err = db.View(func(tx *bolt.Tx) error {
		if tx.Size() > st.Size() {
			return fmt.Errorf("%s: %w: its meta page counts %d bytes, the file has %d", path, ErrCorrupt, tx.Size(), st.Size())
		}
		a.DB.SizeBytes = tx.Size()
		a.DB.PageSize = int64(db.Info().PageSize)
		kb := tx.Bucket([]byte("key"))
		if kb == nil {
			return fmt.Errorf("%s: %w", path, ErrNotEtcd)
		}
		s := newScan(top)
		if err := s.keys(ctx, kb); err != nil {
			return err
		}
		s.finish(ctx, kb, a)
		a.Leases.Count, a.Leases.TTLMin, a.Leases.TTLMedian, a.Leases.TTLMax = leases(tx.Bucket([]byte("lease")))
		a.DB.CompactedRevision, a.DB.FinishedCompaction, a.DB.ConsistentIndex = meta(tx.Bucket([]byte("meta")))
		a.DB.Revision = max(s.lastRev, a.DB.CompactedRevision, 1) // an empty store is at revision 1, as etcd starts it
		// The root bucket's statistics count every page of every bucket,
		// its own included; the rest of the pages up to the high-water
		// mark, but the two meta pages, are free. etcd does not store
		// the freelist (NoFreelistSync), so this is what bbolt's own
		// rebuild of it counts, without a second walk on a goroutine of
		// bbolt's.
		bs := tx.Cursor().Bucket().Stats()
		used := int64(bs.BranchPageN + bs.BranchOverflowN + bs.LeafPageN + bs.LeafOverflowN)
		a.DB.FreePages = max(tx.Size()/a.DB.PageSize-2-used, 0)
		if alloc := bs.BranchAlloc + bs.LeafAlloc; alloc > 0 {
			a.DB.Fill = float64(bs.BranchInuse+bs.LeafInuse) / float64(alloc)
		}
		return nil
	})
	if err == nil {
		err = ctx.Err() // the top lists' names are read under it too
	}
	if err != nil {
		return nil, err
	}
	a.DB.FreeBytes = a.DB.FreePages * a.DB.PageSize
	a.DB.InUseBytes = a.DB.SizeBytes - a.DB.FreeBytes
	a.Duration = time.Since(start)
	return a, nil
}

// trimEvery is how often the pages of the db read so far are dropped
// from this process' mapping.
const trimEvery = 5 * time.Millisecond

// trim drops the db's mapped pages from this process every trimEvery
// until the returned function is called: the analysis reads each page
// about once, and without it every page read stays mapped, so a 1 GB db
// would cost 1 GB of resident memory. The mapping is read-only and
// shared, so a page read again is mapped again from the page cache.
func trim(db *bolt.DB, size int64) (stop func()) {
	data := db.Info().Data
	done := make(chan struct{})
	finished := make(chan struct{})
	drop := func() { _, _, _ = unix.Syscall(unix.SYS_MADVISE, data, uintptr(size), unix.MADV_DONTNEED) }
	go func() {
		defer close(finished)
		t := time.NewTicker(trimEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				drop()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// boltMagic starts every bbolt meta page's meta, after the 16-byte page
// header (bbolt internal/common/types.go).
const boltMagic = 0xED0CDAED

// hasMagic says whether either meta page (the second one at a 4 KiB page
// size, the usual) carries bbolt's magic: a damaged db still has one, a
// file of anything else has none.
func hasMagic(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var b [4]byte
	for _, off := range []int64{16, 4096 + 16} {
		if _, err := f.ReadAt(b[:], off); err == nil && binary.LittleEndian.Uint32(b[:]) == boltMagic {
			return true, nil
		}
	}
	return false, nil
}

// open opens the db read-only; a lock held by a running member is
// ErrLocked.
func open(path string) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: lockTimeout})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("%s: %w", path, ErrLocked)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch), errors.Is(err, berrors.ErrChecksum):
		return nil, fmt.Errorf("%s: %w: %v", path, ErrNotDB, err)
	case err != nil:
		return nil, fmt.Errorf("%s: %w: %v", path, ErrCorrupt, err)
	}
	return db, nil
}

// scan is one pass over the key bucket: per key a keyState by the key's
// hash, per prefix a group.
type scan struct {
	top     int
	seed    maphash.Seed
	state   map[uint64]keyState
	groups  []Resource
	byName  map[string]uint32
	other   uint32 // index of otherKeys' group, or noGroup
	lastRev int64
	revs    int64
	tombs   int64
	capped  bool
	// helm is the release of each Helm release Secret's key, by hash.
	helm map[uint64]string
}

const noGroup = math.MaxUint32

func newScan(top int) *scan {
	return &scan{top: top, seed: maphash.MakeSeed(), state: map[uint64]keyState{}, byName: map[string]uint32{}, other: noGroup, helm: map[uint64]string{}}
}

// kv is the part of an mvccpb.KeyValue the analysis reads, parsed in
// place.
type kv struct {
	key   []byte
	value int
	lease bool
}

// parseKV reads mvccpb.KeyValue's key (1), value (5) and lease (6)
// fields without unmarshalling the message.
func parseKV(b []byte) (kv, error) {
	var out kv
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return out, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return out, protowire.ParseError(n)
			}
			switch num {
			case 1:
				out.key = v
			case 5:
				out.value = len(v)
			}
			b = b[n:]
		case typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return out, protowire.ParseError(n)
			}
			if num == 6 && v != 0 {
				out.lease = true
			}
			b = b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return out, protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return out, nil
}

// revision is the main revision of a key bucket's key (8 bytes big
// endian, '_', 8 bytes of sub revision, 't' for a tombstone).
func revision(k []byte) (int64, bool, bool) {
	if len(k) < 17 || k[8] != '_' {
		return 0, false, false
	}
	return int64(binary.BigEndian.Uint64(k)), len(k) == 18 && k[17] == 't', true
}

func (s *scan) groupOf(prefix []byte) uint32 {
	if i, ok := s.byName[string(prefix)]; ok { // no allocation for the lookup
		return i
	}
	if prefix == nil || len(s.groups) >= MaxGroups {
		s.capped = s.capped || prefix != nil
		if s.other == noGroup {
			s.other = uint32(len(s.groups))
			s.groups = append(s.groups, Resource{Prefix: "", Name: otherKeys})
		}
		return s.other
	}
	p := string(prefix)
	i := uint32(len(s.groups))
	s.groups = append(s.groups, Resource{Prefix: p, Name: ResourceName(p)})
	s.byName[p] = i
	return i
}

// keys streams the key bucket in revision order.
func (s *scan) keys(ctx context.Context, kb *bolt.Bucket) error {
	c := kb.Cursor()
	n := 0
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if n++; n&0xffff == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		rev, tomb, ok := revision(k)
		if !ok {
			return fmt.Errorf("%w: key bucket entry %x is not a revision", ErrCorrupt, k)
		}
		e, err := parseKV(v)
		if err != nil {
			return fmt.Errorf("%w: revision %d is not a key-value: %v", ErrCorrupt, rev, err)
		}
		s.lastRev = max(s.lastRev, rev)
		s.revs++
		size := len(e.key)
		if !tomb {
			size += e.value
		} else {
			s.tombs++
		}
		h := maphash.Bytes(s.seed, e.key)
		st, seen := s.state[h]
		if !seen {
			st.group = s.groupOf(PrefixOf(e.key))
			if rel, _, ok := HelmRelease(e.key); ok {
				s.helm[h] = rel
			}
		}
		st.revs++
		st.bytes, st.dead, st.leased = uint32(size), tomb, e.lease && !tomb
		s.state[h] = st
		g := &s.groups[st.group]
		g.Revisions++
		g.BytesAllRevisions += int64(size)
	}
	return nil
}

// finish sums the live keys per group, fills the top lists (a second
// pass finds their names) and the Helm history.
func (s *scan) finish(ctx context.Context, kb *bolt.Bucket, a *Analysis) {
	byRevs, bySize := &topHeap{}, &topHeap{}
	for h, st := range s.state {
		if !st.dead {
			g := &s.groups[st.group]
			g.Keys++
			g.Bytes += int64(st.bytes)
			a.Keys++
			if st.leased {
				a.Leases.KeysAttached++
			}
			byRevs.offer(s.top, topEntry{h, int64(st.revs), int64(st.bytes)}, int64(st.revs))
			bySize.offer(s.top, topEntry{h, int64(st.revs), int64(st.bytes)}, int64(st.bytes))
		} else {
			byRevs.offer(s.top, topEntry{h, int64(st.revs), 0}, int64(st.revs))
		}
	}
	want := map[uint64]string{}
	for _, e := range append(append([]topEntry{}, byRevs.items...), bySize.items...) {
		want[e.hash] = ""
	}
	missing := len(want)
	c := kb.Cursor()
	for k, v := c.First(); k != nil && missing > 0 && ctx.Err() == nil; k, v = c.Next() {
		e, err := parseKV(v)
		if err != nil {
			continue
		}
		h := maphash.Bytes(s.seed, e.key)
		if name, ok := want[h]; ok && name == "" {
			want[h] = string(e.key)
			missing--
		}
	}
	releases := map[string]int{}
	for h, rel := range s.helm {
		if st := s.state[h]; !st.dead {
			releases[rel]++
			a.Helm.Secrets++
			a.Helm.Bytes += int64(st.bytes)
		}
	}
	a.Helm.Releases = len(releases)
	for rel, n := range releases {
		if n > a.Helm.MostRevisions || n == a.Helm.MostRevisions && rel < a.Helm.Most {
			a.Helm.Most, a.Helm.MostRevisions = rel, n
		}
	}
	a.TopByRevisions = byRevs.sorted(want)
	a.TopBySize = bySize.sorted(want)
	a.Revisions, a.Tombstones = s.revs, s.tombs
	a.Resources = s.groups
	sort.SliceStable(a.Resources, func(i, j int) bool { return a.Resources[i].BytesAllRevisions > a.Resources[j].BytesAllRevisions })
	if s.capped {
		a.Notes = append(a.Notes, fmt.Sprintf("more than %d prefixes: keys of the further ones are counted under %s", MaxGroups, otherKeys))
	}
}

// topEntry is a key in a top list, by its hash until its name is found.
type topEntry struct {
	hash             uint64
	revisions, bytes int64
}

// topHeap keeps the k largest entries by a score: a min-heap, its least
// at the root.
type topHeap struct {
	items  []topEntry
	scores []int64
}

func (t *topHeap) Len() int           { return len(t.items) }
func (t *topHeap) Less(i, j int) bool { return t.scores[i] < t.scores[j] }
func (t *topHeap) Swap(i, j int) {
	t.items[i], t.items[j] = t.items[j], t.items[i]
	t.scores[i], t.scores[j] = t.scores[j], t.scores[i]
}
func (t *topHeap) Push(x any) { panic("unused") }
func (t *topHeap) Pop() any   { panic("unused") }

func (t *topHeap) offer(k int, e topEntry, score int64) {
	if len(t.items) < k {
		t.items, t.scores = append(t.items, e), append(t.scores, score)
		if len(t.items) == k {
			heap.Init(t)
		}
		return
	}
	if score > t.scores[0] {
		t.items[0], t.scores[0] = e, score
		heap.Fix(t, 0)
	}
}

// sorted is the list, largest first, named from names.
func (t *topHeap) sorted(names map[uint64]string) []Key {
	idx := make([]int, len(t.items))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return t.scores[idx[a]] > t.scores[idx[b]] })
	out := make([]Key, 0, len(idx))
	for _, i := range idx {
		e := t.items[i]
		out = append(out, Key{Key: names[e.hash], Revisions: e.revisions, Bytes: e.bytes})
	}
	return out
}

// leases counts the lease bucket (leasepb.Lease: ID 1, TTL 2) and the
// spread of the TTLs in seconds.
func leases(b *bolt.Bucket) (n, minTTL, median, maxTTL int64) {
	if b == nil {
		return 0, 0, 0, 0
	}
	h := hdr.New(1, 10*365*24*3600, 3)
	minTTL = math.MaxInt64
	_ = b.ForEach(func(_, v []byte) error {
		n++
		for len(v) > 0 {
			num, typ, l := protowire.ConsumeTag(v)
			if l < 0 {
				return nil
			}
			v = v[l:]
			if num == 2 && typ == protowire.VarintType {
				ttl, l := protowire.ConsumeVarint(v)
				if l < 0 {
					return nil
				}
				_ = h.RecordValue(max(int64(ttl), 1))
				minTTL, maxTTL = min(minTTL, int64(ttl)), max(maxTTL, int64(ttl))
				v = v[l:]
				continue
			}
			l = protowire.ConsumeFieldValue(num, typ, v)
			if l < 0 {
				return nil
			}
			v = v[l:]
		}
		return nil
	})
	if h.TotalCount() == 0 {
		return n, 0, 0, 0
	}
	return n, minTTL, min(max(h.ValueAtQuantile(50), minTTL), maxTTL), maxTTL
}

// meta reads the meta bucket: the compaction revisions (a revision key:
// 8 bytes of main revision first) and the consistent index.
func meta(b *bolt.Bucket) (scheduled, finished int64, index uint64) {
	if b == nil {
		return 0, 0, 0
	}
	rev := func(name string) int64 {
		if v := b.Get([]byte(name)); len(v) >= 8 {
			return int64(binary.BigEndian.Uint64(v))
		}
		return 0
	}
	if v := b.Get([]byte("consistent_index")); len(v) == 8 {
		index = binary.BigEndian.Uint64(v)
	}
	return rev("scheduledCompactRev"), rev("finishedCompactRev"), index
}
