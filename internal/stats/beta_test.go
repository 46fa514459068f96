package stats

import (
	"math"
	"testing"
)

func binomTail(k, n int, p float64) float64 { // P(B >= k), summed directly
	var s float64
	for i := k; i <= n; i++ {
		lc, _ := math.Lgamma(float64(n + 1))
		l1, _ := math.Lgamma(float64(i + 1))
		l2, _ := math.Lgamma(float64(n - i + 1))
		s += math.Exp(lc - l1 - l2 + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return s
}

func TestRegIncBeta(t *testing.T) {
	cases := []struct {
		name      string
		a, b, x   float64
		want      float64
		tolerance float64
	}{
		{"uniform", 1, 1, 0.3, 0.3, 1e-12},
		{"power a", 3, 1, 0.5, 0.125, 1e-12},
		{"power b", 1, 4, 0.5, 1 - math.Pow(0.5, 4), 1e-12},
		{"symmetric", 7.5, 7.5, 0.5, 0.5, 1e-12},
		{"x=0", 2, 3, 0, 0, 0},
		{"x=1", 2, 3, 1, 1, 0},
		{"binomial tail n=20", 5, 16, 0.1, binomTail(5, 20, 0.1), 1e-10},
		{"binomial tail n=3000", 40, 2961, 0.01, binomTail(40, 3000, 0.01), 1e-9},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := RegIncBeta(c.a, c.b, c.x)
			if math.Abs(got-c.want) > c.tolerance {
				t.Fatalf("I_%v(%v,%v) = %.15g, want %.15g", c.x, c.a, c.b, got, c.want)
			}
		})
	}
	if !math.IsNaN(RegIncBeta(-1, 1, 0.5)) {
		t.Fatal("a <= 0 must give NaN")
	}
}

func TestBetaQuantileInvertsCDF(t *testing.T) {
	for _, ab := range [][2]float64{{1, 1}, {0.5, 3}, {10, 990}, {1, 299}, {5000, 5}} {
		for _, p := range []float64{1e-4, 0.025, 0.5, 0.95, 0.9999} {
			x := BetaQuantile(p, ab[0], ab[1])
			if got := RegIncBeta(ab[0], ab[1], x); math.Abs(got-p) > 1e-9 {
				t.Errorf("Beta(%v,%v): I(quantile(%v)) = %v", ab[0], ab[1], p, got)
			}
		}
	}
}

func TestClopperPearsonBounds(t *testing.T) {
	t.Run("zero exceedances has a closed form", func(t *testing.T) {
		for _, n := range []float64{10, 299, 1000} {
			want := 1 - math.Pow(0.05, 1/n)
			if got := UpperBound(0, n, 0.95); math.Abs(got-want) > 1e-12 {
				t.Fatalf("UpperBound(0,%v) = %v, want %v", n, got, want)
			}
		}
	})
	t.Run("299 clean samples bound p below 1 % at 95 %, 298 do not", func(t *testing.T) {
		if u := UpperBound(0, 299, 0.95); u >= 0.01 {
			t.Fatalf("UpperBound(0,299) = %v", u)
		}
		if u := UpperBound(0, 298, 0.95); u < 0.01 {
			t.Fatalf("UpperBound(0,298) = %v", u)
		}
	})
	t.Run("bounds are exact binomial tails", func(t *testing.T) {
		// The upper bound u for k of n satisfies P(B(n,u) <= k) = 1-level.
		k, n := 7, 500
		u := UpperBound(float64(k), float64(n), 0.95)
		if got := 1 - binomTail(k+1, n, u); math.Abs(got-0.05) > 1e-9 {
			t.Fatalf("P(B <= k | u) = %v, want 0.05", got)
		}
		l := LowerBound(float64(k), float64(n), 0.95)
		if got := binomTail(k, n, l); math.Abs(got-0.05) > 1e-9 {
			t.Fatalf("P(B >= k | l) = %v, want 0.05", got)
		}
	})
	t.Run("edges", func(t *testing.T) {
		if UpperBound(5, 5, 0.95) != 1 || LowerBound(0, 5, 0.95) != 0 || UpperBound(0, 0, 0.95) != 1 {
			t.Fatal("edge bounds wrong")
		}
	})
}
