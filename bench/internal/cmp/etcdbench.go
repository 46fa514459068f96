package cmp

import (
	"bytes"
	"fmt"
	"time"

	"etcdbench/internal/result"
)

// EtcdbenchWorkload reads an `etcdbench disk <name> -o json` report (after
// anything printed before its first '{') and returns the workload called
// name.
func EtcdbenchWorkload(b []byte, name string) (*result.Workload, error) {
	js, err := FirstJSON(b)
	if err != nil {
		return nil, err
	}
	doc, err := result.Read(bytes.NewReader(js))
	if err != nil {
		return nil, fmt.Errorf("reading etcdbench's JSON report: %w", err)
	}
	for i := range doc.Workloads {
		if doc.Workloads[i].Name == name {
			return &doc.Workloads[i], nil
		}
	}
	return nil, fmt.Errorf("etcdbench's JSON report has no %q workload", name)
}

// FigureOf returns the workload's figure called name.
func FigureOf(w *result.Workload, name string) (float64, error) {
	for _, f := range w.Figures {
		if f.Name == name {
			return f.Value, nil
		}
	}
	return 0, fmt.Errorf("etcdbench's %s workload has no figure %q", w.Name, name)
}

// SelfCPU is the CPU time etcdbench measured for its own timed part of w
// (getrusage around it), 0 when it did not report one.
func SelfCPU(w *result.Workload) time.Duration {
	if w.Process == nil {
		return 0
	}
	return time.Duration(w.Process.UserNs + w.Process.SystemNs)
}
