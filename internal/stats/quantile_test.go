package stats

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// distributions with a known exact quantile function.
type dist struct {
	name   string
	sample func(r *rand.Rand) float64 // nanoseconds
	quant  func(q float64) float64
}

var dists = []dist{
	{"exponential mean 1ms",
		func(r *rand.Rand) float64 { return 1e6 * r.ExpFloat64() },
		func(q float64) float64 { return -1e6 * math.Log(1-q) }},
	{"lognormal median 500us",
		func(r *rand.Rand) float64 { return 5e5 * math.Exp(0.8*r.NormFloat64()) },
		func(q float64) float64 { return 5e5 * math.Exp(0.8*normQuantile(q)) }},
	{"pareto tail from 200us",
		func(r *rand.Rand) float64 { return 2e5 / math.Pow(1-r.Float64(), 1/2.5) },
		func(q float64) float64 { return 2e5 / math.Pow(1-q, 1/2.5) }},
}

func normQuantile(q float64) float64 { return math.Sqrt2 * math.Erfinv(2*q-1) }

func TestPercentilesMatchSortedSamples(t *testing.T) {
	for _, d := range dists {
		t.Run(d.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			h := NewLatencyHistogram()
			xs := make([]int64, 20001)
			for i := range xs {
				xs[i] = int64(d.sample(r)) + 1
				Record(h, time.Duration(xs[i]))
			}
			sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
			for _, p := range []float64{50, 90, 99, 99.9, 100} {
				rank := int(p/100*float64(len(xs)) + 0.5) // nearest rank, as HdrHistogram
				if rank < 1 {
					rank = 1
				}
				exact := xs[rank-1]
				got := h.ValueAtPercentile(p)
				if rel := math.Abs(float64(got-exact)) / float64(exact); rel > 0.002 {
					t.Errorf("p%v = %d, exact %d (relative error %.4f > 0.2 %%)", p, got, exact, rel)
				}
			}
		})
	}
}

func TestSummaryAndEncodingRoundTrip(t *testing.T) {
	h := NewLatencyHistogram()
	for i := 1; i <= 1000; i++ {
		Record(h, time.Duration(i)*time.Microsecond)
	}
	s := Summarize(h, 99.99)
	if s.Count != 1000 || len(s.Percentiles) != len(DefaultPercentiles)+1 {
		t.Fatalf("summary %+v", s)
	}
	if p99, ok := s.At(99); !ok || math.Abs(float64(p99)-990e3) > 990 {
		t.Fatalf("p99 = %d, %v", p99, ok)
	}
	e, err := Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(e)
	if err != nil {
		t.Fatal(err)
	}
	if back.TotalCount() != 1000 || back.ValueAtPercentile(99) != h.ValueAtPercentile(99) {
		t.Fatal("decoded histogram differs")
	}
	if _, err := Decode(EncodedHistogram{Encoding: "csv"}); err == nil {
		t.Fatal("unknown encoding accepted")
	}
	if _, err := Decode(EncodedHistogram{Encoding: HistogramEncoding, Data: "!!"}); err == nil {
		t.Fatal("bad base64 accepted")
	}
}

// TestConfidenceCoverage checks by simulation that the intervals contain the
// true value at least as often as promised.
func TestConfidenceCoverage(t *testing.T) {
	const trials, n, level = 1500, 1000, 0.95
	// Monte Carlo error with 1500 trials is about 0.6 %; allow 3 sigma.
	const floor = level - 0.017
	for _, d := range dists {
		t.Run(d.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 11))
			threshold := d.quant(0.985) // true exceedance probability 1.5 %
			trueP99 := d.quant(0.99)
			var coveredP, coveredQ int
			h := NewLatencyHistogram()
			for range trials {
				h.Reset()
				k := 0
				for range n {
					x := d.sample(r)
					if x > threshold {
						k++
					}
					Record(h, time.Duration(x))
				}
				alpha := 1 - level
				lo := LowerBound(float64(k), n, 1-alpha/2)
				hi := UpperBound(float64(k), n, 1-alpha/2)
				if lo <= 0.015 && 0.015 <= hi {
					coveredP++
				}
				ci := PercentileCI(h, 0.99, n, level)
				// The histogram's own 0.1 % resolution is part of the interval.
				if float64(ci.LowerNs)*0.999 <= trueP99 && (ci.UpperOpen || trueP99 <= float64(ci.UpperNs)*1.001) {
					coveredQ++
				}
			}
			if c := float64(coveredP) / trials; c < floor {
				t.Errorf("exceedance interval covered the truth in %.3f of trials, want >= %.2f", c, level)
			}
			if c := float64(coveredQ) / trials; c < floor {
				t.Errorf("p99 interval covered the truth in %.3f of trials, want >= %.2f", c, level)
			}
		})
	}
}

func TestPercentileCIEdges(t *testing.T) {
	h := NewLatencyHistogram()
	if ci := PercentileCI(h, 0.99, 0, 0.95); ci.LowerNs != 0 || ci.UpperNs != 0 {
		t.Fatalf("empty histogram gave %+v", ci)
	}
	for i := 1; i <= 50; i++ {
		Record(h, time.Duration(i)*time.Millisecond)
	}
	ci := PercentileCI(h, 0.99, 50, 0.95)
	if !ci.UpperOpen {
		t.Fatalf("50 samples cannot bound p99 from above, got %+v", ci)
	}
	if ci.LowerNs > ci.UpperNs {
		t.Fatalf("interval inverted: %+v", ci)
	}
}
