package session

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"time"

	"etcdbench/internal/disk"
	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

// Options open a session.
type Options struct {
	// Dir is the directory under test; the session writes only in a
	// scratch directory inside it.
	Dir string
	// Need is the free space the run needs in Dir (disk.SpaceNeeded,
	// EmbeddedSpace); Hint says what to do when Dir has less.
	Need int64
	Hint string
	Args []string
	// Progress is a terminal for the live line, or nil; Steps is how many
	// workloads the line counts.
	Progress io.Writer
	Steps    int
	// RunLonger is the command's flag for a longer run, named in the
	// advice of a disk verdict the run ended before deciding
	// (verdict.Thresholds.RunLonger); empty names none.
	RunLonger string
}

// Session is one run in progress: its envelope, its live line and the
// embedded etcd it started, if any.
type Session struct {
	// Run is the result record and the scratch directory (nil Scratch
	// for a session against an external cluster).
	Run *run.Run
	// Progress is the live line (nil without a terminal; every method of
	// a nil line does nothing).
	Progress  *run.Progress
	cluster   *etcdcluster.Cluster
	runLonger string
}

// Open checks o.Dir and its free space, creates the scratch directory in
// it (removing the ones killed runs left) and starts the result with the
// environment under o.Dir. Close must be deferred on success.
func Open(o Options) (*Session, error) {
	r, err := run.Open(o.Dir, o.Need, o.Hint, o.Args)
	if err != nil {
		return nil, err
	}
	return &Session{Run: r, Progress: run.NewProgress(o.Progress, o.Steps), runLonger: o.RunLonger}, nil
}

// External starts a session that writes nothing on this machine: a load
// on a running cluster. Its environment is this machine's.
func External(args []string, progress io.Writer, steps int) *Session {
	return &Session{Run: run.New(args), Progress: run.NewProgress(progress, steps)}
}

// Disk runs ws in order in scratch/disk, judged by etcd's thresholds,
// the live line counting them from 0, then removes what they wrote so
// that the embedded etcd has the space. It stops at the first error and
// returns the results so far, an interrupted workload's included, with
// what its WAL workloads measured, typed.
func (s *Session) Disk(ctx context.Context, ws []disk.Named) ([]result.Workload, disk.Measured, error) {
	dir := filepath.Join(s.Run.Scratch.Path, "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, disk.Measured{}, err
	}
	th := verdict.Defaults()
	th.RunLonger = s.runLonger
	env := disk.Env{Dir: dir, Root: "/", Facts: s.Run.Result.Environment, Thresholds: th, OnSecond: disk.ShowOn(s.Progress)}
	wls, m, err := disk.RunSuite(ctx, env, ws, s.Progress.Start)
	if err == nil {
		err = os.RemoveAll(dir)
	}
	return wls, m, err
}

// EtcdDir is where the embedded etcd keeps its members' data: scratch/etcd.
func (s *Session) EtcdDir() string { return filepath.Join(s.Run.Scratch.Path, "etcd") }

// StartEtcd starts the embedded etcd of every command in scratch/etcd
// (o.Dir is set there), each member in a process of its own, as
// deployed: sharing the load generator's Go runtime, etcd's WAL syncs
// would wait for CPU behind the clients (see docs/check.md,
// Prediction). Close stops it if StopEtcd has not.
//
// A session runs one embedded etcd at a time: a second start (capacity's
// sides, one after another) stops the first and removes its data.
func (s *Session) StartEtcd(ctx context.Context, o etcdcluster.Options) (*etcdcluster.Cluster, error) {
	o.Dir = s.EtcdDir()
	if s.cluster != nil {
		_ = s.StopEtcd() // closed by its user already, who had its error
		if err := os.RemoveAll(o.Dir); err != nil {
			return nil, err
		}
		if err := Settle(ctx, s.Run.Dir, s.Run.Result.Environment); err != nil {
			return nil, err
		}
	}
	if err := os.Mkdir(o.Dir, 0o700); err != nil {
		return nil, err
	}
	o.OwnProcess = true
	c, err := etcdcluster.Start(ctx, o)
	if err != nil {
		return nil, err
	}
	s.cluster = c
	return c, nil
}

// SettleQuiet and SettleBound are how long the device under a run's
// directory must have been quiet before the next sweep starts, and the
// longest that is waited for.
const (
	SettleQuiet = 500 * time.Millisecond
	SettleBound = 10 * time.Second
)

// Settle flushes the filesystem under dir and waits until its device
// (facts' Device) is quiet (sysinfo.Settle), so that the writeback one
// sweep left does not land in the next: capacity's sides, one after
// another on one disk.
func Settle(ctx context.Context, dir string, facts sysinfo.Facts) error {
	if dir == "" {
		return nil // a run on a cluster of the user's: nothing of ours on a disk
	}
	dev := ""
	if facts.Device != nil {
		dev = facts.Device.Name
	}
	_, err := sysinfo.Settle(ctx, "/", dir, dev, SettleQuiet, SettleBound)
	return err
}

// StopEtcd stops the embedded etcd, if one was started, within a bound
// (see etcdcluster.Cluster.Close); the error says which member had to be
// stopped the hard way. It can be called more than once.
func (s *Session) StopEtcd() error { return s.cluster.Close() }

// EmbeddedSpace is the free space an embedded etcd needs: two 64 MB WAL
// segments per member (the current one and the preallocated next) plus
// a bbolt file and slack.
func EmbeddedSpace(members int) int64 { return int64(members) * (2*64e6 + 64<<20) }

// Finish clears the live line, the measuring being over, and puts the
// workloads wls into the result, with the notes about stale scratch
// directories, marks an interrupted run and stamps the end (see
// run.Run.Finish; callers that drop partial workloads on an error do so
// before).
func (s *Session) Finish(ctx context.Context, wls []result.Workload, err error) (*result.Result, error) {
	s.Progress.Clear()
	return s.Run.Finish(ctx, wls, err)
}

// Close ends the session on every path out of the run: it clears the
// live line, stops the embedded etcd if it still runs and removes the
// scratch directory; when that fails and *errp is nil, the failure
// becomes *errp. Deferred as defer s.Close(&err), it runs before
// anything is reported.
func (s *Session) Close(errp *error) {
	s.Progress.Clear()
	_ = s.StopEtcd() // a caller that reports a hard stop called StopEtcd
	s.Run.Close(errp)
}
