package cluster

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/testutil/hostetcd"
)

// The timeouts as etcd reads them: flags in both spellings, the
// environment where a flag is not given, a config file instead of all of
// them, and etcd's defaults.
func TestParseTimeouts(t *testing.T) {
	noFile := func(string) ([]byte, error) { return nil, errors.New("no file") }
	for _, c := range []struct {
		name     string
		args     []string
		env      []string
		file     string
		hb, et   time.Duration
		from, ok string
	}{
		{"defaults", []string{"etcd", "--name", "a"}, nil, "", 100 * time.Millisecond, time.Second, "etcd's defaults", "ok"},
		{"flags", []string{"etcd", "--heartbeat-interval=250", "--election-timeout", "2500"}, nil, "", 250 * time.Millisecond, 2500 * time.Millisecond, "its command line", "ok"},
		{"environment", []string{"etcd"}, []string{"ETCD_ELECTION_TIMEOUT=5000", "PATH=/bin"}, "", 100 * time.Millisecond, 5 * time.Second, "its environment", "ok"},
		{"flag over environment", []string{"etcd", "-heartbeat-interval", "300"}, []string{"ETCD_HEARTBEAT_INTERVAL=50"}, "", 300 * time.Millisecond, time.Second, "its command line", "ok"},
		{"config file", []string{"etcd", "--config-file", "/etc/etcd.yaml", "--heartbeat-interval=250"}, nil, "name: a\nheartbeat-interval: 500\nelection-timeout: 5000\n", 500 * time.Millisecond, 5 * time.Second, "its config file /etc/etcd.yaml", "ok"},
		{"a bad value", []string{"etcd", "--election-timeout=soon"}, nil, "", 0, 0, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			read := noFile
			if c.file != "" {
				read = func(string) ([]byte, error) { return []byte(c.file), nil }
			}
			got, ok := parseTimeouts(c.args, c.env, read)
			if ok != (c.ok != "") || ok && (got.heartbeat != c.hb || got.election != c.et || !strings.HasPrefix(got.from, c.from)) {
				t.Errorf("parseTimeouts = %+v, %v; want %v, %v from %q", got, ok, c.hb, c.et, c.from)
			}
		})
	}
}

// A member on this machine: its process's flags are read through /proc.
func TestMemberTimeoutsOfALocalEtcd(t *testing.T) {
	if _, err := exec.LookPath("etcd"); err != nil {
		t.Skip("no etcd binary")
	}
	e := hostetcd.Start(t, "to", "", "--heartbeat-interval", "150", "--election-timeout", "1500")
	got, ok := memberTimeouts("/proc", e.Endpoint)
	if !ok || got.heartbeat != 150*time.Millisecond || got.election != 1500*time.Millisecond || got.from != "its command line (etcd's default for what is not there)" {
		t.Errorf("memberTimeouts(%s) = %+v, %v; want 150ms/1.5s from its command line", e.Endpoint, got, ok)
	}
	if _, ok := memberTimeouts("/proc", "http://192.0.2.1:2379"); ok {
		t.Errorf("a member elsewhere: timeouts known")
	}
}
