package etcdload

import (
	"fmt"
	"math"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/verdict"
)

// buildWorkload turns what the clients recorded into the result record.
func buildWorkload(l Load, agg *aggregator, out *Outcome, interrupted bool) (result.Workload, error) {
	elapsed := out.End.Sub(out.Start)
	kind := KindOf(l.Op)
	var lats []result.Latency
	for i, h := range agg.hists {
		if i > 0 && h.TotalCount() == 0 && kind.rollup {
			continue // a mixed load of ranges only has no put latencies
		}
		enc, err := stats.Encode(h)
		if err != nil {
			return result.Workload{}, err
		}
		lats = append(lats, result.Latency{Name: agg.names[i], Summary: stats.Summarize(h), Histogram: enc})
		if i == 0 && agg.names[0] == requestLatency {
			r := lats[0].Summary
			out.Request = &r
		}
	}
	ops := agg.all.TotalCount()
	var failed int64
	for _, n := range out.Errors {
		failed += n
	}
	w := result.Workload{
		Name:        l.Name(),
		Description: description(l),
		Parameters:  l.parameters(),
		Stop:        stop(l, sent(l, agg)+failed, interrupted),
		Ops:         ops,
		DurationNs:  elapsed.Nanoseconds(),
		Latencies:   lats,
		Series:      agg.series(int(math.Ceil(elapsed.Seconds()))),
		Verdicts:    []verdict.Verdict{},
		Notes:       errorNotes(out.Errors),
		Figures: []result.Figure{{
			Name: "failed_requests", Value: float64(failed), Unit: "count",
			Description: "requests that returned an error (not in the latencies); see the notes for their kinds",
		}},
	}
	if kind.puts != nil {
		kv := int64(len(l.Prefix()) + l.KeySize + l.ValSize)
		w.Bytes = kind.puts(l, func(i int) int64 { return agg.hists[i].TotalCount() }) * kv
	}
	if s := elapsed.Seconds(); s > 0 {
		w.OpsPerSec = float64(ops) / s
		w.BytesPerSec = float64(w.Bytes) / s
	}
	if l.Rate > 0 {
		w.Figures = append(w.Figures, result.Figure{
			Name: "target_rate", Value: l.Rate, Unit: "ops/s",
			Description: "requests per second asked for (open loop: latency counts from each request's due time)",
		})
	}
	if l.Rate > 0 && l.Duration > 0 && !interrupted {
		due := int64(math.Ceil(l.Duration.Seconds() * l.Rate))
		if l.Total > 0 {
			due = min(due, l.Total)
		}
		if unsent := due - sent(l, agg) - failed; unsent > 0 {
			w.Figures = append(w.Figures, result.Figure{
				Name: "unsent_requests", Value: float64(unsent), Unit: "count",
				Description: "requests due within the duration that were never sent: the clients fell more than 1 s behind the rate, so the server did not keep up",
			})
			w.Notes = append(w.Notes, fmt.Sprintf("%d of the %d requests due in %v were not sent: the cluster did not keep up with %g requests/s", unsent, due, l.Duration, l.Rate))
		}
	}
	return w, nil
}

func description(l Load) string {
	cons := map[string]string{Linearizable: "linearizable", Serializable: "serializable"}[l.Consistency]
	what := KindOf(l.Op).describe(l, cons)
	loop := "closed loop"
	if l.Rate > 0 {
		loop = fmt.Sprintf("open loop at %g requests/s", l.Rate)
	}
	return fmt.Sprintf("etcd %s from %d clients over %d connections, %s, under %s", what, l.Clients, l.Conns, loop, l.Prefix())
}

func stop(l Load, sent int64, interrupted bool) result.Stop {
	s := result.Stop{Mode: "count", Reason: fmt.Sprintf("%d requests sent", sent)}
	if l.Total == 0 || (l.Duration > 0 && sent < l.Total) {
		s.Mode, s.Reason = "time", "ran for "+l.Duration.Round(time.Millisecond).String()
	}
	if interrupted {
		s.Reason = fmt.Sprintf("interrupted after %d requests", sent)
	}
	return s
}

// sent is the number of requests that succeeded: a watch load's puts, not
// its events.
func sent(l Load, agg *aggregator) int64 {
	return agg.hists[KindOf(l.Op).sentHist].TotalCount()
}
