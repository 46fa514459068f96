package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"

	"etcdbench/bench/internal/cmp"
)

// sideRun is what `etcdbench drill` answered for one fault.
type sideRun struct {
	// OutageSeconds, NewLeaderSeconds and RestartSeconds are its
	// .drill.outage_seconds, .new_leader_seconds and .restart_seconds
	// (null: it gave none).
	OutageSeconds    cmp.JSONFloat `json:"outage_s"`
	NewLeaderSeconds cmp.JSONFloat `json:"new_leader_s"`
	RestartSeconds   cmp.JSONFloat `json:"restart_s"`
	FailedRequests   cmp.JSONFloat `json:"failed_requests"`
	// LateUntil is its .late_until_seconds, Elections its .elections,
	// AfterEndOutage its .outage_after_end_seconds, P99During its
	// .p99_during_seconds, DefragSeconds and DBSizeBytes its
	// .defrag_seconds and .db_size_bytes (defrag-leader) (recorded, not
	// judged).
	LateUntil      cmp.JSONFloat `json:"late_until_s"`
	Elections      cmp.JSONFloat `json:"elections"`
	AfterEndOutage cmp.JSONFloat `json:"after_end_outage_s"`
	P99During      cmp.JSONFloat `json:"p99_during_s"`
	DefragSeconds  cmp.JSONFloat `json:"defrag_s"`
	DBSizeBytes    cmp.JSONFloat `json:"db_size_bytes"`
	// Args are the arguments etcdbench ran with.
	Args []string `json:"args,omitempty"`
	// From says where the figures came from: ".drill" or ".drill.runs[0]".
	From string          `json:"from"`
	Wall float64         `json:"wall_s"`
	Raw  json.RawMessage `json:"report,omitempty"`
}

// The part of etcdbench's result JSON the side is read from: each
// fault's workload, drill-<fault>, and its .drill.
type (
	sideResultJSON struct {
		Workloads []struct {
			Name  string          `json:"name"`
			Drill *sideFiguresRun `json:"drill"`
		} `json:"workloads"`
	}
	sideFigures struct {
		Fault            string   `json:"fault"`
		OutageSeconds    *float64 `json:"outage_seconds"`
		NewLeaderSeconds *float64 `json:"new_leader_seconds"`
		FailedRequests   *float64 `json:"failed_requests"`
		RestartSeconds   *float64 `json:"restart_seconds"`
		LateUntil        *float64 `json:"late_until_seconds"`
		Elections        *float64 `json:"elections"`
		AfterEndOutage   *float64 `json:"outage_after_end_seconds"`
		P99During        *float64 `json:"p99_during_seconds"`
		DefragSeconds    *float64 `json:"defrag_seconds"`
		DBSizeBytes      *float64 `json:"db_size_bytes"`
	}
	sideFiguresRun struct {
		sideFigures
		Runs []sideFigures `json:"runs"`
	}
)

func orNaN(p *float64) cmp.JSONFloat {
	if p == nil {
		return cmp.JSONFloat(math.NaN())
	}
	return cmp.JSONFloat(*p)
}

// parseSide reads fault's answer from an `etcdbench drill -o json`
// report (after anything printed before its first '{'): the workload
// drill-<fault>'s .drill figures, or those of its one run where the
// summary lacks them. A figure it does not give is NaN.
func parseSide(b []byte, fault string) (sideRun, error) {
	var r sideResultJSON
	if err := cmp.DecodeFirst(b, &r); err != nil {
		return sideRun{}, fmt.Errorf("reading etcdbench's JSON report: %w", err)
	}
	var names []string
	for _, w := range r.Workloads {
		names = append(names, w.Name)
		if w.Name != "drill-"+fault {
			continue
		}
		if w.Drill == nil {
			return sideRun{}, fmt.Errorf("etcdbench's workload %s has no drill", w.Name)
		}
		f, from := w.Drill.sideFigures, ".drill"
		if f.OutageSeconds == nil && len(w.Drill.Runs) == 1 {
			f, from = w.Drill.Runs[0], ".drill.runs[0]"
		}
		if f.Fault != "" && f.Fault != fault {
			return sideRun{}, fmt.Errorf("etcdbench's workload %s says its fault is %q", w.Name, f.Fault)
		}
		s := sideRun{OutageSeconds: orNaN(f.OutageSeconds), NewLeaderSeconds: orNaN(f.NewLeaderSeconds),
			RestartSeconds: orNaN(f.RestartSeconds), FailedRequests: orNaN(f.FailedRequests),
			LateUntil: orNaN(f.LateUntil), Elections: orNaN(f.Elections), AfterEndOutage: orNaN(f.AfterEndOutage),
			P99During: orNaN(f.P99During), DefragSeconds: orNaN(f.DefragSeconds), DBSizeBytes: orNaN(f.DBSizeBytes), From: from}
		if f.OutageSeconds == nil {
			return s, fmt.Errorf("etcdbench's workload %s gives no outage_seconds", w.Name)
		}
		return s, nil
	}
	return sideRun{}, fmt.Errorf("etcdbench's report has no workload drill-%s (it has %q)", fault, names)
}

// sideArgs are `etcdbench drill`'s arguments for fault with p's
// timeouts and its data in dir: without pre-vote as the truth runs
// unless --pre-vote, and the db filled to --db-size (in bytes) for
// defrag-leader.
func sideArgs(dir, fault string, p profile, o options) []string {
	args := []string{"drill", "--dir", dir, "--faults", fault, "--rounds", "1",
		"--rate", strconv.FormatFloat(o.Rate, 'f', -1, 64), "--clients", strconv.Itoa(o.sideClients()),
		"--fault-for", o.FaultFor.String(), "--before", o.Before.String(), "--after", o.After.String(),
		"--request-timeout", o.RequestTimeout.String(),
		"--heartbeat-interval", fmtMillis(p.Heartbeat), "--election-timeout", fmtMillis(p.Election)}
	if !o.PreVote {
		args = append(args, "--pre-vote=false")
	}
	if fault == faultDefrag {
		args = append(args, "--db-size", strconv.FormatInt(o.DBSize, 10))
	}
	return append(args, "--no-progress", "-o", "json")
}

func fmtMillis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }

// runSide runs `etcdbench drill` for fault in a fresh directory under
// dir. Exit 1 is a FAIL verdict in its report, not a failure to run.
func runSide(ctx context.Context, bin, dir, fault string, p profile, o options) (sideRun, error) {
	d, err := os.MkdirTemp(dir, "etcdbench-")
	if err != nil {
		return sideRun{}, err
	}
	defer os.RemoveAll(d)
	args := sideArgs(d, fault, p, o)
	c, err := cmp.RunChild(ctx, []int{0, 1}, bin, args...)
	if err != nil {
		return sideRun{}, err
	}
	s, err := parseSide(c.Stdout, fault)
	s.Wall, s.Raw, s.Args = c.Wall.Seconds(), cmp.RawJSON(c.Stdout), args
	if err != nil {
		return s, fmt.Errorf("%w%s", err, cmp.Tail(c.Stderr))
	}
	return s, nil
}
