package zoo

import (
	"context"
	"fmt"
	"time"
)

// credits is a burstable volume's I/O credit balance: it fills at the
// baseline rate up to its size, each write I/O spends one; the volume
// runs at its peak rate while the balance lasts and at the baseline once
// it is spent (gp2's model).
type credits struct {
	baseline, size float64
	left           float64
	bursting       bool
}

// spend accounts ios write I/Os done over dt and says whether the volume
// bursts from now on. It goes back to bursting once a second of the
// peak's excess is saved again, so that it does not flap every tick.
func (c *credits) spend(ios int64, dt time.Duration, peak float64) bool {
	c.left = min(c.size, c.left+c.baseline*dt.Seconds()-float64(ios))
	if c.left <= 0 {
		c.left = 0
		c.bursting = false
	} else if !c.bursting && c.left >= peak-c.baseline {
		c.bursting = true
	}
	return c.bursting
}

// burstTick is how often the burst bucket reads its cgroup's counters.
const burstTick = 100 * time.Millisecond

// BurstBucket is the disk behind a blkio throttle at peak write IOPS
// while its credits last and at baseline once they are spent; it starts
// with size credits, refilled at baseline per second. A sweep that runs
// on credits measures the burst, not the volume.
func BurstBucket(peak, baseline, size int64) Storage {
	name := "burst"
	return Storage{Name: name, InCgroup: true,
		About: fmt.Sprintf("the disk's write IOPS capped at %d while I/O credits last, then at %d (%d credits, refilled at %d/s), by the kernel's block throttle (cgroup)", peak, baseline, size, baseline),
		setup: func(ctx context.Context, dir string, p *Place) error {
			if err := throttled(p, dir, name, Limits{WriteIOPS: peak}); err != nil {
				return err
			}
			c := &credits{baseline: float64(baseline), size: float64(size), left: float64(size), bursting: true}
			ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			done := make(chan error, 1)
			spend := make(chan chan error)
			go func() { done <- p.account(ctx, c, peak, baseline, spend) }()
			p.onClose(func() error { cancel(); return <-done })
			p.Spend = func(sctx context.Context) error {
				reply := make(chan error, 1)
				select {
				case spend <- reply:
				case <-sctx.Done():
					return sctx.Err()
				case <-ctx.Done():
					return fmt.Errorf("zoo: %s: closed", name)
				}
				return <-reply
			}
			return nil
		}}
}

// account follows the cgroup's write I/Os and switches its limit between
// peak and baseline as the credits run out and come back.
// A request on spend empties the balance (see Place.Spend).
func (p *Place) account(ctx context.Context, c *credits, peak, baseline int64, spend chan chan error) error {
	start := time.Now()
	last, _, err := p.Cgroup.Writes()
	if err != nil {
		return err
	}
	t := time.NewTicker(burstTick)
	defer t.Stop()
	prev := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case reply := <-spend:
			c.left, c.bursting = 0, false
			err := p.Cgroup.SetLimits(Limits{WriteIOPS: baseline})
			if err == nil {
				p.note("%.1fs: credits spent on request: write IOPS at the baseline, %d", time.Since(start).Seconds(), baseline)
			}
			reply <- err
			if err != nil {
				return err
			}
		case now := <-t.C:
			ios, _, err := p.Cgroup.Writes()
			if err != nil {
				return err
			}
			was := c.bursting
			if c.spend(ios-last, now.Sub(prev), float64(peak)) == was {
				last, prev = ios, now
				continue
			}
			last, prev = ios, now
			lim, what := baseline, "credits spent: write IOPS at the baseline"
			if c.bursting {
				lim, what = peak, "credits back: write IOPS at the peak"
			}
			if err := p.Cgroup.SetLimits(Limits{WriteIOPS: lim}); err != nil {
				return err
			}
			p.note("%.1fs: %s, %d", now.Sub(start).Seconds(), what, lim)
		}
	}
}
