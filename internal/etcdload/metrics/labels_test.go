package metrics

import (
	"errors"
	"testing"
)

const peersBefore = `# TYPE etcd_network_peer_round_trip_time_seconds histogram
etcd_network_peer_round_trip_time_seconds_bucket{To="a",le="0.1"} 10
etcd_network_peer_round_trip_time_seconds_bucket{To="a",le="0.2"} 10
etcd_network_peer_round_trip_time_seconds_bucket{To="a",le="+Inf"} 10
etcd_network_peer_round_trip_time_seconds_sum{To="a"} 0.5
etcd_network_peer_round_trip_time_seconds_count{To="a"} 10
# TYPE grpc_server_handled_total counter
grpc_server_handled_total{grpc_code="OK",grpc_method="Put"} 5
grpc_server_handled_total{grpc_code="OK",grpc_method="Range"} 7
grpc_server_handled_total{grpc_code="Unavailable",grpc_method="Put"} 3
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0.5"} 0.001
go_gc_duration_seconds_sum 0.25
go_gc_duration_seconds_count 40
`

const peersAfter = `# TYPE etcd_network_peer_round_trip_time_seconds histogram
etcd_network_peer_round_trip_time_seconds_bucket{To="a",le="0.1"} 12
etcd_network_peer_round_trip_time_seconds_bucket{To="a",le="0.2"} 20
etcd_network_peer_round_trip_time_seconds_bucket{To="a",le="+Inf"} 20
etcd_network_peer_round_trip_time_seconds_sum{To="a"} 2
etcd_network_peer_round_trip_time_seconds_count{To="a"} 20
etcd_network_peer_round_trip_time_seconds_bucket{To="b",le="0.1"} 4
etcd_network_peer_round_trip_time_seconds_bucket{To="b",le="0.2"} 4
etcd_network_peer_round_trip_time_seconds_bucket{To="b",le="+Inf"} 4
etcd_network_peer_round_trip_time_seconds_sum{To="b"} 0.1
etcd_network_peer_round_trip_time_seconds_count{To="b"} 4
# TYPE grpc_server_handled_total counter
grpc_server_handled_total{grpc_code="OK",grpc_method="Put"} 15
grpc_server_handled_total{grpc_code="OK",grpc_method="Range"} 7
grpc_server_handled_total{grpc_code="Unavailable",grpc_method="Put"} 1
grpc_server_handled_total{grpc_code="DeadlineExceeded",grpc_method="Put"} 2
`

func mustParse(t *testing.T, s string) Families {
	t.Helper()
	f, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestHistogramDeltaByPeer(t *testing.T) {
	before, after := mustParse(t, peersBefore), mustParse(t, peersAfter)
	d, err := HistogramDeltaBy(before, after, "etcd_network_peer_round_trip_time_seconds", "To")
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 2 {
		t.Fatalf("peers %v, want a and b", d)
	}
	// a: 10 new round trips, 2 in [0, 0.1] and 8 in (0.1, 0.2]: rank 9.9
	// is 7.9 into the 8 of (0.1, 0.2]: 0.1 + 0.1*7.9/8.
	if got := Quantile(0.99, d["a"]); !same(got, 0.19875) {
		t.Errorf("peer a p99 %g, want 0.19875", got)
	}
	// b is new: counted from zero, all 4 in [0, 0.1]: 0.1*3.96/4.
	if got := Quantile(0.99, d["b"]); !same(got, 0.099) {
		t.Errorf("peer b p99 %g, want 0.099", got)
	}
	if _, err := HistogramDeltaBy(before, Families{}, "etcd_network_peer_round_trip_time_seconds", "To"); !errors.Is(err, ErrNoMetric) {
		t.Errorf("missing after: %v", err)
	}
	if _, err := HistogramsBy(after, "grpc_server_handled_total", "grpc_code"); !errors.Is(err, ErrNotHistogram) {
		t.Errorf("counter as histogram: %v", err)
	}
}

func TestDeltaByCode(t *testing.T) {
	before, after := mustParse(t, peersBefore), mustParse(t, peersAfter)
	v, err := ValuesBy(after, "grpc_server_handled_total", "grpc_code")
	if err != nil || v["OK"] != 22 || v["Unavailable"] != 1 {
		t.Fatalf("ValuesBy %v %v", v, err)
	}
	d, reset, err := DeltaBy(before, after, "grpc_server_handled_total", "grpc_code")
	if err != nil {
		t.Fatal(err)
	}
	if d["OK"] != 10 || d["DeadlineExceeded"] != 2 {
		t.Errorf("delta %v, want OK 10 and DeadlineExceeded 2 (new, from zero)", d)
	}
	if _, ok := d["Unavailable"]; ok || len(reset) != 1 || reset[0] != "Unavailable" {
		t.Errorf("Unavailable went from 3 to 1: delta %v reset %v, want it reported as reset", d, reset)
	}
	if _, _, err := DeltaBy(before, after, "nope", "x"); !errors.Is(err, ErrNoMetric) {
		t.Errorf("missing: %v", err)
	}
	if _, err := ValuesBy(after, "etcd_network_peer_round_trip_time_seconds", "To"); err == nil {
		t.Error("histogram read as counter")
	}
}

func TestSummaryCount(t *testing.T) {
	n, s, err := SummaryCount(mustParse(t, peersBefore), "go_gc_duration_seconds")
	if err != nil || n != 40 || s != 0.25 {
		t.Errorf("summary %g %g %v, want 40 0.25", n, s, err)
	}
	if _, _, err := SummaryCount(mustParse(t, peersBefore), "grpc_server_handled_total"); err == nil {
		t.Error("counter read as summary")
	}
}

// TestQuantileInfEdges covers the +Inf cases that histogram_quantile
// documents: all observations in +Inf, and a single finite bucket.
func TestQuantileInfEdges(t *testing.T) {
	cases := []struct {
		name string
		h    Histogram
		q    float64
		want float64
	}{
		// Every rank falls in +Inf: the last finite upper bound.
		{"all in +Inf", hist([]float64{0.1, 0.2, inf}, []float64{0, 0, 5}), 0.5, 0.2},
		// One finite bucket: interpolated from 0.
		{"one finite bucket", hist([]float64{0.5, inf}, []float64{4, 4}), 0.5, 0.25},
		// Rank exactly at the last finite bucket's count stays finite.
		{"rank at last finite count", hist([]float64{1, 2, inf}, []float64{1, 2, 4}), 0.5, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Quantile(tc.q, tc.h); !same(got, tc.want) {
				t.Errorf("Quantile(%g) = %g, want %g", tc.q, got, tc.want)
			}
		})
	}
}
