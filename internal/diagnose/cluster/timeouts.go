package cluster

import (
	"etcdbench/internal/diagnose/data/memory"

	"fmt"
	"math"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"sigs.k8s.io/yaml"

	"etcdbench/internal/diagnose"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

// timeouts are the --heartbeat-interval and --election-timeout a member
// runs with, and where they were read.
type timeouts struct {
	heartbeat, election time.Duration
	// from says where: its command line, its environment, its config
	// file, or etcd's defaults.
	from string
}

// etcd's defaults (server/embed/config.go: DefaultTickMs, DefaultElectionMs).
const (
	defaultHeartbeat = 100 * time.Millisecond
	defaultElection  = time.Second
)

// memberMemoryOf is the memory of the member serving endpoint: its
// resident memory (from its metrics, else its VmRSS when it runs on this
// machine) and, when it runs on this machine, its limit (its cgroup's,
// else the machine's); nil when neither is known.
func memberMemoryOf(root, endpoint string, resident int64) *memberMemory {
	m := &memberMemory{resident: resident}
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		if pid, err := sysinfo.ListeningPID(root+"proc", u.Host); err == nil && pid > 0 {
			m.limit = memory.LimitOf(root, pid)
			if m.resident == 0 {
				m.resident, _ = memory.RSS(root, pid)
			}
		}
	}
	if m.resident == 0 && !m.limit.Known() {
		return nil
	}
	return m
}

// memberTimeouts reads the timeouts of the member serving endpoint when
// it runs on this machine (a static pod's etcd on its node, a systemd
// etcd): the process listening there (sysinfo.ListeningPID), its command
// line, environment and --config-file, as etcd reads them (a config file
// replaces the flags; an environment variable counts where its flag is
// not given). ok is false when the member is not on this machine or its
// process cannot be read: etcd's /metrics do not expose them. procRoot
// is /proc's mount point.
func memberTimeouts(procRoot, endpoint string) (timeouts, bool) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return timeouts{}, false
	}
	pid, err := sysinfo.ListeningPID(procRoot, u.Host)
	if err != nil || pid == 0 {
		return timeouts{}, false
	}
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return timeouts{}, false
	}
	p, err := fs.Proc(pid)
	if err != nil {
		return timeouts{}, false
	}
	args, err := p.CmdLine()
	if err != nil {
		return timeouts{}, false
	}
	env, _ := p.Environ() // another user's environment may be unreadable
	t, ok := parseTimeouts(args, env, func(path string) ([]byte, error) {
		if !strings.HasPrefix(path, "/") {
			if cwd, err := p.Cwd(); err == nil {
				path = cwd + "/" + path
			}
		}
		return os.ReadFile(procRoot + "/" + strconv.Itoa(pid) + "/root" + path) // its mount namespace's file
	})
	return t, ok
}

// parseTimeouts reads the timeouts from an etcd's arguments (args[0] the
// program), its environment (KEY=VALUE) and its config file, read by
// read; false when a value given cannot be read.
func parseTimeouts(args, env []string, read func(string) ([]byte, error)) (timeouts, bool) {
	flags := map[string]string{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, val, has := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !has && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			val = args[i+1]
			i++
		}
		flags[name] = val
	}
	envs := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			envs[k] = v
		}
	}
	t := timeouts{heartbeat: defaultHeartbeat, election: defaultElection, from: "etcd's defaults (neither on its command line, in its environment nor in a config file)"}
	if cf := first(flags["config-file"], envs["ETCD_CONFIG_FILE"]); cf != "" {
		b, err := read(cf)
		if err != nil {
			return t, false
		}
		var c struct {
			Heartbeat *int64 `json:"heartbeat-interval"`
			Election  *int64 `json:"election-timeout"`
		}
		if err := yaml.Unmarshal(b, &c); err != nil {
			return t, false
		}
		if c.Heartbeat != nil {
			t.heartbeat = time.Duration(*c.Heartbeat) * time.Millisecond
		}
		if c.Election != nil {
			t.election = time.Duration(*c.Election) * time.Millisecond
		}
		t.from = "its config file " + cf
		return t, true
	}
	var where []string
	for _, s := range []struct {
		flag, env string
		dst       *time.Duration
	}{{"heartbeat-interval", "ETCD_HEARTBEAT_INTERVAL", &t.heartbeat}, {"election-timeout", "ETCD_ELECTION_TIMEOUT", &t.election}} {
		v, from := flags[s.flag], "its command line"
		if v == "" {
			v, from = envs[s.env], "its environment"
		}
		if v == "" {
			continue
		}
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms <= 0 {
			return t, false
		}
		*s.dst = time.Duration(ms) * time.Millisecond
		if len(where) == 0 || where[len(where)-1] != from {
			where = append(where, from)
		}
	}
	if len(where) > 0 {
		t.from = strings.Join(where, " and ") + " (etcd's default for what is not there)"
	}
	return t, true
}

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

var timeoutsTh = verdict.Threshold{ID: "election_timeout", Title: "election timeout", Unit: "s",
	Source: "etcd docs tuning.md: heartbeat interval about the round trip between members, election timeout about ten times it"}

// checkTimeouts compares the timeouts each member runs with (where this
// machine could read them) with the recommendation for the cluster's
// worst round trip (verdict.Timeouts): a WARN when the heartbeat is under
// the round trip (followers wait for heartbeats a round trip late) or the
// election timeout under the recommended (an election on a blip of the
// network).
func checkTimeouts(v *view, _ Thresholds) []diagnose.Finding {
	rtt, from := v.worstRTT()
	if math.IsNaN(rtt) {
		return nil
	}
	hb, et := verdict.Timeouts(time.Duration(rtt * float64(time.Second)))
	var out []diagnose.Finding
	for i, t := range v.timeouts {
		if t == nil || (t.heartbeat >= time.Duration(rtt*float64(time.Second)) && t.election >= et) {
			continue
		}
		th := timeoutsTh
		th.Limit = et.Seconds()
		out = append(out, diagnose.Finding{
			Member: v.labels[i], Status: verdict.Warn, Threshold: th, Value: t.election.Seconds(),
			Evidence: fmt.Sprintf("%s runs with --heartbeat-interval %d --election-timeout %d (%s), for a round trip of %s between members (%s)",
				v.labels[i], t.heartbeat.Milliseconds(), t.election.Milliseconds(), t.from, secs(rtt), from),
			Advice: fmt.Sprintf("run it with --heartbeat-interval %d --election-timeout %d (%s): a heartbeat under the round trip reaches followers late, and an election timeout under about ten round trips starts an election on a blip of the network", hb.Milliseconds(), et.Milliseconds(), verdict.TimeoutsSource),
		})
	}
	return out
}
