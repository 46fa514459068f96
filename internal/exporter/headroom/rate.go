package headroom

import (
	"errors"
	"fmt"
	"time"
)

// errOneSample is why a rate has no value before its second sample.
var errOneSample = errors.New("one sample so far: the rate needs two")

// counterWindow turns samples of a counter into its rate over the
// samples of the last window, as Prometheus' rate does: bounded memory
// (the samples of one window), a reset (the counter going down, etcd
// restarted) starts again from the sample after it.
type counterWindow struct {
	window  time.Duration
	samples []sample
}

type sample struct {
	at time.Time
	v  float64
}

// add records the counter's value v at time at.
func (c *counterWindow) add(at time.Time, v float64) {
	if n := len(c.samples); n > 0 && v < c.samples[n-1].v {
		c.samples = c.samples[:0] // reset
	}
	c.samples = append(c.samples, sample{at, v})
	// Keep one sample at or before the window's start, so the rate
	// covers the whole window once it can.
	i := 0
	for i+1 < len(c.samples) && !c.samples[i+1].at.After(at.Add(-c.window)) {
		i++
	}
	c.samples = append(c.samples[:0], c.samples[i:]...)
}

// clear forgets every sample (the counter could not be read).
func (c *counterWindow) clear() { c.samples = c.samples[:0] }

// perSecond is the counter's rate between the oldest and the newest
// sample kept, and the time they span.
func (c *counterWindow) perSecond() (float64, time.Duration, error) {
	if len(c.samples) < 2 {
		return 0, 0, errOneSample
	}
	first, last := c.samples[0], c.samples[len(c.samples)-1]
	d := last.at.Sub(first.at)
	if d <= 0 {
		return 0, 0, fmt.Errorf("samples at the same time")
	}
	return (last.v - first.v) / d.Seconds(), d, nil
}
