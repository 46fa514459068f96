package cmp

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseAndCheck(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantErr   error // matched with errors.Is; nil: no error
		wantUsage bool
	}{
		{name: "defaults", args: nil},
		{name: "all common flags", args: []string{"--dir", "d", "--rounds", "7", "--etcdbench", "e", "--fio", "f", "--json", "j"}},
		{name: "help", args: []string{"--help"}, wantErr: flag.ErrHelp},
		{name: "unknown flag", args: []string{"--nope"}, wantUsage: true},
		{name: "positional argument", args: []string{"extra"}, wantUsage: true},
		{name: "too few rounds", args: []string{"--rounds", "2"}, wantUsage: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Common{Rounds: 5, Fio: "fio"}
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			c.Register(fs)
			err := Parse(fs, tc.args)
			if err == nil {
				err = c.Check()
			}
			var u UsageError
			switch {
			case tc.wantUsage:
				if !errors.As(err, &u) {
					t.Fatalf("err = %v, want a UsageError", err)
				}
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"measured", nil, ExitOK},
		{"help", flag.ErrHelp, ExitOK},
		{"interrupted", fmt.Errorf("round 2: %w", context.Canceled), ExitInterrupted},
		{"usage", UsageError{errors.New("bad")}, ExitUsage},
		{"fio missing", fmt.Errorf("x: %w", UsageError{ErrFioMissing}), ExitUsage},
		{"tool failed", errors.New("fio: exit status 1"), ExitRunFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if got := ExitCode("x-vs-fio", tc.err, &b); got != tc.want {
				t.Errorf("ExitCode = %d, want %d", got, tc.want)
			}
			if tc.want != ExitOK && !strings.HasPrefix(b.String(), "x-vs-fio: ") {
				t.Errorf("message %q lacks the program's name", b.String())
			}
		})
	}
}

func TestAbs(t *testing.T) {
	c := Common{Base: "/caller"}
	for in, want := range map[string]string{"": "", "/abs": "/abs", "rel/x": "/caller/rel/x"} {
		if got := c.Abs(in); got != want {
			t.Errorf("Abs(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSetupFailures(t *testing.T) {
	base := t.TempDir()
	fakeFio := filepath.Join(base, "fio")
	if err := os.WriteFile(fakeFio, []byte("#!/bin/sh\necho fio-9.99\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		c    Common
		is   error
	}{
		{"no fio", Common{Fio: filepath.Join(base, "no-such-fio"), Base: base}, ErrFioMissing},
		{"--dir missing", Common{Fio: fakeFio, Dir: "missing", Base: base}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, err := Setup(context.Background(), tc.c, "x-vs-fio", io.Discard)
			var u UsageError
			if env != nil || !errors.As(err, &u) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("Setup = %v, %v; want a UsageError (%v)", env, err, tc.is)
			}
		})
	}
	entries, _ := os.ReadDir(base)
	if len(entries) != 1 {
		t.Errorf("Setup left files in %s: %v", base, entries)
	}
}

func TestSetupGivenTools(t *testing.T) {
	base := t.TempDir()
	fakeFio := filepath.Join(base, "fio")
	if err := os.WriteFile(fakeFio, []byte("#!/bin/sh\necho fio-9.99\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env, err := Setup(context.Background(), Common{Fio: fakeFio, Etcdbench: "bin/etcdbench", Base: base}, "x-vs-fio", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(env.Dir, ".gitignore")); err != nil || !strings.HasSuffix(string(b), "\n*\n") {
		t.Errorf("the temporary test directory has no .gitignore of *: %q, %v", b, err)
	}
	if env.FioVersion != "fio-9.99" || env.Etcdbench != filepath.Join(base, "bin/etcdbench") || filepath.Dir(env.Dir) != base {
		t.Errorf("env = %+v", env)
	}
	runErr := errors.New("run failed")
	err = runErr
	env.Release(&err)
	if err != runErr {
		t.Errorf("Release replaced the run's error with %v", err)
	}
	if _, err := os.Stat(env.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary test directory survived Release: %v", err)
	}
	err = nil
	env.Release(&err) // nothing left to remove
	if err != nil {
		t.Errorf("second Release: %v", err)
	}
}

func TestParseDurations(t *testing.T) {
	ds, err := ParseDurations("rtts", "0, 2ms,120ms")
	if err != nil || len(ds) != 3 || ds[0] != 0 || ds[1] != 2*time.Millisecond || ds[2] != 120*time.Millisecond {
		t.Errorf("got %v, %v", ds, err)
	}
	for _, s := range []string{"", "2ms,,", "-1ms", "soon"} {
		if _, err := ParseDurations("rtts", s); !errors.As(err, new(UsageError)) {
			t.Errorf("%q: %v, want a usage error", s, err)
		}
	}
}
