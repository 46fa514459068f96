package volume

import (
	"strings"
	"testing"
	"time"

	"etcdbench/internal/capacity/sweep"
	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

func costStep(rate float64, pass bool, iops, perPut float64) result.CapacityStep {
	s := result.CapacityStep{Phase: "ladder", Rate: rate, Status: verdict.Pass, Decided: true,
		Device: &result.StepDevice{WriteIOPS: iops, WriteBytesPerSec: 4000 * iops, WritesPerEntry: perPut, BytesPerEntry: 4000 * perPut, FlushesPerEntry: perPut / 3}}
	if !pass {
		s.Status = verdict.Fail
	}
	return s
}

// Each load is costed at the passing step nearest its rate; a cap shows
// as the device's writes flat over the failing steps, and the budgets say
// whether the volume gives them.
func TestBudgets(t *testing.T) {
	c := &result.Capacity{Unit: "writes/s", Marks: sweep.CheckPerfMarks, Sizes: sweep.ClusterSizes, Steps: []result.CapacityStep{
		costStep(100, true, 370, 3.7), costStep(200, true, 640, 3.2), costStep(400, false, 990, 2.5),
		costStep(800, false, 1000, 1.25), costStep(300, true, 900, 3.0),
	}}
	undecided := costStep(1600, true, 1010, 0.63)
	undecided.Decided = false
	c.Steps = append(c.Steps, undecided)
	budgets, vol := Budgets(c, verdict.Defaults())
	if vol == nil || vol.WriteIOPS < 990 || vol.WriteIOPS > 1000 {
		t.Fatalf("volume %+v, want about 1000 write IOPS from the failing steps", vol)
	}
	if len(budgets) != len(sweep.CheckPerfMarks)+len(sweep.ClusterSizes) {
		t.Fatalf("%d budgets", len(budgets))
	}
	want := map[string]float64{"s": 150 * 3.2, "m": 1000 * 3.0, "small": 200 * 3.2}
	for _, b := range budgets {
		if w, ok := want[b.Name]; ok && (b.WriteIOPS < w-0.01 || b.WriteIOPS > w+0.01) {
			t.Errorf("budget %s: %.1f write IOPS, want %.1f", b.Name, b.WriteIOPS, w)
		}
		if b.Fits == nil || *b.Fits != (b.WriteIOPS <= vol.WriteIOPS) {
			t.Errorf("budget %s: fits %v with %.0f needed and %.0f given", b.Name, b.Fits, b.WriteIOPS, vol.WriteIOPS)
		}
		if b.SyncP99Ns != 10e6 || b.CommitP99Ns != 25e6 {
			t.Errorf("budget %s: latencies %d %d", b.Name, b.SyncP99Ns, b.CommitP99Ns)
		}
	}
	// One step with others' writes on the device does not hide the cap.
	c.Steps[3].Device.WriteIOPS = 1400
	c.Steps = append(c.Steps, costStep(1200, false, 1000, 0.8))
	if _, vol := Budgets(c, verdict.Defaults()); vol == nil || vol.WriteIOPS < 990 || vol.WriteIOPS > 1000 {
		t.Errorf("volume %+v with an outlier, want about 1000", vol)
	}
	// Writes that rise with the rate are no cap.
	c.Steps[2].Device.WriteIOPS, c.Steps[3].Device.WriteIOPS, c.Steps[len(c.Steps)-1].Device.WriteIOPS = 600, 1200, 2400
	if _, vol := Budgets(c, verdict.Defaults()); vol != nil {
		t.Errorf("volume %+v from rising writes", vol)
	}
}

// Other writers on the device: the sweep's own writes (the device's less
// their idle rate) judge whether a cap bends the curve, so their steady
// rate is no cap; a cap under them is still found, net of them.
func TestFindVolumeNetOfOthers(t *testing.T) {
	// Measured: 601 writes/s by others, the device at 711-956/s over
	// failing steps of 13 to 100 writes/s on a disk with no cap.
	c := &result.Capacity{Unit: "writes/s", BackgroundWriteIOPS: 601, Steps: []result.CapacityStep{
		costStep(13, false, 711, 54), costStep(25, false, 744, 30), costStep(50, false, 821, 16), costStep(100, false, 956, 9.5),
	}}
	if vol := findVolume(c); vol != nil {
		t.Errorf("volume %+v from others' steady writes", vol)
	}
	// A 1,000-IOPS cap for the sweep, with 600/s of others' beside it.
	c = &result.Capacity{Unit: "writes/s", BackgroundWriteIOPS: 600, Steps: []result.CapacityStep{
		costStep(400, true, 1500, 2.2), costStep(800, false, 1590, 1.2), costStep(1600, false, 1600, 0.6),
	}}
	vol := findVolume(c)
	if vol == nil || vol.WriteIOPS < 980 || vol.WriteIOPS > 1000 || !strings.Contains(vol.Evidence, "other processes wrote 600/s more") {
		t.Errorf("volume %+v, want about 1,000 write IOPS net of others' 600", vol)
	}
}

// A burst bucket: the ladder passed on credits at up to 3,000 writes/s,
// then every step got about 600. The answer falls to the highest pass the
// sustained cap gave, and the burst is named.
func TestBurst(t *testing.T) {
	c := &result.Capacity{Unit: "writes/s", Rate: 1600, Upper: 1900, Marks: sweep.CheckPerfMarks, Sizes: sweep.ClusterSizes, Steps: []result.CapacityStep{
		costStep(100, true, 290, 2.9), costStep(200, true, 560, 2.6), costStep(400, true, 990, 2.5),
		costStep(800, true, 1900, 2.4), costStep(1600, true, 3000, 1.9), costStep(3200, false, 610, 0.2),
		costStep(2260, false, 600, 0.3), costStep(1900, false, 590, 0.3),
	}}
	for i := range c.Marks {
		c.Marks[i].Carried = c.Marks[i].Rate <= c.Rate
	}
	c.Budgets, c.Volume = Budgets(c, verdict.Defaults())
	Burst(c)
	if c.Volume == nil || c.Volume.BurstWriteIOPS != 3000 || c.Volume.WriteIOPS < 590 || c.Volume.WriteIOPS > 610 {
		t.Fatalf("volume %+v, want about 600 sustained and a burst of 3000", c.Volume)
	}
	if c.Rate != 200 || c.Upper != 400 {
		t.Errorf("answer %v..%v, want 200..400: the passes from 400 up ran on the burst", c.Rate, c.Upper)
	}
	for _, m := range c.Marks {
		if m.Carried != (m.Rate <= 200) {
			t.Errorf("mark %s (%v/s) carried %v at 200", m.Name, m.Rate, m.Carried)
		}
	}
	// A plain cap: the passes stay under it, nothing changes.
	c = &result.Capacity{Unit: "writes/s", Rate: 400, Upper: 800, Steps: []result.CapacityStep{
		costStep(200, true, 560, 2.6), costStep(400, true, 990, 2.5), costStep(800, false, 1000, 1.25), costStep(1600, false, 1010, 0.6),
	}}
	c.Budgets, c.Volume = Budgets(c, verdict.Defaults())
	Burst(c)
	if c.Volume == nil || c.Volume.BurstWriteIOPS != 0 || c.Rate != 400 {
		t.Errorf("a plain cap: volume %+v rate %v, want no burst and 400", c.Volume, c.Rate)
	}
}

// A step's cost per put is net of the other writers' idle rate; the
// device's own figures are not.
func TestStepCostNetOfOthers(t *testing.T) {
	p := &Probe{}
	t0 := time.Now()
	a := Reading{t: t0, ok: true}
	b := Reading{t: t0.Add(2 * time.Second), ok: true, ds: sysinfo.DiskStats{WriteIOs: 2 * 1000, WriteSectors: 2 * 1000 * 8, FlushIOs: 2 * 300}}
	d := p.Step(a, b, 2*100) // 100 puts/s
	if d.WriteIOPS != 1000 || d.FlushesPerSec != 300 || d.WritesPerEntry != 10 {
		t.Fatalf("device figures %+v, want the device's own 1000 writes/s, 300 flushes/s, 10 writes per put", d)
	}
	c := &result.Capacity{Steps: []result.CapacityStep{{Rate: 100, Device: d}, {Rate: 50, Device: p.Step(a, b, 2*50)}}}
	NetOfOthers(c, 600, 600*4096, 200)
	if d.WriteIOPS != 1000 || d.WritesPerEntry != 4 || d.FlushesPerEntry != 1 || d.BytesPerEntry != 400*4096/100 {
		t.Errorf("per put %+v, want (1000-600)/100 = 4 writes, 1 flush, %d bytes, the device's 1000 writes/s", d, 400*4096/100)
	}
	if c.BackgroundWriteIOPS != 600 || c.Steps[1].Device.WritesPerEntry != 8 {
		t.Errorf("background %v, the second step's %v writes per put", c.BackgroundWriteIOPS, c.Steps[1].Device.WritesPerEntry)
	}
	NetOfOthers(c, 5000, 0, 0) // more than the step's: never below 0
	if d.WritesPerEntry != 0 {
		t.Errorf("writes per put %v, want 0", d.WritesPerEntry)
	}
}
