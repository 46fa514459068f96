package tune

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
)

// base is a valid configuration: etcd's defaults and a small put load.
func base(dir string) Config {
	l := etcdload.DefaultLoad(etcdload.OpPut)
	l.Clients, l.Total = 16, 300
	return Config{Dir: dir, Embedded: etcdcluster.Options{Members: 1}, Load: l}
}

func mustVary(t *testing.T, args ...string) []Vary {
	t.Helper()
	var vs []Vary
	for _, a := range args {
		v, err := ParseVary(a)
		if err != nil {
			t.Fatalf("ParseVary(%q): %v", a, err)
		}
		vs = append(vs, v)
	}
	return vs
}

func TestExpand(t *testing.T) {
	vs := mustVary(t, "snapshot-count=10000,100000", "heartbeat-interval=100,150ms", "clients=1,8")
	cs, err := Expand(base("."), vs)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, c := range cs {
		labels = append(labels, c.ID()+" "+c.Label())
	}
	want := []string{
		"c1 snapshot-count=10000 heartbeat-interval=100ms clients=1",
		"c2 snapshot-count=10000 heartbeat-interval=100ms clients=8",
		"c3 snapshot-count=10000 heartbeat-interval=150ms clients=1",
		"c4 snapshot-count=10000 heartbeat-interval=150ms clients=8",
		"c5 snapshot-count=100000 heartbeat-interval=100ms clients=1",
		"c6 snapshot-count=100000 heartbeat-interval=100ms clients=8",
		"c7 snapshot-count=100000 heartbeat-interval=150ms clients=1",
		"c8 snapshot-count=100000 heartbeat-interval=150ms clients=8",
	}
	if !reflect.DeepEqual(labels, want) {
		t.Fatalf("combinations:\n%s\nwant:\n%s", strings.Join(labels, "\n"), strings.Join(want, "\n"))
	}
	c := cs[6].Config
	if c.Embedded.SnapshotCount != 100000 || c.Embedded.HeartbeatInterval != 150*time.Millisecond || c.Load.Clients != 1 {
		t.Errorf("c7's config: %+v %+v, want snapshot 100000, heartbeat 150ms, 1 client", c.Embedded, c.Load)
	}
	if got := cs[0].Settings(); !reflect.DeepEqual(got, map[string]string{"snapshot-count": "10000", "heartbeat-interval": "100ms", "clients": "1"}) {
		t.Errorf("c1's settings %v", got)
	}
}

func TestExpandEverySetting(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	args := []string{
		"snapshot-count=5,10000", "heartbeat-interval=50ms", "election-timeout=1000,2s", "quota-backend-bytes=1g,4g",
		"backend-batch-interval=50ms,1", "backend-batch-limit=100,10000", "members=1,3", "dir=" + d1 + "," + d2,
		"clients=1,32", "conns=1,4", "val-size=8,4k",
	}
	cs, err := Expand(base(d1), mustVary(t, args...))
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1<<10 {
		t.Fatalf("%d combinations, want 1024", len(cs))
	}
	last := cs[len(cs)-1].Config
	want := Config{Dir: d2, Embedded: etcdcluster.Options{
		Members: 3, SnapshotCount: 10000, HeartbeatInterval: 50 * time.Millisecond, ElectionTimeout: 2 * time.Second,
		QuotaBackendBytes: 4 << 30, BackendBatchInterval: time.Second, BackendBatchLimit: 10000,
	}}
	if last.Dir != want.Dir || !reflect.DeepEqual(last.Embedded, want.Embedded) || last.Load.Clients != 32 || last.Load.Conns != 4 || last.Load.ValSize != 4096 {
		t.Errorf("last combination %+v %+v\nwant %+v, 32 clients, 4 conns, 4096-byte values", last.Dir, last.Embedded, want)
	}
}

func TestVaryRefused(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string // in the error
	}{
		{"no equals", []string{"snapshot-count"}, "want NAME=v1,v2"},
		{"unknown name", []string{"snapshot=1,2"}, `unknown setting "snapshot"`},
		{"empty list", []string{"snapshot-count="}, "no values"},
		{"empty value", []string{"snapshot-count=1,,2"}, "empty value"},
		{"trailing comma", []string{"snapshot-count=1,2,"}, "empty value"},
		{"duplicate value", []string{"heartbeat-interval=100,100ms"}, "same value"},
		{"duplicate name", []string{"snapshot-count=1,2", "snapshot-count=3"}, "varied twice"},
		{"one combination", []string{"snapshot-count=10000"}, "at least two combinations"},
		{"snapshot 0", []string{"snapshot-count=0,10"}, "snapshot-count=0"},
		{"heartbeat 0", []string{"heartbeat-interval=0,100"}, "heartbeat-interval must be >0"},
		{"heartbeat fraction", []string{"heartbeat-interval=1500us,100"}, "whole milliseconds"},
		{"election over max", []string{"election-timeout=1000,50001"}, "maxElectionMs = 50000"},
		{"election below 5x default heartbeat", []string{"election-timeout=400,1000"},
			"etcd refuses --election-timeout below 5 x --heartbeat-interval: election-timeout 400 ms < 5 x heartbeat-interval 100 ms (etcd's default)"},
		{"heartbeat over default election / 5", []string{"heartbeat-interval=100,300"},
			"election-timeout 1000 ms (etcd's default) < 5 x heartbeat-interval 300 ms"},
		{"one bad pair of the product", []string{"heartbeat-interval=100,300", "election-timeout=1000,1500"},
			"combination heartbeat-interval=300ms election-timeout=1s"},
		{"negative quota", []string{"quota-backend-bytes=-1,2g"}, "quota-backend-bytes=-1"},
		{"batch interval 0", []string{"backend-batch-interval=0,100ms"}, "positive duration"},
		{"batch limit 0", []string{"backend-batch-limit=0,100"}, "backend-batch-limit=0"},
		{"members 2", []string{"members=1,2"}, "want one of [1 3]"},
		{"missing dir", []string{"dir=" + dir + "," + dir + "/nope"}, "does not exist"},
		{"file as dir", []string{"dir=" + dir + "," + file}, "not a directory"},
		{"same dir twice", []string{"dir=" + dir + "," + dir + "/."}, "same value"},
		{"clients 0", []string{"clients=0,1"}, "clients=0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var vs []Vary
			var err error
			for _, a := range tc.args {
				var v Vary
				if v, err = ParseVary(a); err != nil {
					break
				}
				vs = append(vs, v)
			}
			if err == nil {
				_, err = Expand(base(dir), vs)
			}
			switch {
			case err == nil:
				t.Fatalf("%v accepted", tc.args)
			case !errors.Is(err, ErrBadVary):
				t.Errorf("error %v does not wrap ErrBadVary", err)
			case !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q does not say %q", err, tc.want)
			case strings.Contains(err.Error(), "\n"):
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestLoadRuleRefused checks that a combination the load itself cannot
// run (a watch load's values must hold their send time) is refused
// before anything runs.
func TestLoadRuleRefused(t *testing.T) {
	b := base(".")
	b.Load = etcdload.DefaultLoad(etcdload.OpWatch)
	_, err := Expand(b, mustVary(t, "val-size=4,64"))
	if !errors.Is(err, ErrBadVary) || !strings.Contains(err.Error(), "combination val-size=4") {
		t.Errorf("error %v, want a refusal of combination val-size=4", err)
	}
}

func TestQuotaOverMaxWarns(t *testing.T) {
	cs, err := Expand(base("."), mustVary(t, "quota-backend-bytes=2g,9g"))
	if err != nil {
		t.Fatalf("a quota over 8 GiB is accepted by etcd with a warning, but tune refused it: %v", err)
	}
	if len(cs[0].Warnings) != 0 || len(cs[1].Warnings) != 1 || !strings.Contains(cs[1].Warnings[0], "MaxQuotaBytes") {
		t.Errorf("warnings %q and %q, want none and one naming MaxQuotaBytes", cs[0].Warnings, cs[1].Warnings)
	}
}

func TestElectionAtFiveHeartbeats(t *testing.T) {
	// etcd refuses 5*TickMs > ElectionMs, so exactly 5 x is fine.
	if _, err := Expand(base("."), mustVary(t, "heartbeat-interval=200", "election-timeout=1000,2000")); err != nil {
		t.Errorf("election timeout of exactly 5 x the heartbeat refused: %v", err)
	}
}

func TestSchedule(t *testing.T) {
	got := Schedule(3, 4)
	want := []Slot{
		{1, 0}, {1, 1}, {1, 2},
		{2, 2}, {2, 1}, {2, 0},
		{3, 0}, {3, 1}, {3, 2},
		{4, 2}, {4, 1}, {4, 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Schedule(3, 4) = %v, want %v", got, want)
	}
	// Over an even number of rounds every combination has the same mean
	// position, so a linear drift favours none.
	pos := map[int]int{}
	for i, s := range got {
		pos[s.Combination] += i % 3
	}
	if pos[0] != pos[1] || pos[1] != pos[2] {
		t.Errorf("position sums %v differ", pos)
	}
}

func TestFileName(t *testing.T) {
	d := t.TempDir()
	cs, err := Expand(base(d), mustVary(t, "dir="+d+","+os.TempDir(), "backend-batch-interval=100ms,1s"))
	if err != nil {
		t.Fatal(err)
	}
	got := FileName("20261122T050000Z", cs[1], 2)
	want := "tune-20261122T050000Z-c2-r2-dir_" + filepath.Base(d) + "-backend-batch-interval_1s.json"
	if got != want {
		t.Errorf("FileName = %q, want %q", got, want)
	}
}
