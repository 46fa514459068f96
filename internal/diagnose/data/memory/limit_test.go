package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseCgroup(t *testing.T) {
	for _, c := range []struct {
		name, in, path string
		v2, err        bool
	}{
		{"v1", "12:cpu,cpuacct:/a\n11:memory:/kubepods/pod1/etcd\n0::/x\n", "/kubepods/pod1/etcd", false, false},
		{"v1 combined", "4:memory,hugetlb:/m\n", "/m", false, false},
		{"v2", "0::/system.slice/etcd.service\n", "/system.slice/etcd.service", true, false},
		{"none", "3:cpu:/a\n", "", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, v2, err := ParseCgroup([]byte(c.in))
			if path != c.path || v2 != c.v2 || (err != nil) != c.err {
				t.Errorf("ParseCgroup: %q, v2 %v, %v", path, v2, err)
			}
		})
	}
}

func TestParseLimit(t *testing.T) {
	for in, want := range map[string]int64{"max\n": 0, "1073741824\n": 1 << 30, "9223372036854771712\n": 0} {
		if got, err := ParseLimit([]byte(in)); err != nil || got != want {
			t.Errorf("ParseLimit(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := ParseLimit([]byte("lots")); err == nil {
		t.Error("ParseLimit(lots): no error")
	}
}

func FuzzParseCgroup(f *testing.F) {
	f.Add([]byte("11:memory:/a\n0::/b\n"))
	f.Fuzz(func(t *testing.T, b []byte) { ParseCgroup(b) })
}

// LimitOf over fixture trees: a v1 limit, a v2 one, none (the machine's),
// one over the machine's, and an unreadable cgroup (the machine's, said).
func TestLimitOf(t *testing.T) {
	tree := func(t *testing.T, files map[string]string) string {
		root := t.TempDir()
		files["proc/meminfo"] = "MemTotal:        8000000 kB\n"
		for p, s := range files {
			full := filepath.Join(root, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	machine := int64(8000000) << 10
	for _, c := range []struct {
		name  string
		files map[string]string
		want  int64
		from  string
	}{
		{"v1", map[string]string{"proc/7/cgroup": "5:memory:/etcd\n", "sys/fs/cgroup/memory/etcd/memory.limit_in_bytes": "2147483648\n"}, 2 << 30, "cgroup v1"},
		{"v2", map[string]string{"proc/7/cgroup": "0::/etcd\n", "sys/fs/cgroup/etcd/memory.max": "1073741824\n"}, 1 << 30, "cgroup v2"},
		{"hybrid v2", map[string]string{"proc/7/cgroup": "0::/etcd\n", "sys/fs/cgroup/unified/etcd/memory.max": "1073741824\n"}, 1 << 30, "cgroup v2"},
		{"no limit", map[string]string{"proc/7/cgroup": "0::/etcd\n", "sys/fs/cgroup/etcd/memory.max": "max\n"}, machine, "sets none"},
		{"over the machine", map[string]string{"proc/7/cgroup": "5:memory:/etcd\n", "sys/fs/cgroup/memory/etcd/memory.limit_in_bytes": "99999999999999\n"}, machine, "allows more"},
		{"unreadable", map[string]string{"proc/7/cgroup": "5:memory:/etcd\n"}, 0, "unknown: the member's cgroup v1 memory.limit_in_bytes could not be read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := LimitOf(tree(t, c.files), 7)
			if l.Bytes != c.want || !strings.Contains(l.From, c.from) {
				t.Errorf("LimitOf: %d from %q, want %d from %q", l.Bytes, l.From, c.want, c.from)
			}
		})
	}
}

func TestParseVmRSS(t *testing.T) {
	if n, err := parseVmRSS([]byte("Name: etcd\nVmRSS:\t  529000 kB\n")); err != nil || n != 529000<<10 {
		t.Errorf("parseVmRSS: %d, %v", n, err)
	}
}

// The model over a probe's factors: a LIST's cost grows with its bytes,
// several at once with their count, a paginated one is a page's, and
// what fits is what the room holds.
func TestModel(t *testing.T) {
	p := Probe{PerByte: 1.5, PerByteConcurrent: 2, PagedPerByte: 3}
	if got := p.Full(100 << 20); got != 150<<20 {
		t.Errorf("Full: %d", got)
	}
	if got := p.Concurrent(100<<20, 4); got != 800<<20 {
		t.Errorf("Concurrent: %d", got)
	}
	if got := p.Paged(1000<<10, 1000); got != 3*500<<10 {
		t.Errorf("Paged: %d, want three pages' bytes of 500 objects", got)
	}
	if got := p.Paged(100<<10, 100); got != p.Full(100<<10) {
		t.Errorf("Paged of one page: %d, want a full LIST's %d", got, p.Full(100<<10))
	}
	if got := p.Paged(600<<10, 600); got != p.Full(600<<10) {
		t.Errorf("Paged of 1.2 pages at 3x a page: %d, want no more than a full LIST's %d", got, p.Full(600<<10))
	}
	for _, c := range []struct {
		idle, limit int64
		want        int
	}{{500 << 20, 600 << 20, 0}, {500 << 20, 700 << 20, 1}, {500 << 20, 1300 << 20, 4}, {900 << 20, 800 << 20, 0}} {
		if got := p.Fits(100<<20, c.idle, c.limit); got != c.want {
			t.Errorf("Fits(idle %d MiB, limit %d MiB) = %d, want %d", c.idle>>20, c.limit>>20, got, c.want)
		}
	}
}
