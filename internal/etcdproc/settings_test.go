package etcdproc

import "testing"

func TestParseSettings(t *testing.T) {
	s := ParseSettings([]string{"etcd", "--name", "a", "-data-dir=/d", "--debug", "--listen-client-urls", "http://x:1", "--", "--name", "b"},
		[]byte("ETCD_NAME=env\x00ETCD_LISTEN_METRICS_URLS=http://m:2\x00PATH=/bin\x00"))
	for flag, want := range map[string]string{"name": "a", "data-dir": "/d", "listen-client-urls": "http://x:1", "listen-metrics-urls": "http://m:2", "debug": "", "wal-dir": ""} {
		if got := s.Get(flag); got != want {
			t.Errorf("Get(%s) = %q, want %q", flag, got, want)
		}
	}
}
