package etcdproc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeProc returns a function that writes a process (comm, cmdline and
// its fds' links) into the fixture tree root.
func fakeProc(t *testing.T, root string) func(pid, comm, cmdline string, fds map[string]string) {
	return func(pid, comm, cmdline string, fds map[string]string) {
		d := filepath.Join(root, pid)
		if err := os.MkdirAll(filepath.Join(d, "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "comm"), []byte(comm+"\n"), 0o644)
		os.WriteFile(filepath.Join(d, "cmdline"), []byte(cmdline), 0o644)
		for fd, target := range fds {
			if err := os.Symlink(target, filepath.Join(d, "fd", fd)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestFindFixture(t *testing.T) {
	root := t.TempDir()
	mk := fakeProc(t, root)
	mk("100", "etcd", "/usr/bin/etcd\x00--data-dir\x00/d\x00", map[string]string{
		"3": "/d/member/wal/0000000000000001-0000000000000010.wal", "4": "/d/member/snap/db", "5": "socket:[1]", "6": "/d/member/wal/1.tmp",
		"7": "/d/member/wal", "8": "/var/log/etcd.log", "9": "/dev/null", "10": "pipe:[7]", "11": "/proc/100/stat",
	})
	mk("200", "etcdctl", "etcdctl\x00put\x00", nil)
	mk("300", "kthreadd", "", nil)
	mk("400", "etcd-wrapper", "/opt/bin/etcd\x00", nil) // comm says otherwise, argv[0] is etcd
	mk("self", "etcd", "etcd\x00", nil)                 // not a pid
	ps, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].PID != 100 || ps[1].PID != 400 || ps[0].Cmdline[2] != "/d" {
		t.Errorf("Find = %+v, want 100 and 400", ps)
	}
	files, err := ReadFiles(root, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(files.WAL) != 1 || files.WAL[3] == "" || files.DB[4] != "/d/member/snap/db" || files.WALDir != "/d/member/wal" || files.Next[6] != "/d/member/wal/1.tmp" {
		t.Errorf("ReadFiles = %+v", files)
	}
	if len(files.Other) != 2 || files.Other[7] != "/d/member/wal" || files.Other[8] != "/var/log/etcd.log" {
		t.Errorf("other files %v: want the WAL directory and the log, not /dev, /proc, sockets or pipes", files.Other)
	}
	if _, err := ReadFiles(root, 999); err == nil {
		t.Error("a missing process is not an error")
	}
}

// TestFindOne: none is ErrNone, one is its pid, several a *ManyError that
// lists them; no message names a command's flag.
func TestFindOne(t *testing.T) {
	root := t.TempDir()
	mk := fakeProc(t, root)
	mk("50", "etcdctl", "etcdctl\x00get\x00", nil)
	if _, err := FindOne(root); !errors.Is(err, ErrNone) || !strings.Contains(err.Error(), root) {
		t.Errorf("no etcd: %v, want ErrNone naming %s", err, root)
	}
	mk("100", "etcd", "/usr/bin/etcd\x00--name\x00a\x00", nil)
	if pid, err := FindOne(root); err != nil || pid != 100 {
		t.Errorf("one etcd: pid %d, %v; want 100", pid, err)
	}
	mk("200", "etcd", "/usr/bin/etcd\x00--name\x00"+strings.Repeat("b", 80)+"\x00", nil)
	_, err := FindOne(root)
	var many *ManyError
	if !errors.As(err, &many) || len(many.Procs) != 2 {
		t.Fatalf("two etcds: %v, want a *ManyError with both", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "2 etcd processes: 100 (/usr/bin/etcd --name a); 200 (") || !strings.HasSuffix(msg, "...)") {
		t.Errorf("two etcds: %q, want both listed, a long command line cut", msg)
	}
	if strings.Contains(msg, "--pid") {
		t.Errorf("%q names a flag: the command adds its own", msg)
	}
}
