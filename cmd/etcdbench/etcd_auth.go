package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"etcdbench/internal/run"
)

// passwordEnv is the environment variable a password for --user NAME is
// read from when neither --user NAME:PASSWORD nor --password-file gives one.
const passwordEnv = "ETCDBENCH_PASSWORD"

// redacted replaces the password of --user in the recorded command line.
const redacted = "REDACTED"

// securityFlags are etcdctl's TLS and auth flags.
type securityFlags struct {
	tls          tlsFlags
	user         string
	passwordFile string
}

func (f *securityFlags) register(fs *pflag.FlagSet) {
	f.tls.register(fs)
	fs.StringVar(&f.user, "user", "", "NAME[:PASSWORD] for etcd's auth; without the password it is read from --password-file, $"+passwordEnv+" or a prompt on a terminal (never stored in the result)")
	fs.StringVar(&f.passwordFile, "password-file", "", "read the password of --user NAME from this file (its first line)")
}

// security is the resolved TLS configuration and credentials.
type security struct {
	tls            *tls.Config // nil: no TLS flags
	user, password string
}

// resolve checks the flags against the endpoints, reads the TLS files and
// finds the password. endpoints without a scheme get https:// when TLS is
// configured, so that the client and the /metrics scraper agree.
func (f *securityFlags) resolve(cmd *cobra.Command, endpoints []string, stdin *os.File, prompt io.Writer) (security, []string, error) {
	var sec security
	given := f.tls.given(cmd)
	for _, n := range []string{"user", "password-file"} {
		if cmd.Flags().Changed(n) {
			given = append(given, "--"+n)
		}
	}
	if len(given) == 0 {
		return sec, endpoints, nil
	}
	if len(endpoints) == 0 {
		return sec, nil, run.Usagef("%s: only for --endpoints; the embedded etcd of --dir serves plain HTTP without auth", strings.Join(given, ", "))
	}
	if err := f.tls.check(); err != nil {
		return sec, nil, err
	}
	name, pass, hasPass := strings.Cut(f.user, ":")
	switch {
	case f.passwordFile != "" && f.user == "":
		return sec, nil, run.Usagef("--password-file needs --user NAME")
	case cmd.Flags().Changed("user") && name == "":
		return sec, nil, run.Usagef("--user %q: want NAME or NAME:PASSWORD", strings.Repeat("*", len(f.user)))
	case hasPass && f.passwordFile != "":
		return sec, nil, run.Usagef("--user NAME:PASSWORD and --password-file are alternatives")
	}
	eps := append([]string(nil), endpoints...)
	if !f.tls.files.Empty() {
		var err error
		if eps, err = withScheme(eps, true, "--endpoints"); err != nil {
			return sec, nil, err
		}
		c, err := f.tls.files.Config()
		if err != nil {
			return sec, nil, err
		}
		sec.tls = c
	}
	if name == "" {
		return sec, eps, nil
	}
	sec.user = name
	switch {
	case hasPass:
		sec.password = pass
	case f.passwordFile != "":
		b, err := os.ReadFile(f.passwordFile)
		if err != nil {
			return sec, nil, fmt.Errorf("reading the password of --user %s: %w", name, err)
		}
		sec.password, _, _ = strings.Cut(string(b), "\n")
		sec.password = strings.TrimSuffix(sec.password, "\r")
	case os.Getenv(passwordEnv) != "":
		sec.password = os.Getenv(passwordEnv)
	case stdin != nil && run.IsTerminal(stdin):
		p, err := readPassword(cmd.Context(), stdin, prompt, name)
		if err != nil {
			return sec, nil, err
		}
		sec.password = p
	default:
		return sec, nil, run.Usagef("no password for --user %s: give --user %s:PASSWORD, --password-file FILE or $%s, or run on a terminal to be asked", name, name, passwordEnv)
	}
	if sec.password == "" {
		return sec, nil, run.Usagef("empty password for --user %s", name)
	}
	return sec, eps, nil
}

// redactArgs hides the password of --user in a recorded command line.
func redactArgs(args []string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		if v, ok := strings.CutPrefix(a, "--user="); ok {
			if name, _, has := strings.Cut(v, ":"); has {
				out[i] = "--user=" + name + ":" + redacted
			}
		}
	}
	return out
}

// readPassword asks for name's password on the terminal in with echo
// off, restoring the terminal afterwards; an interrupt while it waits
// returns ctx's error.
func readPassword(ctx context.Context, in *os.File, prompt io.Writer, name string) (string, error) {
	fd := int(in.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return "", fmt.Errorf("reading the password of %s from the terminal: %w", name, err)
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return "", fmt.Errorf("turning off the terminal's echo: %w", err)
	}
	defer func() {
		_ = unix.IoctlSetTermios(fd, unix.TCSETS, old) // best effort: nothing better to do
		fmt.Fprintln(prompt)
	}()
	fmt.Fprintf(prompt, "Password for %s: ", name)
	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	go func() {
		s, err := bufio.NewReader(in).ReadString('\n')
		got <- line{s, err}
	}()
	select {
	case l := <-got:
		if l.err != nil && l.s == "" {
			return "", fmt.Errorf("reading the password of %s from the terminal: %w", name, l.err)
		}
		return strings.TrimRight(l.s, "\r\n"), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
