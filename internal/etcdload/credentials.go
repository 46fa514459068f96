package etcdload

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"etcdbench/internal/run"
)

// PasswordEnv is the environment variable a password for --user NAME is
// read from when neither --user NAME:PASSWORD nor --password-file gives one.
const PasswordEnv = "ETCDBENCH_PASSWORD"

// Credentials is etcd's auth as etcdctl's flags give it: User is --user
// (NAME or NAME:PASSWORD), PasswordFile --password-file.
type Credentials struct {
	User, PasswordFile string
}

// Check refuses what cannot name a user and one password: a password file
// without a user, an empty name, a password given twice.
func (c Credentials) Check(userGiven bool) error {
	name, _, hasPass := strings.Cut(c.User, ":")
	switch {
	case c.PasswordFile != "" && c.User == "":
		return run.Usagef("--password-file needs --user NAME")
	case userGiven && name == "":
		return run.Usagef("--user %q: want NAME or NAME:PASSWORD", strings.Repeat("*", len(c.User)))
	case hasPass && c.PasswordFile != "":
		return run.Usagef("--user NAME:PASSWORD and --password-file are alternatives")
	}
	return nil
}

// Resolve returns the user's name and password: from --user
// NAME:PASSWORD, the first line of --password-file, $ETCDBENCH_PASSWORD,
// or a prompt with echo off when stdin is a terminal (prompt is where it
// asks). No user: "", "".
func (c Credentials) Resolve(ctx context.Context, stdin *os.File, prompt io.Writer) (user, password string, err error) {
	name, pass, hasPass := strings.Cut(c.User, ":")
	if name == "" {
		return "", "", nil
	}
	switch {
	case hasPass:
		password = pass
	case c.PasswordFile != "":
		b, err := os.ReadFile(c.PasswordFile)
		if err != nil {
			return "", "", fmt.Errorf("reading the password of --user %s: %w", name, err)
		}
		password, _, _ = strings.Cut(string(b), "\n")
		password = strings.TrimSuffix(password, "\r")
	case os.Getenv(PasswordEnv) != "":
		password = os.Getenv(PasswordEnv)
	case stdin != nil && run.IsTerminal(stdin):
		if password, err = readPassword(ctx, stdin, prompt, name); err != nil {
			return "", "", err
		}
	default:
		return "", "", run.Usagef("no password for --user %s: give --user %s:PASSWORD, --password-file FILE or $%s, or run on a terminal to be asked", name, name, PasswordEnv)
	}
	if password == "" {
		return "", "", run.Usagef("empty password for --user %s", name)
	}
	return name, password, nil
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
