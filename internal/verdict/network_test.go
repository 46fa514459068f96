package verdict

import (
	"testing"
	"time"
)

// The timeouts for a round trip: etcd's defaults up to a 100 ms round
// trip, then a heartbeat near it and ten round trips' election timeout.
func TestTimeouts(t *testing.T) {
	for _, tc := range []struct {
		rtt      time.Duration
		hb, elec time.Duration
	}{
		{2 * time.Millisecond, 100 * time.Millisecond, time.Second},
		{51 * time.Millisecond, 100 * time.Millisecond, time.Second},
		{120 * time.Millisecond, 120 * time.Millisecond, 1200 * time.Millisecond},
		{333 * time.Millisecond, 340 * time.Millisecond, 3400 * time.Millisecond},
	} {
		hb, elec := Timeouts(tc.rtt)
		if hb != tc.hb || elec != tc.elec {
			t.Errorf("Timeouts(%v) = %v, %v; want %v, %v", tc.rtt, hb, elec, tc.hb, tc.elec)
		}
		if elec < 5*hb {
			t.Errorf("Timeouts(%v): election %v under five heartbeats %v (etcd refuses it)", tc.rtt, elec, hb)
		}
	}
}
