package cmp

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestParseFlags(t *testing.T) {
	parse := func(args []string, stderr io.Writer) (Common, string, error) {
		c := Common{Rounds: 5, Fio: "fio"}
		bs := "4k"
		err := ParseFlags("x-vs-fio", "Compares x.", &c, args, stderr, func(fs *flag.FlagSet) {
			fs.StringVar(&bs, "bs", bs, "bytes per I/O")
		})
		return c, bs, err
	}
	if c, bs, err := parse([]string{"--rounds", "7", "--bs", "1m"}, io.Discard); err != nil || c.Rounds != 7 || bs != "1m" {
		t.Errorf("got %+v, %q, %v; want 7 rounds and --bs 1m", c, bs, err)
	}
	var b strings.Builder
	if _, _, err := parse([]string{"--help"}, &b); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: err = %v", err)
	}
	if out := b.String(); !strings.HasPrefix(out, "usage: bench/x-vs-fio/run [flags]\n\nCompares x.\n\nFlags:\n") ||
		!strings.Contains(out, "-bs string") || !strings.Contains(out, "-rounds int") {
		t.Errorf("--help printed %q", out)
	}
	var u UsageError
	if _, _, err := parse([]string{"--rounds", "2"}, io.Discard); !errors.As(err, &u) {
		t.Errorf("too few rounds: err = %v, want the UsageError of Check", err)
	}
}

func TestExecute(t *testing.T) {
	parse := func(args []string, _ io.Writer) (string, error) {
		if len(args) > 0 {
			return "", UsageError{errors.New("bad")}
		}
		return "opts", nil
	}
	var got string
	run := func(_ context.Context, o string, stdout, _ io.Writer) error {
		got = o
		_, err := io.WriteString(stdout, "ran\n")
		return err
	}
	var out, errb strings.Builder
	if code := Execute(context.Background(), "x-vs-fio", nil, &out, &errb, parse, run); code != ExitOK || got != "opts" || out.String() != "ran\n" {
		t.Errorf("Execute = %d, ran with %q, printed %q", code, got, out.String())
	}
	got = ""
	if code := Execute(context.Background(), "x-vs-fio", []string{"x"}, &out, &errb, parse, run); code != ExitUsage || got != "" ||
		errb.String() != "x-vs-fio: bad\n" {
		t.Errorf("bad flags: Execute = %d, ran with %q, stderr %q; want %d, no run", code, got, errb.String(), ExitUsage)
	}
}
