package etcdproc

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNone is returned by FindOne when no etcd process runs: the caller
// says what to give instead (a pid, an offline data dir).
var ErrNone = errors.New("no etcd process found")

// ManyError is returned by FindOne when several etcd processes run: the
// caller says how to choose one.
type ManyError struct {
	// Procs are the etcd processes found.
	Procs []Process
}

// Error lists the processes, each with the start of its command line.
func (e *ManyError) Error() string {
	var list []string
	for _, p := range e.Procs {
		c := strings.Join(p.Cmdline, " ")
		if len(c) > 60 {
			c = c[:57] + "..."
		}
		list = append(list, fmt.Sprintf("%d (%s)", p.PID, c))
	}
	return fmt.Sprintf("%d etcd processes: %s", len(e.Procs), strings.Join(list, "; "))
}

// FindOne returns the pid of the only etcd process under procRoot. None
// is ErrNone (wrapped, naming procRoot); several is a *ManyError.
func FindOne(procRoot string) (int, error) {
	ps, err := Find(procRoot)
	if err != nil {
		return 0, err
	}
	switch len(ps) {
	case 0:
		return 0, fmt.Errorf("%w in %s", ErrNone, procRoot)
	case 1:
		return ps[0].PID, nil
	}
	return 0, &ManyError{Procs: ps}
}
