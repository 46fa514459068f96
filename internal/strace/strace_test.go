package strace

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/etcdproc"
)

func TestParseLine(t *testing.T) {
	const wal = "/tmp/etcdx/d/member/wal/0000000000000000-0000000000000000.wal"
	at := 4*time.Hour + 18*time.Minute + 17*time.Second
	for _, tc := range []struct {
		name, line string
		want       Line
	}{
		{"write", "8774  04:18:17.501154 write(11<" + wal + ">, \"\"..., 120) = 120 <0.000021>",
			Line{Kind: CallLine, PID: 8774, At: at + 501154*time.Microsecond, Name: "write", FD: 11, Path: wal, Ret: 120, Dur: 21 * time.Microsecond}},
		{"fdatasync unfinished", "8737  04:18:17.494990 fdatasync(11<" + wal + "> <unfinished ...>",
			Line{Kind: Unfinished, PID: 8737, At: at + 494990*time.Microsecond, Name: "fdatasync", FD: 11, Path: wal, Ret: -1, Dur: -1}},
		{"resumed", "8737  04:18:17.495422 <... fdatasync resumed>) = 0 <0.000399>",
			Line{Kind: Resumed, PID: 8737, At: at + 495422*time.Microsecond, Name: "fdatasync", FD: -1, Ret: 0, Dur: 399 * time.Microsecond}},
		{"resumed with a space", "8737  04:18:17.495422 <... write resumed> ) = 7 <0.5>",
			Line{Kind: Resumed, PID: 8737, At: at + 495422*time.Microsecond, Name: "write", FD: -1, Ret: 7, Dur: 500 * time.Millisecond}},
		{"pwrite64 on db", "9672  04:18:17.594214 pwrite64(9</tmp/etcdx/d/member/snap/db>, \"\"..., 4096, 12288) = 4096 <0.000093>",
			Line{Kind: CallLine, PID: 9672, At: at + 594214*time.Microsecond, Name: "pwrite64", FD: 9, Path: "/tmp/etcdx/d/member/snap/db", Ret: 4096, Dur: 93 * time.Microsecond}},
		{"error", "12 04:18:17.000001 write(3<socket:[1]>, \"\"..., 5) = -1 EAGAIN (Resource temporarily unavailable) <0.000010>",
			Line{Kind: CallLine, PID: 12, At: at + time.Microsecond, Name: "write", FD: 3, Path: "socket:[1]", Ret: -1, Err: "EAGAIN", Dur: 10 * time.Microsecond}},
		{"unknown result", "12 04:18:17.000001 fdatasync(3) = ?",
			Line{Kind: CallLine, PID: 12, At: at + time.Microsecond, Name: "fdatasync", FD: 3, Ret: -1, Err: "?", Dur: -1}},
		{"terminal pid prefix, no -y", "[pid  8774] write(11, \"\"..., 120) = 120",
			Line{Kind: CallLine, PID: 8774, At: -1, Name: "write", FD: 11, Ret: 120, Dur: -1}},
		{"no pid", "fsync(4</a b>c>) = 0 <0.001000>",
			Line{Kind: CallLine, At: -1, Name: "fsync", FD: 4, Path: "/a b>c", Ret: 0, Dur: time.Millisecond}},
		{"signal", "8737  04:17:37.519746 --- SIGURG {si_signo=SIGURG, si_code=SI_TKILL, si_pid=8737, si_uid=0} ---",
			Line{Kind: Other, PID: 8737, At: 4*time.Hour + 17*time.Minute + 37*time.Second + 519746*time.Microsecond, FD: -1, Ret: -1, Dur: -1}},
		{"exit", "8737  04:17:37.519746 +++ exited with 0 +++",
			Line{Kind: Other, PID: 8737, At: 4*time.Hour + 17*time.Minute + 37*time.Second + 519746*time.Microsecond, FD: -1, Ret: -1, Dur: -1}},
		{"blank", "", Line{Kind: Other, FD: -1, At: -1, Ret: -1, Dur: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseLine(tc.line)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"garbage", "write(11, 3", "8774 04:18:17.5 <... write", "write(1) = x", "(1) = 3"} {
		if _, err := ParseLine(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestProfile reads a trace of Debian's etcd 3.4 under a few puts
// (captured with the command line Args gives, -o FILE).
func TestProfile(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "strace-etcd34.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ReadProfile(f, etcdproc.Files{})
	if err != nil {
		t.Fatal(err)
	}
	// by hand from the file: 5 WAL fdatasyncs, 2 of them split; writes of
	// 120, 120, 360, 120, 200 bytes, one before each sync
	if got := p.WALSync.TotalCount(); got != 5 {
		t.Errorf("%d WAL fdatasyncs, want 5", got)
	}
	want := map[int64]int64{120: 3, 360: 1, 200: 1}
	if got := p.WALWriteBytes.Counts(); !maps.Equal(got, want) {
		t.Errorf("WAL write sizes %v, want %v", got, want)
	}
	if got := p.WALBytesSync.Counts(); !maps.Equal(got, want) {
		t.Errorf("WAL bytes per sync %v, want %v", got, want)
	}
	if p.DBSync.TotalCount() != 2 || p.DBWriteBytes.Count() != 2 || p.DBWriteBytes.Sum() != 8192 {
		t.Errorf("db: %d syncs, %d writes of %d bytes; want 2, 2, 8192", p.DBSync.TotalCount(), p.DBWriteBytes.Count(), p.DBWriteBytes.Sum())
	}
	if p.WALSync.Max() < int64(390*time.Microsecond) || p.WALSync.Max() > int64(420*time.Microsecond) {
		t.Errorf("slowest WAL fdatasync %v, want 411us", time.Duration(p.WALSync.Max()))
	}
	if p.Orphans != 1 || p.Unread != 1 {
		t.Errorf("%d orphans, %d unread lines; want 1, 1", p.Orphans, p.Unread)
	}
	if p.Traced != 594997*time.Microsecond-494990*time.Microsecond+100*time.Millisecond {
		t.Errorf("traced %v", p.Traced)
	}
	rec, ok := p.Recommend("/var/lib/etcd")
	if !ok || rec.BS != 120 || rec.Command() != "etcdbench disk wal --dir /var/lib/etcd --bs 120" {
		t.Errorf("recommendation %+v %q", rec, rec.Command())
	}
	wl, err := p.Workload(42, etcdproc.Files{WAL: map[int]string{11: "/x/member/wal/0.wal"}}, "/x", 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if wl.Latency("wal fdatasync") == nil || wl.Latency("wal fdatasync").Count != 5 || wl.Figure("recommended_bs").Value != 120 {
		t.Errorf("workload %+v", wl)
	}
	if !strings.Contains(strings.Join(wl.Notes, " "), "throughput can halve") {
		t.Error("no overhead note")
	}
}

func TestArgs(t *testing.T) {
	old := Tool{Path: "strace", Version: "6.1"}
	got := strings.Join(old.Args(7, "/t/o", []int{11, 9}), " ")
	if got != "-f -T -tt -y -s 0 -qq -o /t/o -p 7 -e trace=write,pwrite64,writev,fdatasync,fsync" {
		t.Errorf("strace 6.1: %s", got)
	}
	nw := Tool{Path: "strace", Version: "6.8", TraceFDs: true}
	if got := nw.Args(7, "/t/o", []int{11, 9}); got[len(got)-1] != "--trace-fds=9,11" {
		t.Errorf("strace 6.8: %v", got)
	}
	for in, want := range map[string]string{"strace -- version 6.1\nCopyright": "6.1", "strace version 4.26\n": "4.26", "": ""} {
		if got := parseVersion(in); got != want {
			t.Errorf("parseVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRunNoProcess: strace that cannot attach is one error saying so,
// at once, not after the duration.
func TestRunNoProcess(t *testing.T) {
	tool, err := Find(t.Context())
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	begin := time.Now()
	_, err = tool.Run(t.Context(), 1<<22+7, 30*time.Second, t.TempDir(), nil) // above pid_max's limit
	if err == nil || !strings.Contains(err.Error(), "could not trace process") {
		t.Fatalf("err %v, want one saying strace could not trace", err)
	}
	if time.Since(begin) > 20*time.Second {
		t.Errorf("took %v: waited for the duration instead of failing", time.Since(begin))
	}
	t.Log(err)
}
