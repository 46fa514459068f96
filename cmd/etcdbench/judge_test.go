package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fioJSON runs the real fio on a temporary directory with the given extra
// options and returns the path of its JSON output.
func fioJSON(t *testing.T, format string, opts ...string) string {
	t.Helper()
	bin, err := exec.LookPath("fio")
	if err != nil {
		t.Skip("fio is not installed (Debian package fio)")
	}
	dir := t.TempDir()
	args := append([]string{"--name=mytest", "--directory=" + dir, "--rw=write", "--ioengine=sync", "--fdatasync=1", "--size=1m", "--bs=2300", "--output-format=" + format}, opts...)
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("fio: %v", err)
	}
	path := filepath.Join(dir, "fio.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestJudgeRealFio(t *testing.T) {
	cases := []struct {
		name   string
		format string
		opts   []string
		want   []string
	}{
		{"etcd recipe", "json+", nil, []string{"WAL fdatasync p99", "sequential synced IOPS"}},
		{"numjobs=2", "json", []string{"--numjobs=2"}, []string{"merged 2 job entries", "2 writers at once"}},
		{"numjobs=2 group_reporting", "json", []string{"--numjobs=2", "--group_reporting"}, []string{"2 writers at once", "sync_iops_per_writer"}},
		{"direct libaio", "json", []string{"--direct=1", "--ioengine=libaio", "--bs=4k"}, []string{"unlike etcd's WAL: direct=1", "unlike etcd's WAL: ioengine=libaio"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := fioJSON(t, c.format, c.opts...)
			res := runBin(t, runOpts{}, "judge", path)
			failed := strings.Contains(res.stdout, "Result: FAIL")
			if (failed && res.code != exitFail) || (!failed && res.code != exitOK) {
				t.Fatalf("exit %d does not match the report:\n%s%s", res.code, res.stdout, res.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(res.stdout, w) {
					t.Errorf("judgement lacks %q:\n%s", w, res.stdout)
				}
			}
		})
	}
}

// A fio run whose every sync took a thousand times longer fails, exit 1,
// in every format.
func TestJudgeFailingDisk(t *testing.T) {
	path := fioJSON(t, "json+")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, j := range doc["jobs"].([]any) {
		lat := j.(map[string]any)["sync"].(map[string]any)["lat_ns"].(map[string]any)
		for _, k := range []string{"min", "max", "mean"} {
			lat[k] = lat[k].(float64) * 1000
		}
		for _, key := range []string{"percentile", "bins"} {
			slow := map[string]any{}
			for k, v := range lat[key].(map[string]any) {
				if key == "bins" {
					n, _ := strconv.ParseFloat(k, 64)
					slow[strconv.FormatInt(int64(n*1000), 10)] = v
				} else {
					slow[k] = v.(float64) * 1000
				}
			}
			lat[key] = slow
		}
	}
	b, _ = json.Marshal(doc)
	slow := filepath.Join(t.TempDir(), "slow.json")
	if err := os.WriteFile(slow, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json", "prom", "html"} {
		res := runBin(t, runOpts{}, "judge", slow, "-o", format)
		if res.code != exitFail {
			t.Fatalf("-o %s: exit %d, want %d\n%s", format, res.code, exitFail, res.stderr)
		}
		switch format {
		case "text":
			if !strings.Contains(res.stdout, "FAIL  WAL fdatasync p99") || !strings.Contains(res.stdout, "decided at 95 %") {
				t.Errorf("text:\n%s", res.stdout)
			}
		case "prom":
			if !regexp.MustCompile(`(?m)^etcdbench_verdict\{check="wal_fsync_p99",command="judge",dir="[^"]*",status="fail",workload="fio"\} 1$`).MatchString(res.stdout) {
				t.Errorf("prom:\n%s", res.stdout)
			}
			checkPromtool(t, []byte(res.stdout))
		}
	}
}

func TestJudgeUsageErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("fio: unrecognized option"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no file", []string{"judge"}, "judge takes one file"},
		{"missing file", []string{"judge", filepath.Join(dir, "nope.json")}, "no such file"},
		{"not fio output", []string{"judge", garbage}, "want the output of fio"},
		{"an etcdbench result", []string{"judge", fixtureWAL}, "fio"},
		{"bad threshold", []string{"judge", garbage, "--wal-p99", "soon"}, "--wal-p99"},
		{"bad WAL batch size", []string{"judge", garbage, "--wal-bs", "abc"}, `--wal-bs "abc": want a size`},
		{"zero WAL batch size", []string{"judge", garbage, "--wal-bs", "0"}, `--wal-bs "0"`},
	}
	if _, err := exec.LookPath("fio"); err == nil {
		cases = append(cases, struct {
			name string
			args []string
			want string
		}{"no syncs", []string{"judge", fioJSONNoSync(t)}, "no fio job made fsync/fdatasync calls"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runBin(t, runOpts{}, c.args...)
			if res.code != exitUsage || !strings.Contains(res.stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", res.code, res.stderr, exitUsage, c.want)
			}
			checkOneErrorLine(t, res.stderr)
		})
	}
}

// fioJSONNoSync is fio output of a write job that never syncs.
func fioJSONNoSync(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("fio", "--name=nosync", "--directory="+dir, "--rw=write", "--size=256k", "--output-format=json").Output()
	if err != nil {
		t.Fatalf("fio: %v", err)
	}
	path := filepath.Join(dir, "fio.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// fio's bs is compared with the WAL batch size given with --wal-bs (or the
// recipe's 2300 bytes), by one rule whether bs was given or left to fio.
func TestJudgeWALBatchSize(t *testing.T) {
	recipe, fourK := fioJSON(t, "json"), fioJSON(t, "json", "--bs=4k")
	cases := []struct {
		name string
		args []string
		note string // the bs note; "": none
	}{
		{"recipe, default size", []string{"judge", recipe}, ""},
		{"4k, default size", []string{"judge", fourK}, ""},
		{"recipe, small batches", []string{"judge", recipe, "--wal-bs", "370"}, "unlike etcd's WAL: bs=2300: more than 4x away from the 370-byte WAL batches it is compared with (--wal-bs 370)"},
		{"4k, small batches", []string{"judge", fourK, "--wal-bs", "370"}, "unlike etcd's WAL: bs=4k: more than 4x away from the 370-byte WAL batches it is compared with (--wal-bs 370)"},
		{"4k, large batches", []string{"judge", fourK, "--wal-bs", "64k"}, "from the 65536-byte WAL batches it is compared with (--wal-bs 64k)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runBin(t, runOpts{}, c.args...)
			if res.code != exitOK && res.code != exitFail {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			if c.note == "" && strings.Contains(res.stdout, "unlike etcd's WAL: bs=") {
				t.Errorf("a bs note for a size within 4x of the WAL batches:\n%s", res.stdout)
			}
			if c.note != "" && !strings.Contains(res.stdout, c.note) {
				t.Errorf("judgement lacks %q:\n%s", c.note, res.stdout)
			}
		})
	}
}
