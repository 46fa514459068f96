package disk

import (
	"testing"
	"time"

	"etcdbench/internal/stats"
)

// A run's decision waits for its Hold (the capacity sweep's backend
// holds a step until its commits can be judged), and the cap ends it.
func TestSampledHold(t *testing.T) {
	held := 0
	sm := newSampled(stats.StopRule{Threshold: 10 * time.Millisecond, Quantile: 0.99, Confidence: 0.5, Interval: time.Second}, ModeAdaptive, nil)
	sm.hold = func() bool { held++; return held < 3 }
	start := time.Now()
	sm.begin(start)
	stopped := 0
	for i := 1; i <= 5000 && stopped == 0; i++ {
		if sm.add(time.Microsecond, start.Add(time.Duration(i)*time.Millisecond)) {
			stopped = i
		}
	}
	if held != 3 || stopped == 0 || sm.Decision.Outcome != stats.Pass {
		t.Errorf("held %d times, stopped after %d ms with %q: want a pass that waited for the third look", held, stopped, sm.Decision.Outcome)
	}
}
