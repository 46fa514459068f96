package main

import (
	"bytes"
	"errors"
	"fmt"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/result"
)

// answer is what a timed command answered: the result's worst verdict,
// and the capacity sweep's answer (capacity's estimate of etcd's rate, or
// its disk's side without one, etcd capacity's, or the coarse ladder
// inside check).
type answer struct {
	Status string  `json:"status"` // PASS, WARN or FAIL; "" when the result has none
	Rate   float64 `json:"rate"`   // the highest rate that passed; 0: none did
	Upper  float64 `json:"upper"`  // the lowest that failed; 0: none did
	Unit   string  `json:"unit"`
	Bend   string  `json:"bend"` // what bends the curve, or limits etcd
}

// errNoCapacity is returned by parseAnswer for a result without a capacity
// sweep: every timed command runs one.
var errNoCapacity = errors.New("command-time: the result has no capacity workload")

// parseAnswer reads an etcdbench -o json result: its status and the first
// workload that holds a capacity answer.
func parseAnswer(b []byte) (answer, error) {
	js, err := cmp.FirstJSON(b)
	if err != nil {
		return answer{}, err
	}
	doc, err := result.Read(bytes.NewReader(js))
	if err != nil {
		return answer{}, fmt.Errorf("reading etcdbench's JSON result: %w", err)
	}
	var a answer
	if doc.Status != nil {
		a.Status = doc.Status.String()
	}
	for _, w := range doc.Workloads {
		if c := w.Capacity; c != nil {
			a.Rate, a.Upper, a.Unit, a.Bend = c.Rate, c.Upper, c.Unit, string(c.Bend)
			if e := c.Etcd; e != nil {
				// capacity's answer: its estimate of etcd's rate.
				a.Rate, a.Upper, a.Unit, a.Bend = e.Rate, e.Upper, "puts/s", "limited by "+string(e.LimitedBy)
			}
			return a, nil
		}
	}
	return a, errNoCapacity
}

// String says the answer in a few words: "14.7k..16.2k writes/s (queueing),
// PASS", or ">= 14.7k writes/s (every step passed), PASS".
func (a answer) String() string {
	var s string
	switch {
	case a.Upper > 0:
		s = fmt.Sprintf("%s..%s %s (%s)", rate(a.Rate), rate(a.Upper), a.Unit, a.Bend)
	default:
		s = fmt.Sprintf(">= %s %s (every step passed)", rate(a.Rate), a.Unit)
	}
	if a.Status != "" {
		s += ", " + a.Status
	}
	return s
}
