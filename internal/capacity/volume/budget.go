package volume

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"etcdbench/internal/capacity/sweep"
	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// Probe reads the block device's counters around each step, and the
// background its other writers make (measured idle before the sweep).
type Probe struct {
	root, name                 string
	ok                         bool
	bgIOPS, bgBytes, bgFlushes float64 // per second, idle
	idles                      int     // idle readings taken
}

// Reading is the device's counters at one moment.
type Reading struct {
	t  time.Time
	ds sysinfo.DiskStats
	ok bool
}

// NewProbe reads the device name's counters under root (/proc); it is
// OK when they can be read.
func NewProbe(root, name string) *Probe {
	p := &Probe{root: root, name: name}
	p.ok = name != "" && p.Read().ok
	return p
}

// OK says whether the device's counters can be read.
func (p *Probe) OK() bool { return p.ok }

// Background is the other writers' rate, per second, measured idle
// (Idle): writes, bytes and flushes.
func (p *Probe) Background() (iops, bytes, flushes float64) {
	return p.bgIOPS, p.bgBytes, p.bgFlushes
}

// Read reads the device's counters now.
func (p *Probe) Read() Reading {
	if p.name == "" {
		return Reading{}
	}
	ds, err := sysinfo.ReadDiskstats(p.root, p.name)
	return Reading{t: time.Now(), ds: ds, ok: err == nil}
}

// Idle measures the device's background writes for d; measured again
// (after the sweep), the lower of the two readings is kept. On a shared
// machine one idle second says little about the next fifteen (1-4,000
// writes/s from one second to the next), so the background subtracted
// from the sweep's cost per put is the lower of a second before it and
// one after it: a steady writer beside etcd shows in both, a burst in
// one only.
func (p *Probe) Idle(ctx context.Context, d time.Duration) error {
	if !p.ok {
		return nil
	}
	a := p.Read()
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return ctx.Err()
	}
	b := p.Read()
	secs := b.t.Sub(a.t).Seconds()
	if !a.ok || !b.ok || secs <= 0 {
		return nil
	}
	iops := float64(b.ds.WriteIOs-a.ds.WriteIOs) / secs
	bytes := float64(b.ds.WriteSectors-a.ds.WriteSectors) * 512 / secs
	flushes := float64(b.ds.FlushIOs-a.ds.FlushIOs) / secs
	if p.idles > 0 {
		iops, bytes, flushes = min(iops, p.bgIOPS), min(bytes, p.bgBytes), min(flushes, p.bgFlushes)
	}
	p.bgIOPS, p.bgBytes, p.bgFlushes = iops, bytes, flushes
	p.idles++
	return nil
}

// NetOfOthers takes the background writers' rate (bgIOPS, bgBytes,
// bgFlushes per second) out of each step's cost per put, never below 0;
// the steps' device figures stay the whole device's.
func NetOfOthers(c *result.Capacity, bgIOPS, bgBytes, bgFlushes float64) {
	net := func(per, total, bg float64) float64 {
		if per <= 0 || total <= 0 {
			return per
		}
		return max(total-bg, 0) / (total / per) // total/per is the step's puts per second
	}
	for i := range c.Steps {
		if d := c.Steps[i].Device; d != nil {
			d.WritesPerEntry = net(d.WritesPerEntry, d.WriteIOPS, bgIOPS)
			d.BytesPerEntry = net(d.BytesPerEntry, d.WriteBytesPerSec, bgBytes)
			d.FlushesPerEntry = net(d.FlushesPerEntry, d.FlushesPerSec, bgFlushes)
		}
	}
	c.BackgroundWriteIOPS = bgIOPS
}

// Step is what the device did between a and b for entries puts.
func (p *Probe) Step(a, b Reading, entries int64) *result.StepDevice {
	secs := b.t.Sub(a.t).Seconds()
	if !a.ok || !b.ok || secs <= 0 || b.ds.WriteIOs < a.ds.WriteIOs {
		return nil
	}
	// The whole device's figures: NetOfOthers takes the other writers'
	// share out of the cost per put once the sweep is over.
	d := &result.StepDevice{
		WriteIOPS:        float64(b.ds.WriteIOs-a.ds.WriteIOs) / secs,
		WriteBytesPerSec: float64(b.ds.WriteSectors-a.ds.WriteSectors) * 512 / secs,
		FlushesPerSec:    float64(b.ds.FlushIOs-a.ds.FlushIOs) / secs,
	}
	if entries > 0 {
		perSec := float64(entries) / secs
		d.WritesPerEntry, d.BytesPerEntry, d.FlushesPerEntry = d.WriteIOPS/perSec, d.WriteBytesPerSec/perSec, d.FlushesPerSec/perSec
	}
	return d
}

// Volume detection: the device's writes per second within volumeSpread
// over at least two failing steps spanning volumeSpan of offered rate.
const volumeSpread, volumeSpan = 1.25, 1.5

// Budgets returns what a volume must give for each of the sweep's marks
// and sizes, from the device cost per put of the passing step nearest
// each rate (in ratio), and the volume found when a cap on the device's
// writes bends the curve (nil otherwise).
func Budgets(c *result.Capacity, th verdict.Thresholds) ([]result.CapacityBudget, *result.CapacityVolume) {
	vol := findVolume(c)
	var out []result.CapacityBudget
	add := func(kind string, marks []result.CapacityMark) {
		for _, m := range marks {
			s := nearestCost(c.Steps, m.Rate)
			if s == nil {
				continue
			}
			b := result.CapacityBudget{
				Name: m.Name, Rate: m.Rate, Kind: kind, CostFrom: s.Rate,
				WriteIOPS: m.Rate * s.Device.WritesPerEntry, WriteBytesPerSec: m.Rate * s.Device.BytesPerEntry,
				FlushesPerSec: m.Rate * s.Device.FlushesPerEntry,
				SyncP99Ns:     units.FromSeconds(th.WALFsyncP99.Limit).Nanoseconds(),
				CommitP99Ns:   units.FromSeconds(th.BackendCommitP99.Limit).Nanoseconds(),
			}
			if vol != nil {
				fits := vol.WriteIOPS >= b.WriteIOPS
				b.Fits = &fits
			}
			out = append(out, b)
		}
	}
	add("check-perf", c.Marks)
	add("cluster-size", c.Sizes)
	return out, vol
}

// Burst finds a volume that gave an earlier, passing step well more
// writes per second (volumeSpread over) than its cap at the failing
// steps: a burst bucket whose credits the sweep spent (gp2's volumes, or
// any throttle with a burst allowance), or a cache that filled. It
// records the burst in c.Volume and lowers the answer to the highest
// passing step the sustained cap gave: the passes on the burst hold
// only while credits last. No-op without a volume.
func Burst(c *result.Capacity) {
	v := c.Volume
	if v == nil {
		return
	}
	limit := v.WriteIOPS * volumeSpread
	var burst, sustained float64
	for _, s := range c.Steps {
		if !sweep.Counted(s) || !sweep.Passed(s) || s.Device == nil {
			continue
		}
		if s.Device.WriteIOPS > limit {
			burst = max(burst, s.Device.WriteIOPS)
		} else {
			sustained = max(sustained, s.Rate)
		}
	}
	if burst == 0 {
		return
	}
	v.BurstWriteIOPS = burst
	v.Evidence += fmt.Sprintf("; earlier steps got up to %.0f writes/s: the volume bursts above its cap while it can (I/O credits) and sustains about %.0f", burst, v.WriteIOPS)
	sweep.Discount(c, sustained, fmt.Sprintf("the passes above %.0f %s ran on the volume's burst (up to %.0f writes/s, against about %.0f sustained) and hold only while its credits last", sustained, c.Unit, burst, v.WriteIOPS))
}

// nearestCost is the passing, counted step with device figures whose rate
// is nearest rate in ratio; when none passed, the nearest counted one
// (its batches are those of a struggling disk, but its cost per put is
// the best figure there is); nil when no step has device figures.
func nearestCost(steps []result.CapacityStep, rate float64) *result.CapacityStep {
	for _, passing := range []bool{true, false} {
		var best *result.CapacityStep
		for i := range steps {
			s := &steps[i]
			if !sweep.Counted(*s) || (passing && !sweep.Passed(*s)) || s.Device == nil || s.Device.WritesPerEntry <= 0 {
				continue
			}
			if best == nil || math.Abs(math.Log(s.Rate/rate)) < math.Abs(math.Log(best.Rate/rate)) {
				best = s
			}
		}
		if best != nil {
			return best
		}
	}
	return nil
}

// findVolume returns the device's write IOPS when they stayed flat over
// the failing steps while the offered rate rose: the volume's cap. Flat
// is within volumeSpread of the failing steps' median, for at least two
// of them spanning volumeSpan of offered rate; a step outside it (other
// writers on a shared device) is left out.
func findVolume(c *result.Capacity) *result.CapacityVolume {
	// Flatness is judged on what the sweep wrote, net of the other
	// writers' rate: with others writing 600/s, the device's total stayed
	// flat over steps of 13 to 100 writes/s on a disk that had no cap.
	own := func(s result.CapacityStep) float64 { return max(s.Device.WriteIOPS-c.BackgroundWriteIOPS, 0) }
	var iops []float64
	for _, s := range c.Steps {
		if !sweep.Overruled(s) && sweep.Failed(s) && s.Device != nil && own(s) > 0 {
			iops = append(iops, own(s))
		}
	}
	if len(iops) < 2 {
		return nil
	}
	slices.Sort(iops)
	med := iops[len(iops)/2]
	if len(iops)%2 == 0 {
		med = (iops[len(iops)/2-1] + iops[len(iops)/2]) / 2
	}
	var flat []result.CapacityStep
	for _, s := range c.Steps {
		if !sweep.Overruled(s) && sweep.Failed(s) && s.Device != nil &&
			own(s)*volumeSpread >= med && own(s) <= med*volumeSpread {
			flat = append(flat, s)
		}
	}
	if len(flat) < 2 {
		return nil
	}
	lo, hi := own(flat[0]), own(flat[0])
	rlo, rhi := flat[0].Rate, flat[0].Rate
	var sumIOPS, sumBytes float64
	for _, s := range flat {
		lo, hi = min(lo, own(s)), max(hi, own(s))
		rlo, rhi = min(rlo, s.Rate), max(rhi, s.Rate)
		sumIOPS += own(s)
		sumBytes += s.Device.WriteBytesPerSec
	}
	if rhi < volumeSpan*rlo {
		return nil
	}
	n := float64(len(flat))
	others := ""
	if c.BackgroundWriteIOPS > 0 {
		others = fmt.Sprintf("; other processes wrote %.0f/s more, not counted in it", c.BackgroundWriteIOPS)
	}
	return &result.CapacityVolume{
		WriteIOPS: sumIOPS / n, WriteBytesPerSec: sumBytes / n,
		Evidence: fmt.Sprintf("the device's writes stayed at %.0f-%.0f per second over %d failing steps while the offered rate rose %.1fx (%.0f to %.0f %s): a cap on its write IOPS%s",
			lo, hi, len(flat), rhi/rlo, rlo, rhi, c.Unit, others),
	}
}
