package main

import (
	"fmt"
	"io"

	"golang.org/x/sys/unix"

	"etcdbench/internal/disk"
	"etcdbench/internal/report"
	"etcdbench/internal/stats"
)

func termios(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}

// progressLine redraws one status line on a terminal once a second.
type progressLine struct {
	w    io.Writer
	rule stats.StopRule
}

func newProgressLine(w io.Writer, rule stats.StopRule) *progressLine {
	return &progressLine{w: w, rule: rule}
}

func (p *progressLine) update(pr disk.Progress) {
	line := fmt.Sprintf("%5.0fs  %d fdatasyncs  p99 %s  above %s: %d",
		pr.Elapsed.Seconds(), pr.Ops, report.Duration(pr.P99), report.Duration(p.rule.Threshold), pr.Exceed)
	if d := pr.Decision; d.NEff > 0 {
		line += fmt.Sprintf("  P(>%s) %.2f%%..%.2f%% (limit %.0f%%)", report.Duration(p.rule.Threshold), 100*d.Lower, 100*d.Upper, 100*(1-p.rule.Quantile))
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
}

func (p *progressLine) clear() { fmt.Fprint(p.w, "\r\033[K") }
