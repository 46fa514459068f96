package main

import (
	"fmt"
	"io"

	"golang.org/x/sys/unix"

	"etcdbench/internal/disk"
	"etcdbench/internal/units"
)

func termios(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}

// progressLine redraws one status line on a terminal once a second.
type progressLine struct {
	w     io.Writer
	total int
	name  string
	index int
}

func newProgressLine(w io.Writer, total int) *progressLine {
	return &progressLine{w: w, total: total}
}

// start announces the next workload.
func (p *progressLine) start(i int, name string) {
	p.index, p.name = i, name
	fmt.Fprintf(p.w, "\r\033[K%s", p.prefix())
}

func (p *progressLine) prefix() string {
	if p.total > 1 {
		return fmt.Sprintf("[%d/%d] %s", p.index+1, p.total, p.name)
	}
	return p.name
}

func (p *progressLine) update(pr disk.Progress) {
	line := fmt.Sprintf("%s %4.0fs  %d samples  p99 %s  above threshold: %d",
		p.prefix(), pr.Elapsed.Seconds(), pr.Ops, units.FormatDuration(pr.P99), pr.Exceed)
	if d := pr.Decision; d.NEff > 0 {
		line += fmt.Sprintf("  P(above) %.2f%%..%.2f%% (limit 1%%)", 100*d.Lower, 100*d.Upper)
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
}

func (p *progressLine) clear() { fmt.Fprint(p.w, "\r\033[K") }
