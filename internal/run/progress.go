package run

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Progress redraws one status line on a terminal once a second: which
// workload of how many runs, and its live figures.
type Progress struct {
	w     io.Writer
	total int
	name  string
	index int
}

// NewProgress returns a progress line on w for a run of total workloads,
// or nil when w is nil (no terminal): every method of a nil *Progress does
// nothing, so callers need not check.
func NewProgress(w io.Writer, total int) *Progress {
	if w == nil {
		return nil
	}
	return &Progress{w: w, total: total}
}

// Start announces workload i (from 0), named name.
func (p *Progress) Start(i int, name string) {
	if p == nil {
		return
	}
	p.index, p.name = i, name
	fmt.Fprintf(p.w, "\r\033[K%s", p.prefix())
}

func (p *Progress) prefix() string {
	if p.total > 1 {
		return fmt.Sprintf("[%d/%d] %s", p.index+1, p.total, p.name)
	}
	return p.name
}

// Show shows the running workload's figures after its name.
func (p *Progress) Show(figures string) {
	if p == nil {
		return
	}
	fmt.Fprintf(p.w, "\r\033[K%s %s", p.prefix(), figures)
}

// Requests returns an etcd load's OnSecond that shows the requests sent
// so far, or nil without a line.
func (p *Progress) Requests() func(time.Duration, int64) {
	if p == nil {
		return nil
	}
	return func(el time.Duration, sent int64) {
		p.Show(fmt.Sprintf("%4.0fs  %d requests sent", el.Seconds(), sent))
	}
}

// Clear erases the line.
func (p *Progress) Clear() {
	if p == nil {
		return
	}
	fmt.Fprint(p.w, "\r\033[K")
}

// Terminal returns w when it is a terminal that a live line may go to:
// not turned off (off: --no-progress) and a text report (JSON and
// Prometheus output stay clean for the programs that read them). It
// returns nil otherwise.
func Terminal(w io.Writer, off bool, output string) io.Writer {
	if off || output != "text" || !IsTerminal(w) {
		return nil
	}
	return w
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
