package fio

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"etcdbench/internal/units"
)

// WALWriteSize is the write size etcd's WAL is usually measured with: the
// average Kubernetes WAL entry batch the etcd fio recipe uses (bs=2300).
const WALWriteSize = 2300

// DefaultWALSize is the WAL batch size a fio job's bs is compared with when
// the user gives none.
var DefaultWALSize = WALSize{Bytes: WALWriteSize, Source: "the Kubernetes average of etcd's fio recipe, bs=2300; give the size your etcd writes with --wal-bs"}

// WALSize is the size of the WAL batches a fio job's bs is compared with,
// and where that size came from (said in the note).
type WALSize struct {
	Bytes  int64
	Source string
}

// fioDefaultBS is the block size fio writes when a job gives none.
const fioDefaultBS = 4096

// walSizeFactor is how far (either way) a block size may be from the WAL
// batch size before it is called unlike etcd's writes.
const walSizeFactor = 4

// syncEngines are the ioengines that issue write() and fdatasync() one at a
// time from the calling thread, like etcd's WAL.
var syncEngines = map[string]bool{"": true, "sync": true, "psync": true, "vsync": true, "pvsync": true, "pvsync2": true}

// unlikeRule is one way a fio job can differ from etcd's WAL: given the
// effective options and the WAL batch size to compare bs with, it returns
// what differs and why it matters, or "".
type unlikeRule func(opts map[string]string, wal WALSize) string

var unlikeRules = []unlikeRule{
	func(o map[string]string, _ WALSize) string {
		if isTrue(o["direct"]) || o["buffered"] == "0" {
			return "direct=1: O_DIRECT bypasses the page cache, while etcd's WAL writes go through it (buffered write(), then fdatasync()); the flush then has less to do and the figures differ"
		}
		return ""
	},
	func(o map[string]string, _ WALSize) string {
		if e := o["ioengine"]; !syncEngines[e] {
			return fmt.Sprintf("ioengine=%s: asynchronous submission, while etcd's WAL calls write() and fdatasync() one after the other from one goroutine", e)
		}
		return ""
	},
	func(o map[string]string, _ WALSize) string {
		if d, err := strconv.Atoi(o["iodepth"]); err == nil && d > 1 && !syncEngines[o["ioengine"]] {
			return fmt.Sprintf("iodepth=%d: several writes in flight at once; etcd's WAL has one", d)
		}
		return ""
	},
	func(o map[string]string, _ WALSize) string {
		rw := o["rw"]
		if rw == "" {
			rw = o["readwrite"]
		}
		if rw != "" && !strings.HasPrefix(rw, "write") {
			return fmt.Sprintf("rw=%s: etcd's WAL only appends, sequentially (rw=write)", rw)
		}
		return ""
	},
	func(o map[string]string, _ WALSize) string {
		if v, ok := o["fdatasync"]; ok {
			if n, err := strconv.Atoi(v); err == nil && n > 1 {
				return fmt.Sprintf("fdatasync=%d: one sync every %d writes; etcd syncs after every batch it writes (fdatasync=1)", n, n)
			}
			return ""
		}
		if v, ok := o["fsync"]; ok {
			if n, err := strconv.Atoi(v); err == nil && n > 1 {
				return fmt.Sprintf("fsync=%d: one fsync every %d writes; etcd calls fdatasync after every batch (fdatasync=1)", n, n)
			}
			return "fsync instead of fdatasync: fsync also writes the file's metadata, which etcd's fdatasync on a preallocated segment does not wait for"
		}
		return ""
	},
	func(o map[string]string, _ WALSize) string {
		if s := o["sync"]; s != "" && s != "0" && s != "none" {
			return fmt.Sprintf("sync=%s: every write is synchronous (O_SYNC/O_DSYNC), unlike etcd's write() followed by one fdatasync()", s)
		}
		return ""
	},
	func(o map[string]string, wal WALSize) string {
		if o["bssplit"] != "" || o["bsrange"] != "" {
			return fmt.Sprintf("bssplit/bsrange: mixed write sizes; etcd's WAL is judged with one size near its batches, here %d bytes (%s)", wal.Bytes, wal.Source)
		}
		// One rule for a bs given and fio's default: both are what fio wrote.
		n, given := BlockSize(o)
		if n <= 0 {
			return ""
		}
		if n*walSizeFactor >= wal.Bytes && n <= wal.Bytes*walSizeFactor {
			return ""
		}
		what := fmt.Sprintf("bs=%s", given)
		if given == "" {
			what = fmt.Sprintf("no bs option, so fio's default of %d bytes", n)
		}
		return fmt.Sprintf("%s: more than %dx away from the %d-byte WAL batches it is compared with (%s); a fdatasync after a large write moves more data, after a tiny one less", what, walSizeFactor, wal.Bytes, wal.Source)
	},
	func(o map[string]string, _ WALSize) string {
		if f := o["filename"]; strings.HasPrefix(f, "/dev/") {
			return "filename=" + f + ": writes a block device directly, without the filesystem (and its journal) etcd's WAL file lives on"
		}
		return ""
	},
}

// BlockSize is the size of the writes of a job with the effective options
// opts, in bytes, and the bs option it comes from ("" for fio's default of
// 4 KiB); 0 when the option does not parse (bssplit, a bs fio would refuse).
func BlockSize(opts map[string]string) (int64, string) {
	bs := opts["bs"]
	if bs == "" {
		bs = opts["blocksize"]
	}
	if bs == "" {
		if opts["bssplit"] != "" || opts["bsrange"] != "" {
			return 0, ""
		}
		return fioDefaultBS, ""
	}
	w := bs
	if i := strings.IndexByte(bs, ','); i >= 0 { // read,write[,trim]
		w = bs[i+1:]
		if j := strings.IndexByte(w, ','); j >= 0 {
			w = w[:j]
		}
	}
	n, err := units.ParseSize(w)
	if err != nil || n <= 0 {
		return 0, bs
	}
	return n, bs
}

// Unlike lists how a group's options make its result unlike etcd's WAL
// (with bs compared with wal), each with the reason, once each, in a
// stable order.
func Unlike(g *Group, wal WALSize) []string {
	seen := map[string]bool{}
	var out []string
	for _, opts := range g.AllOptions {
		for _, r := range unlikeRules {
			if s := r(opts, wal); s != "" && !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	if g.Writers > 1 {
		out = append(out, fmt.Sprintf("%d writers at once (numjobs or several jobs in one group): etcd has one WAL writer per member; the syncs of all writers share the disk, so the latencies are those of a busier disk", g.Writers))
	}
	return out
}

func isTrue(s string) bool { return s == "1" || s == "true" }

// Command rebuilds a fio command line from a job's name and effective
// options (a job file's section name is not among them), so a report says
// what was run even when the job file is gone.
func Command(name string, opts map[string]string) string {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if n, ok := opts["name"]; ok {
		name = n
	}
	parts := []string{"fio", "--name=" + name}
	for _, k := range keys {
		if k == "name" {
			continue
		}
		if opts[k] == "" {
			parts = append(parts, "--"+k)
		} else {
			parts = append(parts, "--"+k+"="+opts[k])
		}
	}
	return strings.Join(parts, " ")
}
