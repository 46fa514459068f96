package exporter

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestParseSettings(t *testing.T) {
	tests := []struct {
		name                string
		cmdline             []string
		environ, cwd        string
		wantMember, wantDir string
	}{
		{name: "flags with values", cmdline: []string{"etcd", "--name", "m0", "--data-dir", "/var/lib/etcd"}, wantMember: "m0", wantDir: "/var/lib/etcd"},
		{name: "flags with equals and one dash", cmdline: []string{"/usr/bin/etcd", "-name=m1", "-data-dir=/d/"}, wantMember: "m1", wantDir: "/d"},
		{name: "kubeadm static pod", cmdline: []string{"etcd", "--advertise-client-urls=https://10.0.0.1:2379", "--data-dir=/var/lib/etcd", "--name=cp-1", "--snapshot-count=10000"}, wantMember: "cp-1", wantDir: "/var/lib/etcd"},
		{name: "environment", cmdline: []string{"etcd"}, environ: "PATH=/bin\x00ETCD_NAME=e1\x00ETCD_DATA_DIR=/srv/etcd\x00", wantMember: "e1", wantDir: "/srv/etcd"},
		{name: "flag beats environment", cmdline: []string{"etcd", "--name=f"}, environ: "ETCD_NAME=e\x00", wantMember: "f", wantDir: "/home/f.etcd", cwd: "/home"},
		{name: "etcd's defaults, relative to its cwd", cmdline: []string{"etcd"}, cwd: "/root", wantMember: "default", wantDir: "/root/default.etcd"},
		{name: "relative data dir", cmdline: []string{"etcd", "--data-dir", "data"}, cwd: "/x", wantMember: "default", wantDir: "/x/data"},
		{name: "a flag after -- is an argument", cmdline: []string{"etcd", "--", "--name", "no"}, cwd: "/", wantMember: "default", wantDir: "/default.etcd"},
		{name: "other flags' values are skipped", cmdline: []string{"etcd", "--log-level", "debug", "--name", "n"}, cwd: "/", wantMember: "n", wantDir: "/n.etcd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, d := ParseSettings(tt.cmdline, []byte(tt.environ), tt.cwd)
			if m != tt.wantMember || d != tt.wantDir {
				t.Errorf("ParseSettings = %q, %q; want %q, %q", m, d, tt.wantMember, tt.wantDir)
			}
		})
	}
}

// fakeProc builds a /proc with the processes given: pid -> comm,
// cmdline, open files (fd -> target).
func fakeProc(t *testing.T, procs map[string]struct {
	comm, cmdline string
	fds           map[string]string
}) string {
	t.Helper()
	root := t.TempDir()
	for pid, p := range procs {
		d := filepath.Join(root, pid)
		if err := os.MkdirAll(filepath.Join(d, "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
		stat := pid + " (" + p.comm + ") S 1 1 1 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 8 0 12345 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
		for name, data := range map[string]string{"comm": p.comm + "\n", "cmdline": p.cmdline, "stat": stat} {
			if err := os.WriteFile(filepath.Join(d, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink("/", filepath.Join(d, "cwd")); err != nil {
			t.Fatal(err)
		}
		for fd, target := range p.fds {
			if err := os.Symlink(target, filepath.Join(d, "fd", fd)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// TestDiscover: the data dir comes from the open db when etcd has one
// (a config file's setting the command line does not show), the filters
// narrow by pid and data dir, and a --pid that is not etcd is named.
func TestDiscover(t *testing.T) {
	type proc = struct {
		comm, cmdline string
		fds           map[string]string
	}
	root := fakeProc(t, map[string]proc{
		"100": {"etcd", "etcd\x00--config-file\x00/etc/etcd.yaml\x00", map[string]string{"7": "/var/lib/etcd/member/snap/db"}},
		"200": {"etcd", "etcd\x00--name\x00b\x00--data-dir\x00/b\x00", nil},
		"300": {"bash", "bash\x00", nil},
	})
	all, err := Discover(root, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].DataDir != "/var/lib/etcd" || all[0].Member != "default" || all[1].Member != "b" || all[1].StartTicks != 12345 {
		t.Fatalf("Discover = %+v", all)
	}
	for _, tt := range []struct {
		name string
		f    Filter
		want int // the pid found, or 0 for none
	}{
		{"pid", Filter{PIDs: []int{200}}, 200},
		{"data dir", Filter{DataDirs: []string{"/var/lib/etcd/"}}, 100},
		{"both, disjoint", Filter{PIDs: []int{200}, DataDirs: []string{"/var/lib/etcd"}}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Discover(root, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if (tt.want == 0) != (len(got) == 0) || (tt.want != 0 && (len(got) != 1 || got[0].PID != tt.want)) {
				t.Errorf("Discover(%+v) = %+v, want pid %d", tt.f, got, tt.want)
			}
		})
	}
	if err := CheckPID(root, 200); err != nil {
		t.Errorf("CheckPID(etcd) = %v", err)
	}
	if err := CheckPID(root, 300); !errors.Is(err, ErrNotEtcd) {
		t.Errorf("CheckPID(bash) = %v, want ErrNotEtcd", err)
	}
	if err := CheckPID(root, 999); !errors.Is(err, ErrNotEtcd) {
		t.Errorf("CheckPID(missing) = %v, want ErrNotEtcd", err)
	}
}
