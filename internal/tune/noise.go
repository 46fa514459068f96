package tune

import (
	"math"
	"slices"
)

// Spread is one figure of one combination over its rounds.
type Spread struct {
	// Values are the rounds' values in the order they ran; a round
	// without the figure (no fsync observed, an interrupted run) is left
	// out.
	Values           []float64
	Median, Min, Max float64
}

// NewSpread summarises the values of the rounds; an empty Spread has NaN
// median and bounds.
func NewSpread(vs []float64) Spread {
	s := Spread{Values: vs, Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	if len(vs) == 0 {
		return s
	}
	sorted := slices.Clone(vs)
	slices.Sort(sorted)
	n := len(sorted)
	s.Min, s.Max = sorted[0], sorted[n-1]
	s.Median = sorted[n/2]
	if n%2 == 0 {
		s.Median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return s
}

// N is the number of rounds with the figure.
func (s Spread) N() int { return len(s.Values) }

// MinRounds is the fewest rounds on each side for Separated to decide
// anything: with one value a side there is no spread to compare with.
const MinRounds = 2

// Separated reports whether the difference between a and b is larger than
// the noise, by the rule tune uses: every round of one is above every
// round of the other, so their ranges over the rounds do not even touch.
// It needs MinRounds values on each side.
//
// This is an exact rank test: if both sides came from one distribution
// (the setting made no difference) and their rounds were interleaved in
// time, every ordering of the n+m values would be equally likely, and the
// two orderings that separate them have probability
// ChanceOfSeparation(n, m) = 2 / C(n+m, n): 0.33 at 2 rounds each, 0.10 at
// 3, 0.029 at 4, 0.008 at 5. Ties count as overlap, so the rule errs on
// the side of "within the noise".
func Separated(a, b Spread) bool {
	if a.N() < MinRounds || b.N() < MinRounds {
		return false
	}
	return a.Min > b.Max || b.Min > a.Max
}

// ChanceOfSeparation is the probability that n values and m values drawn
// from one continuous distribution have ranges that do not overlap:
// 2 / C(n+m, n). It is the false-alarm rate of Separated for one pair and
// one figure.
func ChanceOfSeparation(n, m int) float64 {
	if n < 1 || m < 1 {
		return 1
	}
	// C(n+m, n) as a product, in floating point: exact for any round
	// count anyone runs.
	c := 1.0
	for i := 1; i <= n; i++ {
		c = c * float64(m+i) / float64(i)
	}
	return math.Min(1, 2/c)
}
