package main

import (
	"time"

	"etcdbench/bench/internal/cmp"
)

// The tests of this package were written when the helpers below lived
// here; they moved to bench/internal/cmp, shared with the other
// comparisons, and the tests keep reaching them by their old names.
type target = cmp.Target

var (
	median    = cmp.Median
	medianDur = cmp.MedianDur
	ratio     = cmp.Ratio[time.Duration]
	fmtDur    = cmp.FmtDur
)
