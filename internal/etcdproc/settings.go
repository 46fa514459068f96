package etcdproc

import "strings"

// Settings are etcd's settings as its command line and environment give
// them: flags by name (without dashes) and ETCD_* variables.
type Settings struct {
	Flags, Env map[string]string
}

// ParseSettings reads an etcd command line (--name=value and --name
// value, with one dash or two, as Go's flag package takes them; the last
// wins) and its environment (/proc/PID/environ: NUL-separated KEY=VALUE).
func ParseSettings(cmdline []string, environ []byte) Settings {
	s := Settings{Flags: map[string]string{}, Env: map[string]string{}}
	for i := 1; i < len(cmdline); i++ {
		a := cmdline[i]
		if a == "--" {
			break
		}
		name, ok := strings.CutPrefix(a, "--")
		if !ok {
			if name, ok = strings.CutPrefix(a, "-"); !ok {
				continue
			}
		}
		if n, v, eq := strings.Cut(name, "="); eq {
			s.Flags[n] = v
			continue
		}
		// etcd takes no arguments: a word after a flag is its value
		// (a boolean flag's value needs --flag=value).
		if i+1 < len(cmdline) && !strings.HasPrefix(cmdline[i+1], "-") {
			s.Flags[name] = cmdline[i+1]
			i++
		}
	}
	for _, kv := range strings.Split(string(environ), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			s.Env[k] = v
		}
	}
	return s
}

// Get is a setting's value: the flag's, else the environment variable's
// (etcd reads ETCD_NAME for --name), else "".
func (s Settings) Get(flag string) string {
	if v := s.Flags[flag]; v != "" {
		return v
	}
	return s.Env["ETCD_"+strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))]
}
