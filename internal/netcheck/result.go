package netcheck

import (
	"errors"
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/verdict"
)

// Description says what `etcdbench net` does, for reports.
const Description = "the network between this node and a peer, before etcd runs on them: heartbeat-sized messages echoed until their round trip p99 is decided against the limit, append batches echoed beside them, then a snapshot-sized stream"

// snapshotBytes is the snapshot the stream's rate is turned into a time
// for: 1 GiB.
const snapshotBytes = 1 << 30

func latency(name string, h *hdr.Histogram) result.Latency {
	l := result.Latency{Name: name, Summary: stats.Summarize(h)}
	if enc, err := stats.Encode(h); err == nil {
		l.Histogram = enc
	}
	return l
}

func workload(s Spec, peer string, hb, ap *echoer, series []stats.SecondSample, rule stats.StopRule, d stats.Decision, looks int, took time.Duration) result.Workload {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	th := s.Thresholds
	n := hb.h.TotalCount()
	w := result.Workload{
		Name: "net", Description: Description,
		Parameters: map[string]any{
			"peer": peer, "interval_ns": s.Interval.Nanoseconds(), "message_bytes": s.PingBytes,
			"append_rate": s.AppendRate, "append_bytes": s.AppendBytes,
			"stream_for_ns": s.StreamFor.Nanoseconds(), "stream_max_bytes": s.StreamMax,
			"min_duration_ns": s.MinDuration.Nanoseconds(), "max_duration_ns": s.MaxDuration.Nanoseconds(),
			"confidence": s.Confidence, "timeout_ns": s.Timeout.Nanoseconds(),
		},
		Stop:       result.Stop{Mode: "adaptive", Reason: d.Reason, Outcome: d.Outcome, Looks: looks},
		Ops:        n,
		Bytes:      n * int64(s.PingBytes),
		DurationNs: took.Nanoseconds(),
		Latencies:  []result.Latency{latency("heartbeat_rtt", hb.h)},
		Series:     series,
		Verdicts:   []verdict.Verdict{},
	}
	if took > 0 {
		w.OpsPerSec = float64(n) / took.Seconds()
		w.BytesPerSec = float64(w.Bytes) / took.Seconds()
	}
	lost := max(0, hb.sent-hb.got)
	p50, p99 := time.Duration(hb.h.ValueAtQuantile(50)), time.Duration(hb.h.ValueAtQuantile(99))
	w.Figures = append(w.Figures,
		result.Figure{Name: "rtt_p50", Value: p50.Seconds(), Unit: "s", Description: "round trip p50 of the heartbeat-sized messages"},
		result.Figure{Name: "rtt_p99", Value: p99.Seconds(), Unit: "s", Description: "round trip p99 of the heartbeat-sized messages"},
		result.Figure{Name: "rtt_max", Value: time.Duration(hb.h.Max()).Seconds(), Unit: "s", Description: "slowest round trip of the heartbeat-sized messages"},
		result.Figure{Name: "lost", Value: float64(lost), Unit: "count", Description: fmt.Sprintf("heartbeat-sized messages not answered within %v", s.Timeout)},
	)
	ci := stats.PercentileCI(hb.h, 0.99, d.NEff, s.Confidence)
	w.Latencies[0].P99CI = &ci
	f := verdict.QuantileFigures{
		Value: p99, CI: ci, Outcome: d.Outcome, Level: s.Confidence,
		Method: fmt.Sprintf("stop rule: Clopper-Pearson bounds on the share of round trips over the limit, deflated by the per-second design effect, at %d looks", rule.Looks()),
		Bounds: d.Reason, RunLonger: "--max-duration",
	}
	v := verdict.JudgeQuantile(th.RTTP99, th.Margin, f, "members this far apart make every put and linearizable read wait for it, and heartbeats late: keep them closer, or set the timeouts below for it")
	w.Verdicts = append(w.Verdicts, v)
	if lost > 0 {
		w.Verdicts = append(w.Verdicts, verdict.Verdict{
			Check: "lost_messages", Title: "messages answered", Status: verdict.Fail, Value: float64(lost), Unit: "count", Limit: 1, Comparison: "<",
			Source: "etcd: a heartbeat unanswered for the election timeout starts an election",
			Detail: fmt.Sprintf("%d of %d heartbeat-sized messages came back later than %v or not at all", lost, hb.sent, s.Timeout),
		})
	}
	if ap != nil {
		ap.mu.Lock()
		w.Latencies = append(w.Latencies, latency("append_rtt", ap.h))
		w.Figures = append(w.Figures, result.Figure{Name: "append_rtt_p99", Value: time.Duration(ap.h.ValueAtQuantile(99)).Seconds(), Unit: "s",
			Description: fmt.Sprintf("round trip p99 of %d-byte batches at %.0f/s beside the heartbeats", s.AppendBytes, s.AppendRate)})
		ap.mu.Unlock()
	}
	hbI, et := verdict.Timeouts(p99)
	w.Figures = append(w.Figures,
		result.Figure{Name: "heartbeat_interval", Value: hbI.Seconds(), Unit: "s", Description: "--heartbeat-interval to run members this far apart with (" + verdict.TimeoutsSource + ")"},
		result.Figure{Name: "election_timeout", Value: et.Seconds(), Unit: "s", Description: "--election-timeout to run members this far apart with"},
	)
	w.Notes = append(w.Notes, fmt.Sprintf("timeouts for this round trip (p99 %v): --heartbeat-interval %d --election-timeout %d", p99.Round(10*time.Microsecond), hbI.Milliseconds(), et.Milliseconds()))
	return w
}

func streamFigures(bytes int64, took time.Duration) []result.Figure {
	if bytes == 0 || took <= 0 {
		return nil
	}
	rate := float64(bytes) / took.Seconds()
	return []result.Figure{
		{Name: "stream_bytes_per_sec", Value: rate, Unit: "B/s", Description: fmt.Sprintf("a stream of %d bytes, to the listener's count", bytes)},
		{Name: "snapshot_1gib_seconds", Value: snapshotBytes / rate, Unit: "s", Description: "time to send a 1 GiB snapshot at the stream's rate"},
	}
}

func judgeStream(th verdict.NetworkThresholds, bytes int64, took time.Duration, err error) verdict.Verdict {
	t := th.SnapshotBandwidth
	v := verdict.Verdict{Check: t.ID, Title: t.Title, Unit: t.Unit, Limit: t.Limit, Comparison: ">=", Source: t.Source,
		Confidence: &verdict.Confidence{Method: "one stream, timed to the listener's count"}}
	if err != nil || took <= 0 {
		v.Status = verdict.Fail
		v.Detail = fmt.Sprintf("the stream did not complete: %v", err)
		return v
	}
	v.Value = float64(bytes) / took.Seconds()
	v.Confidence.Decided = true
	if v.Value >= t.Limit {
		v.Status = verdict.Pass
		v.Detail = fmt.Sprintf("%.1f MB/s: a 1 GiB snapshot in %.0f s", v.Value/1e6, snapshotBytes/v.Value)
	} else {
		v.Status = verdict.Fail
		v.Detail = fmt.Sprintf("%.1f MB/s: a 1 GiB snapshot in %.0f s; a new or lagging member waits that long for it", v.Value/1e6, snapshotBytes/v.Value)
	}
	return v
}

// ErrNoNet is returned by PeerNetwork for a result with no net workload.
var ErrNoNet = errors.New("no `etcdbench net` check in it")

// PeerNetwork is the network a net result measured, as members put
// apart on one machine would get it (etcdcluster.Options.PeerRTT and
// PeerJitter): the worst peer's round trip p50, and a jitter that puts
// the p99 where it was (each round trip is spread uniformly over rtt ±
// jitter/2, so its p99 sits about jitter/2 over the median). from names
// the peer.
func PeerNetwork(r *result.Result) (rtt, jitter time.Duration, from string, err error) {
	for _, w := range r.Workloads {
		if w.Name != "net" {
			continue
		}
		p50, p99 := figureOf(w, "rtt_p50"), figureOf(w, "rtt_p99")
		if p50 <= 0 {
			continue
		}
		if d := time.Duration(p50 * float64(time.Second)); d > rtt {
			rtt, from = d, fmt.Sprint(w.Parameters["peer"])
			jitter = min(rtt, time.Duration(2*max(0, p99-p50)*float64(time.Second)))
		}
	}
	if rtt == 0 {
		return 0, 0, "", ErrNoNet
	}
	return rtt.Round(100 * time.Microsecond), jitter.Round(100 * time.Microsecond), from, nil
}

func figureOf(w result.Workload, name string) float64 {
	for _, f := range w.Figures {
		if f.Name == name {
			return f.Value
		}
	}
	return 0
}
