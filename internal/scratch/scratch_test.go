package scratch

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestCreateAndRemove(t *testing.T) {
	parent := t.TempDir()
	keep := filepath.Join(parent, "keep.txt")
	if err := os.WriteFile(keep, []byte("operator data"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, stale, err := Create(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) != 0 {
		t.Fatalf("fresh directory reported stale scratch dirs: %v", stale)
	}
	st, err := os.Stat(d.Path)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("scratch dir %s: %v, mode %v", d.Path, err, st.Mode())
	}
	m, err := readMarker(d.Path)
	if err != nil || m.PID != os.Getpid() || !alive(m) {
		t.Fatalf("marker %+v, %v", m, err)
	}
	if err := os.WriteFile(d.File("data"), make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(); err != nil {
		t.Fatalf("second Remove: %v", err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 || entries[0].Name() != "keep.txt" {
		t.Fatalf("parent holds %v after Remove, want only keep.txt", entries)
	}
	if b, _ := os.ReadFile(keep); string(b) != "operator data" {
		t.Fatal("pre-existing file changed")
	}
}

func TestRemoveRefusesUnmarkedDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), Prefix+"imposter")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	d := &Dir{Path: dir}
	if err := d.Remove(); err == nil {
		t.Fatal("removed a directory without a marker")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal("unmarked directory is gone")
	}
}

// deadMarker returns a marker of a process that has exited.
func deadMarker(t *testing.T) Marker {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run a child process: %v", err)
	}
	m, err := selfMarker()
	if err != nil {
		t.Fatal(err)
	}
	m.PID = cmd.Process.Pid
	return m
}

func plant(t *testing.T, parent, name string, m *Marker) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if m != nil {
		b, _ := json.Marshal(m)
		if err := os.WriteFile(filepath.Join(dir, MarkerName), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "0000.wal"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestClean(t *testing.T) {
	parent := t.TempDir()
	dead := deadMarker(t)
	live, err := selfMarker()
	if err != nil {
		t.Fatal(err)
	}
	rebooted := live
	rebooted.BootID = "another-boot"
	reused := live
	reused.StartTicks++ // same PID, different process

	stale := plant(t, parent, Prefix+"dead", &dead)
	staleBoot := plant(t, parent, Prefix+"boot", &rebooted)
	staleReuse := plant(t, parent, Prefix+"reuse", &reused)
	running := plant(t, parent, Prefix+"live", &live)
	noMarker := plant(t, parent, Prefix+"nomarker", nil)
	other := plant(t, parent, "etcd-data", &dead) // not our prefix
	foreign := live
	foreign.Tool = "something-else"
	foreignDir := plant(t, parent, Prefix+"foreign", &foreign)

	rep, err := Clean(parent)
	if err != nil {
		t.Fatal(err)
	}
	removed, inUse := rep.Removed, rep.InUse
	if len(removed) != 3 || len(inUse) != 1 || inUse[0] != running {
		t.Fatalf("removed %v, in use %v", removed, inUse)
	}
	for _, p := range []string{stale, staleBoot, staleReuse} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived", p)
		}
	}
	for _, p := range []string{running, noMarker, other, foreignDir} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}

	// Create cleans stale siblings and says so.
	again := plant(t, parent, Prefix+"dead2", &dead)
	d, cleaned, err := Create(parent)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Remove()
	if len(cleaned) != 1 || cleaned[0] != again {
		t.Fatalf("Create cleaned %v, want %s", cleaned, again)
	}
}

func TestCheckErrors(t *testing.T) {
	parent := t.TempDir()
	file := filepath.Join(parent, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(parent, "to-proc")
	if err := os.Symlink("/proc", link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		dir  string
		want error
	}{
		{"missing", filepath.Join(parent, "nope"), ErrNotExist},
		{"file", file, ErrNotDir},
		{"procfs", "/proc", ErrNotStorage},
		{"sysfs", "/sys/kernel", ErrNotStorage},
		{"a link to procfs", link, ErrNotStorage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Check(c.dir); !errors.Is(err, c.want) {
				t.Fatalf("Check(%s) = %v, want %v", c.dir, err, c.want)
			}
			if _, _, err := Create(c.dir); !errors.Is(err, c.want) {
				t.Fatalf("Create(%s) = %v, want %v", c.dir, err, c.want)
			}
		})
	}
}

// The directory under test is storage: the scratch directory's own
// parent (a real filesystem) passes.
func TestCheckStorage(t *testing.T) {
	if _, err := Check(t.TempDir()); err != nil {
		t.Fatalf("a temporary directory refused: %v", err)
	}
}

func TestCheckFree(t *testing.T) {
	dir := t.TempDir()
	if err := CheckFree(dir, 1); err != nil {
		t.Fatalf("1 byte: %v", err)
	}
	err := CheckFree(dir, 1<<62)
	if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("4 EiB: %v, want ErrNoSpace", err)
	}
}
