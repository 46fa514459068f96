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
	enc, err := stats.Encode(agg.all)
	if err != nil {
		return result.Workload{}, err
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
		Stop:        stop(l, ops+failed, interrupted),
		Ops:         ops,
		DurationNs:  elapsed.Nanoseconds(),
		Latencies: []result.Latency{{
			Name: "request", Summary: stats.Summarize(agg.all), Histogram: enc,
		}},
		Series:   agg.series(int(math.Ceil(elapsed.Seconds()))),
		Verdicts: []verdict.Verdict{},
		Notes:    errorNotes(out.Errors),
		Figures: []result.Figure{{
			Name: "failed_requests", Value: float64(failed), Unit: "count",
			Description: "requests that returned an error (not in the latencies); see the notes for their kinds",
		}},
	}
	if l.Op == OpPut {
		w.Bytes = ops * int64(len(l.Prefix())+l.KeySize+l.ValSize)
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
	return w, nil
}

func description(l Load) string {
	what := "puts of one key each"
	if l.Op == OpRange {
		what = "ranges of one key each (" + map[string]string{Linearizable: "linearizable", Serializable: "serializable"}[l.Consistency] + ")"
	}
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
