package etcdproc

import (
	"fmt"
	"strings"

	"etcdbench/internal/run"
)

// FindOne returns the pid of the only etcd process under procRoot. None,
// or several, is a usage error that says what to give instead.
func FindOne(procRoot string) (int, error) {
	ps, err := Find(procRoot)
	if err != nil {
		return 0, err
	}
	switch len(ps) {
	case 0:
		return 0, run.Usagef("no etcd process found in %s; give --pid PID, or --data-dir DIR to read a stopped etcd's WAL", procRoot)
	case 1:
		return ps[0].PID, nil
	}
	var list []string
	for _, p := range ps {
		c := strings.Join(p.Cmdline, " ")
		if len(c) > 60 {
			c = c[:57] + "..."
		}
		list = append(list, fmt.Sprintf("%d (%s)", p.PID, c))
	}
	return 0, run.Usagef("%d etcd processes: %s; choose one with --pid", len(ps), strings.Join(list, "; "))
}
