package disk

import (
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
)

// Sampled is the record of one judged operation (the WAL's fdatasync, a
// backend commit) over a run: its latency histogram, its per-second series,
// how many samples exceeded the threshold, and the adaptive stop rule's
// state. Add is cheap enough for a hot loop; the rule runs once a second.
type Sampled struct {
	Rule     stats.StopRule
	Mode     string // ModeAdaptive, ModeSize, ModeCount or ModeTime
	Hist     *hdr.Histogram
	Series   *stats.Series
	Ops      int64
	Exceed   int64 // samples above Rule.Threshold
	Elapsed  time.Duration
	Decision stats.Decision // the rule's last decision
	Looks    int            // looks that could have decided
	Reason   string         // why the run stopped, in words

	start, nextTick time.Time
	second          int
	onSecond        func(Progress)
	hold            func() bool // see WALConfig.Hold
	// share is the last look's effective slow share; need is what a pass
	// needs at needShare (Rule.SamplesToPassAt), worked out only when asked
	// (it takes up to a millisecond, and only a stretched run asks).
	share, needShare float64
	need             int64
}

// needToPass is the samples a pass needs: SamplesToPass, or more where
// the last look saw slow ones.
func (s *Sampled) needToPass() int64 {
	if s.share <= 0 {
		return s.Rule.SamplesToPass()
	}
	if s.needShare != s.share {
		s.need, s.needShare = s.Rule.SamplesToPassAt(s.share), s.share
	}
	return s.need
}

func newSampled(rule stats.StopRule, mode string, onSecond func(Progress)) *Sampled {
	return &Sampled{Rule: rule, Mode: mode, Hist: stats.NewLatencyHistogram(), Series: stats.NewSeries(), onSecond: onSecond}
}

// begin starts the clock.
func (s *Sampled) begin(now time.Time) {
	s.start, s.nextTick = now, now.Add(time.Second)
}

// add records latency d of an operation that ended at end. It returns true
// when the adaptive rule has decided and the run should stop.
func (s *Sampled) add(d time.Duration, end time.Time) bool {
	stats.Record(s.Hist, d)
	exceeded := d > s.Rule.Threshold
	if exceeded {
		s.Exceed++
	}
	s.Series.Record(d, exceeded)
	s.Ops++
	s.Elapsed = end.Sub(s.start)
	if end.Before(s.nextTick) {
		return false
	}
	for !end.Before(s.nextTick) { // a stall may span several seconds
		s.second++
		s.Series.Close(s.second)
		s.nextTick = s.nextTick.Add(time.Second)
	}
	return s.tick()
}

// tick runs once a second: consult the stop rule and report progress.
func (s *Sampled) tick() bool {
	decided := false
	if s.Mode == ModeAdaptive {
		if s.Elapsed >= s.Rule.MinDuration && s.Ops >= s.Rule.MinSamples {
			s.Looks++
		}
		s.Decision = s.Rule.Decide(s.Ops, s.Exceed, stats.DesignEffect(s.Series.Batches()), s.Elapsed)
		if s.Decision.NEff > 0 {
			s.share = s.Decision.KEff / s.Decision.NEff
		}
		if s.Decision.Outcome != stats.Undecided && !(s.Decision.Outcome == stats.Pass && s.hold != nil && s.hold()) {
			s.Reason = "verdict decided: " + s.Decision.Reason
			decided = true
		}
	}
	if s.onSecond != nil {
		s.onSecond(Progress{
			Elapsed: s.Elapsed, Ops: s.Ops, Exceed: s.Exceed,
			P99: time.Duration(s.Hist.ValueAtPercentile(99)), Decision: s.Decision,
		})
	}
	return decided
}

// stoppedAt records a stop for a reason other than the rule.
func (s *Sampled) stoppedAt(reason string) { s.Reason = reason }

// closeOpenSecond ends the series with the partial second, if it has samples.
func (s *Sampled) closeOpenSecond() {
	if s.Series.Pending() > 0 {
		s.Series.Close(len(s.Series.Samples) + 1)
	}
}

// finish closes the open second and judges the whole run once more, on all
// its samples. An adaptive run keeps the decision it stopped on; one that
// hit its cap is judged as one more look at the same per-look level (its
// looks were already spent). Fixed-amount modes are judged in a single look
// at the overall confidence. The minimums guard only early stops; a run
// shorter than them gets a note, returned for the caller's notes.
func (s *Sampled) finish() (note string) {
	s.closeOpenSecond()
	if s.Mode == ModeAdaptive && s.Decision.Outcome != stats.Undecided {
		return ""
	}
	r := s.Rule
	if s.Mode != ModeAdaptive {
		r.MaxDuration = 0 // one look
	}
	if s.Elapsed < r.MinDuration || s.Ops < r.MinSamples {
		note = fmt.Sprintf("the run (%d samples in %v) was shorter than the %d samples and %v that guard against ending between periodic stalls; its verdict may miss them", s.Ops, s.Elapsed.Round(time.Millisecond), r.MinSamples, r.MinDuration)
	}
	r.MinSamples, r.MinDuration = 0, 0
	s.Decision = r.Decide(s.Ops, s.Exceed, stats.DesignEffect(s.Series.Batches()), s.Elapsed)
	return note
}

// judged is what the verdicts and the result need from a Sampled.
type judged struct {
	latency result.Latency
	p50     time.Duration
	pq      time.Duration // the latency at the rule's quantile
	method  string
	bounds  string
}

// judge summarises the samples under name, with the p99 confidence interval
// and the exceedance bounds, and describes how the decision was reached.
func (s *Sampled) judge(name string) (judged, error) {
	r := s.Rule
	deff := stats.DesignEffect(s.Series.Batches())
	nEff, kEff, lo, hi := stats.Bounds(s.Ops, s.Exceed, deff, 1-(1-r.Confidence)/2)
	ci := stats.PercentileCI(s.Hist, r.Quantile, nEff, r.Confidence)
	enc, err := stats.Encode(s.Hist)
	if err != nil {
		return judged{}, err
	}
	fraction := 0.0
	if s.Ops > 0 {
		fraction = float64(s.Exceed) / float64(s.Ops)
	}
	looks := "one look at the end of the run"
	if s.Mode == ModeAdaptive {
		looks = fmt.Sprintf("up to %d looks, one a second, each at %.4g %% (Bonferroni)", r.Looks(), 100*r.PerLookConfidence())
	}
	return judged{
		latency: result.Latency{
			Name: name, Summary: stats.Summarize(s.Hist), P99CI: &ci, Histogram: enc,
			Exceedance: &result.Exceedance{
				ThresholdNs: r.Threshold.Nanoseconds(), Count: s.Exceed, Fraction: fraction,
				Interval:     stats.Interval{Level: r.Confidence, Lower: lo, Upper: hi},
				DesignEffect: deff, NEff: nEff,
			},
		},
		p50: time.Duration(s.Hist.ValueAtPercentile(50)),
		pq:  time.Duration(s.Hist.ValueAtPercentile(100 * r.Quantile)),
		method: fmt.Sprintf("exact Clopper-Pearson bounds on P(%s > %v) from %d samples, %d above; design effect %.2f from per-second batches (%.0f effective samples); %s",
			name, r.Threshold, s.Ops, s.Exceed, deff, nEff, looks),
		bounds: fmt.Sprintf("P(%s > %v) is between %.3g %% and %.3g %% (%.0f %% two-sided, %.1f effective exceedances)", name, r.Threshold, 100*lo, 100*hi, 100*r.Confidence, kEff),
	}, nil
}

// latency summarises a histogram that no stop rule judges.
func latency(name string, h *hdr.Histogram) (result.Latency, error) {
	enc, err := stats.Encode(h)
	if err != nil {
		return result.Latency{}, err
	}
	return result.Latency{Name: name, Summary: stats.Summarize(h), Histogram: enc}, nil
}
