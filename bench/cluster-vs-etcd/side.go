package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"etcdbench/bench/internal/cmp"
)

// sideAnswer is one etcdbench command's answer for the cluster.
type sideAnswer struct {
	// Rate is the put rate it answers (puts/s), Upper the lowest that
	// failed (0: none did).
	Rate  float64 `json:"rate"`
	Upper float64 `json:"upper,omitempty"`
	// P99 is the put p99 at Rate (0: not given).
	P99 time.Duration `json:"request_p99_ns"`
	// Machines is capacity.cluster.machines.rate, the prediction for
	// three machines (recorded, not judged; 0: none given).
	Machines float64 `json:"machines_rate,omitempty"`
	// From says which part of the result the figures come from:
	// "capacity.cluster", or the fallback for a result without one.
	From string          `json:"from"`
	Wall float64         `json:"wall_s"`
	Raw  json.RawMessage `json:"report,omitempty"`
}

// The parts of etcdbench's result JSON the sides are read from: a
// workload's capacity, its cluster answer (capacity.cluster, for
// --members 3 --peer-rtt R) and its steps.
type (
	resultJSON struct {
		Workloads []workloadJSON `json:"workloads"`
	}
	workloadJSON struct {
		Name     string        `json:"name"`
		Capacity *capacityJSON `json:"capacity"`
	}
	capacityJSON struct {
		Rate    float64      `json:"rate"`
		Upper   float64      `json:"upper"`
		Cluster *clusterJSON `json:"cluster"`
		// Etcd is capacity's estimate of etcd's put rate (its disk and
		// CPU sides), where the result has one.
		Etcd *struct {
			Rate  float64 `json:"rate"`
			Upper float64 `json:"upper"`
		} `json:"etcd"`
		Steps []struct {
			Rate        float64 `json:"rate"`
			Status      string  `json:"status"`
			CommitP99Ns int64   `json:"commit_p99_ns"`
		} `json:"steps"`
	}
	clusterJSON struct {
		Members      int     `json:"members"`
		PeerRTTNs    int64   `json:"peer_rtt_ns"`
		Rate         float64 `json:"rate"`
		Upper        float64 `json:"upper"`
		RequestP99Ns int64   `json:"request_p99_ns"`
		Machines     *struct {
			Rate float64 `json:"rate"`
		} `json:"machines"`
	}
)

// cpuCapacity is the workload of capacity's etcd side: its steps are the
// fallback's when capacity's estimate is that side's rate.
const cpuCapacity = "cpu-capacity"

// parseSide reads an etcdbench capacity result (after anything printed
// before its first '{') for a cluster of members members rtt apart: the
// workload whose capacity.cluster says so gives its rate, upper,
// request p99 and the three machines' rate. A result with no cluster
// answer at all (etcdbench before it) falls back to the workload with a
// capacity (not cpu-capacity): its etcd estimate's rate where it has
// one, else its rate, and the commit p99 of the last passing step at
// that rate (its own steps, then cpu-capacity's).
func parseSide(b []byte, members int, rtt time.Duration) (sideAnswer, error) {
	js, err := cmp.FirstJSON(b)
	if err != nil {
		return sideAnswer{}, err
	}
	var r resultJSON
	if err := json.NewDecoder(bytes.NewReader(js)).Decode(&r); err != nil {
		return sideAnswer{}, fmt.Errorf("reading etcdbench's JSON report: %w", err)
	}
	clusters := 0
	for _, w := range r.Workloads {
		if w.Capacity == nil || w.Capacity.Cluster == nil {
			continue
		}
		clusters++
		c := w.Capacity.Cluster
		if c.Members != members || time.Duration(c.PeerRTTNs) != rtt {
			continue
		}
		a := sideAnswer{Rate: c.Rate, Upper: c.Upper, P99: time.Duration(c.RequestP99Ns), From: "capacity.cluster"}
		if c.Machines != nil {
			a.Machines = c.Machines.Rate
		}
		return a, nil
	}
	if clusters > 0 {
		return sideAnswer{}, fmt.Errorf("etcdbench's report has %d cluster answers, none of %d members %v apart", clusters, members, rtt)
	}
	var head, cpu *capacityJSON
	for _, w := range r.Workloads {
		switch {
		case w.Capacity == nil:
		case w.Name == cpuCapacity:
			cpu = w.Capacity
		case head == nil:
			head = w.Capacity
		}
	}
	if head == nil {
		return sideAnswer{}, errors.New("etcdbench's report has no capacity")
	}
	a := sideAnswer{Rate: head.Rate, Upper: head.Upper, From: "capacity.rate (no capacity.cluster)"}
	if head.Etcd != nil {
		a.Rate, a.Upper, a.From = head.Etcd.Rate, head.Etcd.Upper, "capacity.etcd.rate (no capacity.cluster)"
	}
	for _, c := range []*capacityJSON{head, cpu} {
		if c == nil || a.P99 != 0 {
			continue
		}
		for i := len(c.Steps) - 1; i >= 0; i-- {
			if s := c.Steps[i]; s.Rate == a.Rate && s.Status != "FAIL" {
				a.P99 = time.Duration(s.CommitP99Ns)
				break
			}
		}
	}
	return a, nil
}

// sideArgs are the arguments of etcdbench's command which (sideCapacity
// or sideEtcdCapacity) for members members rtt apart with its data in
// dir; step is etcd capacity's --step ("": its own).
func sideArgs(which, dir string, members int, rtt time.Duration, step string) []string {
	args := []string{"capacity", "--dir", dir, "--members", fmt.Sprint(members), "--peer-rtt", rtt.String(), "--no-progress", "-o", "json"}
	if which == sideEtcdCapacity {
		args = append([]string{"etcd"}, args...)
		if step != "" {
			args = append(args, "--step", step)
		}
	}
	return args
}

// runSide runs etcdbench's command which in a fresh directory under dir
// and reads its answer. Exit 1 is a FAIL verdict in its report, not a
// failure to run.
func runSide(ctx context.Context, bin, dir, which string, members int, rtt time.Duration, step string) (sideAnswer, error) {
	d, err := os.MkdirTemp(dir, which+"-")
	if err != nil {
		return sideAnswer{}, err
	}
	defer os.RemoveAll(d)
	c, err := cmp.RunChild(ctx, []int{0, 1}, bin, sideArgs(which, d, members, rtt, step)...)
	if err != nil {
		return sideAnswer{}, err
	}
	a, err := parseSide(c.Stdout, members, rtt)
	if err != nil {
		return a, fmt.Errorf("%s%s", err, cmp.Tail(c.Stderr))
	}
	a.Wall, a.Raw = c.Wall.Seconds(), cmp.RawJSON(c.Stdout)
	return a, nil
}
