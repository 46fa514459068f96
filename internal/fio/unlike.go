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

// walSizeFactor is how far (either way) a block size may be from
// WALWriteSize before it is called unlike etcd's writes.
const walSizeFactor = 4

// syncEngines are the ioengines that issue write() and fdatasync() one at a
// time from the calling thread, like etcd's WAL.
var syncEngines = map[string]bool{"": true, "sync": true, "psync": true, "vsync": true, "pvsync": true, "pvsync2": true}

// unlikeRule is one way a fio job can differ from etcd's WAL: given the
// effective options, it returns what differs and why it matters, or "".
type unlikeRule func(opts map[string]string) string

var unlikeRules = []unlikeRule{
	func(o map[string]string) string {
		if isTrue(o["direct"]) || o["buffered"] == "0" {
			return "direct=1: O_DIRECT bypasses the page cache, while etcd's WAL writes go through it (buffered write(), then fdatasync()); the flush then has less to do and the figures differ"
		}
		return ""
	},
	func(o map[string]string) string {
		if e := o["ioengine"]; !syncEngines[e] {
			return fmt.Sprintf("ioengine=%s: asynchronous submission, while etcd's WAL calls write() and fdatasync() one after the other from one goroutine", e)
		}
		return ""
	},
	func(o map[string]string) string {
		if d, err := strconv.Atoi(o["iodepth"]); err == nil && d > 1 && !syncEngines[o["ioengine"]] {
			return fmt.Sprintf("iodepth=%d: several writes in flight at once; etcd's WAL has one", d)
		}
		return ""
	},
	func(o map[string]string) string {
		rw := o["rw"]
		if rw == "" {
			rw = o["readwrite"]
		}
		if rw != "" && !strings.HasPrefix(rw, "write") {
			return fmt.Sprintf("rw=%s: etcd's WAL only appends, sequentially (rw=write)", rw)
		}
		return ""
	},
	func(o map[string]string) string {
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
	func(o map[string]string) string {
		if s := o["sync"]; s != "" && s != "0" && s != "none" {
			return fmt.Sprintf("sync=%s: every write is synchronous (O_SYNC/O_DSYNC), unlike etcd's write() followed by one fdatasync()", s)
		}
		return ""
	},
	func(o map[string]string) string {
		bs := o["bs"]
		if bs == "" {
			bs = o["blocksize"]
		}
		if bs == "" {
			if o["bssplit"] != "" || o["bsrange"] != "" {
				return "bssplit/bsrange: mixed write sizes; the WAL is usually judged with one size near " + strconv.Itoa(WALWriteSize) + " bytes"
			}
			return fmt.Sprintf("no bs option: fio writes 4 KiB blocks; etcd's WAL batches are typically about %d bytes (the recipe's bs=%d)", WALWriteSize, WALWriteSize)
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
			return ""
		}
		if n*walSizeFactor < WALWriteSize || n > WALWriteSize*walSizeFactor {
			return fmt.Sprintf("bs=%s: far from the ~%d-byte writes of etcd's WAL; a fdatasync after a large write moves more data, after a tiny one less", bs, WALWriteSize)
		}
		return ""
	},
	func(o map[string]string) string {
		if f := o["filename"]; strings.HasPrefix(f, "/dev/") {
			return "filename=" + f + ": writes a block device directly, without the filesystem (and its journal) etcd's WAL file lives on"
		}
		return ""
	},
}

// Unlike lists how a group's options make its result unlike etcd's WAL,
// each with the reason, once each, in a stable order.
func Unlike(g *Group) []string {
	seen := map[string]bool{}
	var out []string
	for _, opts := range g.AllOptions {
		for _, r := range unlikeRules {
			if s := r(opts); s != "" && !seen[s] {
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
