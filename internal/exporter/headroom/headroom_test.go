package headroom

import (
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
)

// capacityResult is a saved result whose capacity workload is c,
// measured in env.
func capacityResult(t testing.TB, env sysinfo.Facts, c *result.Capacity) []byte {
	t.Helper()
	r := result.Result{Schema: result.SchemaID, Tool: result.Tool{Name: "etcdbench", Args: []string{"etcdbench", "capacity", "-o", "json"}},
		Environment: env, Workloads: []result.Workload{{Name: "wal"}, {Name: "capacity", Capacity: c}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParse(t *testing.T) {
	env := sysinfo.Facts{Dir: "/var/lib/etcd", Hostname: "node-1", Filesystem: sysinfo.Filesystem{MajorMinor: "259:2"},
		Device: &sysinfo.Device{Name: "nvme0n1", Partition: "nvme0n1p2"}}
	vol := &result.CapacityVolume{WriteIOPS: 1000, WriteBytesPerSec: 4e6}
	for _, tc := range []struct {
		name string
		in   []byte
		want Estimate
		err  error
	}{
		{"capacity's estimate", capacityResult(t, env, &result.Capacity{Rate: 900, Etcd: &result.CapacityEstimate{Rate: 450}, Volume: vol}),
			Estimate{PutsPerSecond: 450, VolumeWriteIOPS: 1000, VolumeWriteBytesPerSec: 4e6}, nil},
		{"disk sweep only", capacityResult(t, env, &result.Capacity{Rate: 900}), Estimate{PutsPerSecond: 900, FromDiskSweep: true}, nil},
		{"no rate passed", capacityResult(t, env, &result.Capacity{Rate: 0, Evidence: "every step failed"}), Estimate{}, ErrNoCapacity},
		{"no capacity workload", capacityResult(t, env, nil), Estimate{}, ErrNoCapacity},
		{"not JSON", []byte("rate: 900\n"), Estimate{}, result.ErrSchema},
		{"another schema", []byte(`{"schema":"prometheus"}`), Estimate{}, result.ErrSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Parse: %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if got.PutsPerSecond != tc.want.PutsPerSecond || got.FromDiskSweep != tc.want.FromDiskSweep ||
				got.VolumeWriteIOPS != tc.want.VolumeWriteIOPS || got.VolumeWriteBytesPerSec != tc.want.VolumeWriteBytesPerSec {
				t.Errorf("Parse = %+v, want %+v", got, tc.want)
			}
			if got.Device != "nvme0n1p2" || got.Filesystem != "259:2" || got.Hostname != "node-1" {
				t.Errorf("where = device %q filesystem %q host %q, want nvme0n1p2 259:2 node-1", got.Device, got.Filesystem, got.Hostname)
			}
		})
	}
}

func TestMatchesAndHost(t *testing.T) {
	e := Estimate{Filesystem: "259:2", Device: "nvme0n1p2", Hostname: "node-1"}
	for _, tc := range []struct {
		name string
		vol  Volume
		want bool
	}{
		{"same filesystem", Volume{Filesystem: "259:2", Device: "nvme0n1p2"}, true},
		{"same device, filesystem renumbered", Volume{Filesystem: "259:7", Device: "nvme0n1p2"}, true},
		{"another partition", Volume{Filesystem: "259:3", Device: "nvme0n1p3"}, false},
		{"tmpfs", Volume{Filesystem: "0:45"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := e.Matches(tc.vol); got != tc.want {
				t.Errorf("Matches(%+v) = %v, want %v", tc.vol, got, tc.want)
			}
		})
	}
	if err := e.CheckHost("node-1"); err != nil {
		t.Errorf("CheckHost(same host) = %v", err)
	}
	if err := e.CheckHost("node-2"); !errors.Is(err, ErrOtherHost) {
		t.Errorf("CheckHost(another host) = %v, want ErrOtherHost", err)
	}
}

func TestMetricsURL(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cmdline []string
		env     string
		want    string
		err     error
	}{
		{"metrics URLs first", []string{"etcd", "--listen-client-urls", "http://10.0.0.1:2379", "--listen-metrics-urls=http://127.0.0.1:2381"}, "", "http://127.0.0.1:2381/metrics", nil},
		{"client URL, every interface", []string{"etcd", "-listen-client-urls=https://10.0.0.1:2379,http://0.0.0.0:2379"}, "", "http://127.0.0.1:2379/metrics", nil},
		{"from the environment", []string{"etcd"}, "ETCD_LISTEN_METRICS_URLS=http://[::]:2381\x00", "http://127.0.0.1:2381/metrics", nil},
		{"etcd's default", []string{"etcd", "--name", "a"}, "", "http://localhost:2379/metrics", nil},
		{"TLS only", []string{"etcd", "--listen-client-urls", "https://10.0.0.1:2379"}, "", "", ErrNoMetricsURL},
		{"config file", []string{"etcd", "--config-file", "/etc/etcd.yaml"}, "", "", ErrNoMetricsURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MetricsURL(tc.cmdline, []byte(tc.env))
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Errorf("MetricsURL = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestCounterWindow(t *testing.T) {
	c := counterWindow{window: 10 * time.Second}
	t0 := time.Unix(1000, 0)
	if _, _, err := c.perSecond(); err == nil {
		t.Error("a rate from no sample")
	}
	for i := range 31 { // 100/s for 30 s, sampled every second
		c.add(t0.Add(time.Duration(i)*time.Second), float64(100*i))
	}
	r, span, err := c.perSecond()
	if err != nil || math.Abs(r-100) > 1e-9 || span != 10*time.Second {
		t.Errorf("rate = %v over %v (%v), want 100 over 10s", r, span, err)
	}
	if len(c.samples) > 11 {
		t.Errorf("%d samples kept for a 10 s window sampled every second", len(c.samples))
	}
	c.add(t0.Add(31*time.Second), 50) // etcd restarted
	if _, _, err := c.perSecond(); err == nil {
		t.Error("a rate across a counter reset")
	}
	c.add(t0.Add(33*time.Second), 150)
	if r, _, _ := c.perSecond(); math.Abs(r-50) > 1e-9 {
		t.Errorf("rate after the reset = %v, want 50", r)
	}
}

// FuzzParse: any bytes give an estimate above 0 or an error, never a
// panic.
func FuzzParse(f *testing.F) {
	f.Add(capacityResult(f, sysinfo.Facts{Hostname: "n"}, &result.Capacity{Rate: 900, Etcd: &result.CapacityEstimate{Rate: 450}}))
	f.Add([]byte(`{"schema":"etcdbench.result/v1","workloads":[{"name":"capacity","capacity":{"rate":-1}}]}`))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if e, err := Parse(b); err == nil && !(e.PutsPerSecond > 0) {
			t.Errorf("Parse accepted an estimate of %v", e.PutsPerSecond)
		}
	})
}

// FuzzMetricsURL: any command line gives a plain-HTTP /metrics URL or
// ErrNoMetricsURL.
func FuzzMetricsURL(f *testing.F) {
	f.Add("--listen-client-urls=http://0.0.0.0:2379", "ETCD_LISTEN_METRICS_URLS=http://[::1]:2381")
	f.Add("--listen-metrics-urls https://a:1,unix://x", "")
	f.Fuzz(func(t *testing.T, args, env string) {
		got, err := MetricsURL(append([]string{"etcd"}, strings.Fields(args)...), []byte(strings.ReplaceAll(env, ";", "\x00")))
		if err != nil {
			if !errors.Is(err, ErrNoMetricsURL) {
				t.Errorf("error %v is not ErrNoMetricsURL", err)
			}
			return
		}
		if u, perr := url.Parse(got); perr != nil || u.Scheme != "http" || u.Path != "/metrics" || u.Host == "" {
			t.Errorf("MetricsURL = %q", got)
		}
	})
}
