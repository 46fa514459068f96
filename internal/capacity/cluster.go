package capacity

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdrun"
	"etcdbench/internal/finding"
	"etcdbench/internal/report"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/session"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// ClusterCapacityName is `capacity`'s sweep of members put apart (one
// workload a round trip).
const ClusterCapacityName = "cluster-capacity"

// ClusterCapacityDescription says what a cluster row measures.
const ClusterCapacityDescription = "what members put apart by a round trip carry: the etcd side's sweep on embedded members whose peer links hold every byte for half the round trip each way, on this storage and machine (they share its disk and CPUs)"

// apartWords names members put apart: "3 members 50ms apart" (with
// "+-5ms" for a jitter, and each far member), or "3 members with no
// round trip added".
func apartWords(o etcdcluster.Options) string {
	var far []string
	for i, d := range o.MemberRTT {
		if d > 0 {
			far = append(far, fmt.Sprintf("member %d %v from the others", i+1, d))
		}
	}
	if len(far) > 0 {
		base := o
		base.MemberRTT = nil
		return apartWords(base) + ", " + strings.Join(far, ", ")
	}
	switch {
	case o.PeerRTT == 0:
		return fmt.Sprintf("%d members with no round trip added", o.Members)
	case o.PeerJitter > 0:
		return fmt.Sprintf("%d members %v (+-%v) apart", o.Members, o.PeerRTT, o.PeerJitter)
	}
	return fmt.Sprintf("%d members %v apart", o.Members, o.PeerRTT)
}

// answerStep is the passing step of c nearest rate from below (the
// answer's own step when rate is c's answer), or nil when none passed.
func answerStep(c *result.Capacity, rate float64) *result.CapacityStep {
	var at *result.CapacityStep
	for i := range c.Steps {
		s := &c.Steps[i]
		if s.Status != verdict.Pass || s.Phase == "probe" || s.Phase == "rechecked" || s.Rate > rate {
			continue
		}
		if at == nil || s.Rate >= at.Rate {
			at = s
		}
	}
	return at
}

// ClusterRow is the row of members put apart by o whose sweep is c and
// whose answer (c's own, or capacity's estimate on it) is rate, upper,
// limited: the put latency at that rate comes from c's step there.
func ClusterRow(c *result.Capacity, o etcdcluster.Options, rate, upper float64, limited finding.Kind) *result.ClusterCapacity {
	var own []int64
	for _, d := range o.MemberRTT {
		own = append(own, d.Nanoseconds())
	}
	row := &result.ClusterCapacity{Members: o.Members, PeerRTTNs: o.PeerRTT.Nanoseconds(), PeerJitterNs: o.PeerJitter.Nanoseconds(), MemberRTTNs: own,
		Rate: rate, Upper: upper, LimitedBy: limited, Clients: verdict.CheckPerfLoadAt(max(rate, 1)).Clients}
	lat := "no rate passed, so there is no put latency at it"
	if s := answerStep(c, rate); s != nil {
		row.RequestP50Ns, row.RequestP99Ns = s.CommitP50Ns, s.CommitP99Ns
		lat = fmt.Sprintf("its puts took %v at the median and %v at p99 there (from their due times, at %.0f puts/s)",
			units.FormatDuration(time.Duration(s.CommitP50Ns)), units.FormatDuration(time.Duration(s.CommitP99Ns)), s.Rate)
	}
	links := "Each member's peers reached it through a link of etcdbench that held every byte for half the round trip each way; the members"
	if o.PeerRTT == 0 {
		links = "The members"
	}
	row.Evidence = fmt.Sprintf("%s on this machine carried %s puts/s, limited by %s; %s, the clients spread over every member (a put at a follower waits for its leader too). %s shared this machine's disk and CPUs, which members on machines of their own do not",
		apartWords(o), rangeWords(rate, upper), limited, lat, links)
	if w := etcdrun.TimeoutWords(o); w != "" {
		row.Evidence += ". " + strings.ToUpper(w[:1]) + w[1:]
	}
	return row
}

// rangeWords is an answer: "R-U", or "at least R" when nothing failed.
func rangeWords(rate, upper float64) string {
	if upper > 0 {
		return fmtRate(rate) + "-" + fmtRate(upper)
	}
	return "at least " + fmtRate(rate)
}

// NetworkBound is the highest rate that check perf's clients send when
// every put takes wait: the rate r whose load (verdict.CheckPerfLoadAt,
// clients c) has r <= c / wait, over check perf's loads, with its
// clients; 0 when a put that takes wait is over check perf's slowest
// request.
func NetworkBound(wait time.Duration) (rate float64, clients int) {
	if wait <= 0 {
		return math.Inf(1), verdict.CheckPerfLoads[len(verdict.CheckPerfLoads)-1].Clients
	}
	if wait.Seconds() > verdict.CheckPerfDefaults().Slowest.Limit {
		return 0, verdict.CheckPerfLoads[0].Clients
	}
	lo := 0.0
	for i, l := range verdict.CheckPerfLoads {
		hi := l.Rate
		if i == len(verdict.CheckPerfLoads)-1 {
			hi = math.Inf(1) // above xl's rate, xl's clients
		}
		if most := float64(l.Clients) / wait.Seconds(); most > lo {
			rate, clients = min(hi, most), l.Clients
		}
		lo = l.Rate
	}
	return rate, clients
}

// Machines predicts what o.Members members o.PeerRTT apart, each on a
// machine like this one, carry: this machine's single member's answer
// (one, rate to upper, limited by oneLimit; from names the measurement),
// bounded by what check perf's clients send when every put waits the
// round trips it needs beyond what it took on the single member at its
// answer (its put p50 there, from one's steps). A put waits for a quorum:
// at the leader, its sync and at the same time a follower's round trip
// and sync; at a follower, also the way to its leader and back with the
// commit, a second round trip (puts at a follower of members 30 ms apart
// took 66 ms at the median). With the clients spread over every member,
// as check perf's over the cluster's endpoints and each node's API
// server on its own member are, a put waits on average
// (1 + (n-1)/n) round trips. nil when the single member passed no rate.
func Machines(o etcdcluster.Options, one *result.Capacity, rate, upper float64, oneLimit finding.Kind, from string) *result.ClusterPrediction {
	s := answerStep(one, rate)
	if s == nil || rate == 0 {
		return nil
	}
	p50 := time.Duration(s.CommitP50Ns)
	n := max(o.Members, 1)
	quorum, net := networkWait(o)
	wait := p50 + net
	bound, clients := NetworkBound(wait)
	p := &result.ClusterPrediction{OneMember: rate, OneMemberUpper: upper, OneMemberP50Ns: s.CommitP50Ns, LimitedBy: oneLimit, Rate: rate, Upper: upper}
	if !math.IsInf(bound, 1) {
		p.NetworkBound = bound
	}
	boundWords := fmt.Sprintf("check perf's %d clients, spread over the %d members (a put at the leader waits its quorum's round trip, %v, one at a follower its own round trip to the leader too: %v on average), each waiting %v + %v = %v for a put, send at most %d / %v = %.0f puts/s",
		clients, n, quorum, net.Round(10*time.Microsecond), net.Round(10*time.Microsecond), p50.Round(10*time.Microsecond), wait.Round(10*time.Microsecond), clients, wait.Round(10*time.Microsecond), bound)
	switch {
	case o.PeerRTT == 0:
		boundWords = "no round trip was added, so the network bounds nothing"
	case bound == 0:
		boundWords = fmt.Sprintf("members %v apart add their round trips to every put: it would take %v on average, over check perf's %v slowest request: no rate passes", o.PeerRTT, wait.Round(10*time.Microsecond), units.FromSeconds(verdict.CheckPerfDefaults().Slowest.Limit))
	default:
		boundWords = fmt.Sprintf("members %v apart add their round trips to every put, so %s", o.PeerRTT, boundWords)
	}
	if o.PeerRTT > 0 && bound < rate {
		p.Rate, p.Upper, p.LimitedBy = bound, bound, finding.Network
	} else if o.PeerRTT > 0 && upper > 0 && bound < upper {
		p.Upper = bound
	}
	which := "the single member's answer"
	if p.LimitedBy == finding.Network {
		which = "the round trip's bound"
	}
	p.Evidence = fmt.Sprintf("predicted, not measured: %d machines like this one, each with its own member, %v apart, carry %s (limited by %s). This machine's single member carried %s puts/s (%s), its puts %v at the median there; %s; the lower, %s, is the prediction. Not measured: the leader's CPU for its followers' streams and the network's bandwidth",
		o.Members, o.PeerRTT, report.PredictionWords(p), p.LimitedBy, rangeWords(rate, upper), from, p50.Round(10*time.Microsecond), boundWords, which)
	return p
}

// networkWait is what members apart by o add to a put on average, with
// the clients spread over every member, and the quorum round trip in it:
// the leader (the member whose quorum is nearest: etcd does not choose
// it so, and diagnose --endpoints names a better place) waits for the
// round trip to the nearest followers a majority needs; a put at a
// follower also for its own round trip to the leader (it hands the
// proposal over, and learns of the commit a round trip later). Members R
// apart add (1 + (n-1)/n) R: 5/3 R for three.
func networkWait(o etcdcluster.Options) (quorum, mean time.Duration) {
	n := max(o.Members, 1)
	if n == 1 {
		return 0, 0
	}
	best := -1
	for l := range n {
		var to []time.Duration
		for j := range n {
			if j != l {
				to = append(to, o.PairRTT(l, j))
			}
		}
		slices.Sort(to)
		q := to[n/2-1] // the leader and n/2 followers are a majority
		var sum time.Duration
		for j := range n {
			if j != l {
				sum += o.PairRTT(l, j)
			}
		}
		if m := q + sum/time.Duration(n); best < 0 || m < mean {
			best, quorum, mean = l, q, m
		}
	}
	return quorum, mean
}

// EtcdApart is `etcd capacity --members 3 --peer-rtt R1,R2...`: the sweep
// on one member first (this machine's single member, which the
// prediction for machines of their own starts from), then one on members
// put apart by each round trip of apart (each a spec of its own, its
// Embedded options apart), each in a session of its own. Each apart
// workload gets its row (result.Capacity.Cluster) with the prediction.
// An interrupted or failed run returns what was measured with the error.
func EtcdApart(ctx context.Context, one etcdrun.Spec, apart []etcdrun.Spec) (*result.Result, error) {
	res, err := etcdrun.Measure(ctx, one)
	if err != nil || res == nil || len(res.Workloads) == 0 {
		return res, err
	}
	single := res.Workloads[0].Capacity
	res.Workloads[0].Notes = append(res.Workloads[0].Notes, "this sweep is of one member on this machine: the prediction for members on machines of their own starts from it")
	for _, s := range apart {
		if err := session.Settle(ctx, s.Dir, res.Environment); err != nil {
			return res, err
		}
		r, err := etcdrun.Measure(ctx, s)
		if r != nil {
			for _, w := range r.Workloads {
				if c := w.Capacity; c != nil && !c.Interrupted {
					c.Cluster = ClusterRow(c, s.Embedded, c.Rate, c.Upper, c.Bend)
					if single != nil && !single.Interrupted {
						c.Cluster.Machines = Machines(s.Embedded, single, single.Rate, single.Upper, single.Bend, "the one-member sweep's answer, this result's first workload")
					}
				}
				res.Workloads = append(res.Workloads, w)
			}
			res.Interrupted = res.Interrupted || r.Interrupted
			res.Finish(r.FinishedAt)
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// clusterSides runs the etcd side again on members put apart by each of
// apart, after the single member's side one (whose estimate is on disk's
// capacity): each a cluster-capacity workload whose capacity has its own
// estimate (the lower of the disk's model and its sweep) and its row,
// with the prediction for machines of their own from the single member's
// estimate. The first row's estimate becomes the run's answer (disk's
// etcd_rate_estimate with it); the single member's stays in that row's
// prediction. A side that fails ends the rows with a note.
func clusterSides(ctx context.Context, s *session.Session, disk *result.Workload, one *result.Capacity, step time.Duration, apart []etcdcluster.Options) ([]result.Workload, error) {
	d := disk.Capacity
	single := *d.Etcd
	oneAt := one
	if single.LimitedBy == finding.Disk || answerStep(one, single.Rate) == nil {
		oneAt = d // the disk's model set the single member's answer: its steps' latency
	}
	var rows []result.Workload
	for i, o := range apart {
		s.Progress.Start(2+i, ClusterCapacityName)
		w, err := clusterSide(ctx, s, d, step, o)
		if w.Capacity == nil {
			if err == nil || run.Interrupted(ctx, err) {
				return rows, err
			}
			disk.Notes = append(disk.Notes, fmt.Sprintf("the etcd side on %s failed, so no row for it: %s", apartWords(o), strings.Join(strings.Fields(err.Error()), " ")))
			return rows, nil
		}
		c := w.Capacity
		if !c.Interrupted {
			e := Estimate(d, c)
			c.Etcd = e
			c.Cluster = ClusterRow(c, o, e.Rate, e.Upper, e.LimitedBy)
			c.Cluster.Machines = Machines(o, oneAt, single.Rate, single.Upper, single.LimitedBy, "capacity's estimate for one member: the lower of the disk's model and the single member's etcd side")
			if i == 0 {
				row := *e
				row.Evidence = apartWords(o) + " on this machine: " + e.Evidence
				d.Etcd = &row
				if f := disk.Figure("etcd_rate_estimate"); f != nil {
					f.Value = row.Rate
					f.Description += "; for " + apartWords(o) + " on this machine (the first cluster-capacity row), not one member"
				}
			}
		}
		rows = append(rows, w)
		if err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// clusterSide starts members apart by o in the session and runs the etcd
// side on them, up to the disk's limit d, from check perf's s.
func clusterSide(ctx context.Context, s *session.Session, d *result.Capacity, step time.Duration, o etcdcluster.Options) (result.Workload, error) {
	cluster, err := s.StartEtcd(ctx, o)
	if err != nil {
		return result.Workload{}, err
	}
	defer cluster.Close()
	side := CapacitySide(step)
	side.PeerRTT, side.Heartbeat = o.PeerRTT, o.HeartbeatInterval
	w, err := EtcdSide(ctx, s, cluster, d, side)
	w.Name, w.Description = ClusterCapacityName, ClusterCapacityDescription
	if w.Parameters != nil {
		w.Parameters["members"], w.Parameters["peer_rtt_ns"], w.Parameters["peer_jitter_ns"] = o.Members, o.PeerRTT.Nanoseconds(), o.PeerJitter.Nanoseconds()
	}
	return w, err
}
