package main

import (
	"crypto/tls"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/run"
)

// redacted replaces the password of --user in the recorded command line.
const redacted = "REDACTED"

// securityFlags are etcdctl's TLS and auth flags.
type securityFlags struct {
	tls  tlsFlags
	auth etcdload.Credentials
}

func (f *securityFlags) register(fs *pflag.FlagSet) {
	f.tls.register(fs)
	fs.StringVar(&f.auth.User, "user", "", "NAME[:PASSWORD] for etcd's auth; without the password it is read from --password-file, $"+etcdload.PasswordEnv+" or a prompt on a terminal (never stored in the result)")
	fs.StringVar(&f.auth.PasswordFile, "password-file", "", "read the password of --user NAME from this file (its first line)")
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
	if err := f.auth.Check(cmd.Flags().Changed("user")); err != nil {
		return sec, nil, err
	}
	eps := append([]string(nil), endpoints...)
	if !f.tls.files.Empty() {
		var err error
		if eps, err = withScheme(eps, true, "--endpoints"); err != nil {
			return sec, nil, err
		}
		if sec.tls, err = f.tls.files.Config(); err != nil {
			return sec, nil, err
		}
	}
	var err error
	sec.user, sec.password, err = f.auth.Resolve(cmd.Context(), stdin, prompt)
	if err != nil {
		return sec, nil, err
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
