package etcdload

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Kind is one load etcdbench sends, as data: the commands, their flags and
// help texts, the result's parameters and descriptions are all built from
// Kinds, so a new load is one entry here and its sender.
type Kind struct {
	Op Op
	// What says in a few words what the load sends, for help texts;
	// Brief in fewer, for the one-line help.
	What, Brief string
	// Params are the settings of this load alone, beyond CommonParams.
	Params []Param
	// Histograms are the latency histograms the load records, the first
	// one its own (its throughput and per-second series).
	Histograms []string
	// defaults changes etcd's benchmark defaults where this load's differ.
	defaults func(*Load)
	// record adds this load's own settings to the result's parameters.
	record func(Load, map[string]any)
	// describe says what one run sends, for the result's description.
	describe func(l Load, consistency string) string
	// plan says what a run writes to a cluster after the amount n ("1000
	// requests"), for the refusal without --yes and tune's heading.
	plan func(l Load, n string) string
	// check says what is wrong with this load's own settings, "" when
	// nothing (nil: it has none).
	check func(l Load) string
	// preload: the keys the load reads are written before the clock.
	preload bool
	// rollup: the histograms after the first are parts of it (a mixed
	// load's ranges and puts make its requests); an empty one is left
	// out of the result.
	rollup bool
	// watched: watchers receive the load's puts as events, on l.Streams
	// streams of their own beside the clients.
	watched bool
	// sentHist is the histogram that counts the requests sent (a watch
	// load's puts, not its events).
	sentHist int
	// puts is how many puts the load wrote, from its histograms' counts
	// (nil: none).
	puts func(l Load, counts func(hist int) int64) int64
}

// Param is one load setting a command line sets: its flag name and help,
// and the field of Load it sets.
type Param struct {
	Name, Usage string
	// Field returns the setting's field in l: an *int, *int64, *float64,
	// *string or *bool.
	Field func(l *Load) any
}

// CommonParams are the settings every load takes.
func CommonParams() []Param {
	return []Param{
		{"conns", "gRPC connections; connection i talks to endpoint i mod n (see --target)", func(l *Load) any { return &l.Conns }},
		{"clients", "concurrent clients, spread over the connections", func(l *Load) any { return &l.Clients }},
		{"target", "which members the connections talk to: all (spread over the endpoints), leader (all to the current leader) or balanced (every connection balances its requests over every endpoint, as kube-apiserver's one client does)", func(l *Load) any { return &l.Target }},
		{"total", "requests to send (unless --duration is given)", func(l *Load) any { return &l.Total }},
		{"rate", "requests per second over all clients: an open loop whose latencies count from each request's due time; 0: closed loop", func(l *Load) any { return &l.Rate }},
		{"key-size", "key bytes after the /etcdbench/<run-id>/ prefix", func(l *Load) any { return &l.KeySize }},
		{"val-size", "value bytes", func(l *Load) any { return &l.ValSize }},
		{"key-space-size", "distinct keys", func(l *Load) any { return &l.KeySpaceSize }},
		{"sequential-keys", "use keys in order instead of at random", func(l *Load) any { return &l.SequentialKeys }},
	}
}

var (
	consistencyParam = Param{"consistency", "consistency of the ranges: l (linearizable) or s (serializable)", func(l *Load) any { return &l.Consistency }}
	kinds            = []Kind{
		{
			Op: OpPut, What: "puts", Brief: "puts", Histograms: []string{requestLatency},
			puts:     func(_ Load, n func(int) int64) int64 { return n(0) },
			describe: func(Load, string) string { return "puts of one key each" },
			plan: func(l Load, n string) string {
				return fmt.Sprintf("%s of puts over %d keys of %d-byte values", n, l.KeySpaceSize, l.ValSize)
			},
		},
		{
			Op: OpRange, What: "ranges", Brief: "ranges", Histograms: []string{requestLatency},
			Params: []Param{consistencyParam}, preload: true, check: checkConsistency,
			record: func(l Load, p map[string]any) { p["consistency"] = l.Consistency },
			describe: func(_ Load, cons string) string {
				return "ranges of one key each (" + cons + ")"
			},
			plan: func(l Load, n string) string {
				return fmt.Sprintf("%s of ranges over %d keys of %d-byte values that it writes first", n, l.KeySpaceSize, l.ValSize)
			},
		},
		{
			Op: OpTxn, What: "transactions of --txn-ops puts", Brief: "transactions of puts", Histograms: []string{requestLatency},
			Params: []Param{{"txn-ops", "puts per transaction (of consecutive keys: at most --key-space-size)", func(l *Load) any { return &l.TxnOps }}},
			record: func(l Load, p map[string]any) { p["txn_ops"] = l.TxnOps },
			puts:   func(l Load, n func(int) int64) int64 { return n(0) * int64(l.TxnOps) },
			check: func(l Load) string {
				switch {
				case l.TxnOps < 1:
					return fmt.Sprintf("txn ops %d: want at least 1", l.TxnOps)
				case l.TxnOps > l.KeySpaceSize:
					return fmt.Sprintf("txn ops %d over a key space of %d: a transaction may not put one key twice; raise the key space size", l.TxnOps, l.KeySpaceSize)
				}
				return ""
			},
			describe: func(l Load, _ string) string {
				return fmt.Sprintf("transactions of %d puts each", l.TxnOps)
			},
			plan: func(l Load, n string) string {
				return fmt.Sprintf("%s of transactions of %d puts each over %d keys of %d-byte values", n, l.TxnOps, l.KeySpaceSize, l.ValSize)
			},
		},
		{
			Op: OpWatch, Brief: "puts to watchers", What: "puts that --streams x --watchers-per-stream watchers of the run's keys receive as events (latency: from each put's due time to each event)",
			Histograms: []string{"event", "put"},
			Params: []Param{
				{"streams", "gRPC watch streams, spread over the connections", func(l *Load) any { return &l.Streams }},
				{"watchers-per-stream", "watchers on each stream, each watching every key of the run", func(l *Load) any { return &l.WatchersPerStream }},
			},
			defaults: func(l *Load) { l.Total, l.Rate = 1000, 100 },
			watched:  true, sentHist: 1,
			puts: func(_ Load, n func(int) int64) int64 { return n(1) },
			check: func(l Load) string {
				switch {
				case l.Streams < 1 || l.WatchersPerStream < 1:
					return fmt.Sprintf("%d streams of %d watchers: want at least one of each", l.Streams, l.WatchersPerStream)
				case l.ValSize < stampSize:
					return fmt.Sprintf("value size %d: a watch load's values carry their send time, want at least %d bytes", l.ValSize, stampSize)
				}
				return ""
			},
			record: func(l Load, p map[string]any) {
				p["streams"] = l.Streams
				p["watchers_per_stream"] = l.WatchersPerStream
			},
			describe: func(l Load, _ string) string {
				return fmt.Sprintf("puts watched by %d streams x %d watchers of the prefix (latency: put due -> event received)", l.Streams, l.WatchersPerStream)
			},
			plan: func(l Load, n string) string {
				return fmt.Sprintf("%s of puts over %d keys of %d-byte values, watched by %d watchers", n, l.KeySpaceSize, l.ValSize, l.Streams*l.WatchersPerStream)
			},
		},
		{
			Op: OpMixed, What: "ranges and puts (--read-ratio ranges)", Brief: "ranges and puts", Histograms: []string{requestLatency, "range", "put"},
			Params: []Param{
				consistencyParam,
				{"read-ratio", "share of ranges among the requests, 0 (puts only) to 1 (ranges only)", func(l *Load) any { return &l.ReadRatio }},
			},
			defaults: func(l *Load) { l.KeySpaceSize = 1000 },
			preload:  true, rollup: true,
			puts: func(_ Load, n func(int) int64) int64 { return n(2) },
			check: func(l Load) string {
				if l.ReadRatio < 0 || l.ReadRatio > 1 || math.IsNaN(l.ReadRatio) {
					return fmt.Sprintf("read ratio %g: want 0 (puts only) to 1 (ranges only)", l.ReadRatio)
				}
				return checkConsistency(l)
			},
			record: func(l Load, p map[string]any) {
				p["consistency"] = l.Consistency
				p["read_ratio"] = l.ReadRatio
			},
			describe: func(l Load, cons string) string {
				return fmt.Sprintf("ranges (%.0f %%, %s) and puts of one key each", 100*l.ReadRatio, cons)
			},
			plan: func(l Load, n string) string {
				return fmt.Sprintf("%s, %.0f %% ranges and the rest puts, over %d keys of %d-byte values that it writes first", n, 100*l.ReadRatio, l.KeySpaceSize, l.ValSize)
			},
		},
	}
)

// checkConsistency checks the consistency of a load's ranges.
func checkConsistency(l Load) string {
	if l.Consistency != Linearizable && l.Consistency != Serializable {
		return fmt.Sprintf("consistency %q: want l (linearizable) or s (serializable)", l.Consistency)
	}
	return ""
}

// Kinds returns the loads, in the order the CLI shows them.
func Kinds() []Kind { return kinds }

// KindOf returns op's entry; an unknown op gets put's, as a sender
// does.
func KindOf(op Op) Kind {
	for _, k := range kinds {
		if k.Op == op {
			return k
		}
	}
	return kinds[0]
}

// Takes reports whether the load takes the setting called name.
func (k Kind) Takes(name string) bool {
	for _, p := range k.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

// ParamsOf are the settings the loads of kinds take: the common ones,
// then each kind's own, each once; a setting only some of them take has
// their names before its usage ("range and mixed: ...").
func ParamsOf(kinds []Kind) []Param {
	out := CommonParams()
	seen := map[string]bool{}
	for _, p := range out {
		seen[p.Name] = true
	}
	for _, k := range kinds {
		for _, p := range k.Params {
			if seen[p.Name] {
				continue
			}
			seen[p.Name] = true
			if len(kinds) > 1 {
				var takers []string
				for _, t := range kinds {
					if t.Takes(p.Name) {
						takers = append(takers, string(t.Op))
					}
				}
				p.Usage = strings.Join(takers, " and ") + ": " + p.Usage
			}
			out = append(out, p)
		}
	}
	return out
}

// SetFrom copies into l the settings called names from src, a load that
// holds values as given on a command line; a setting l's kind does not
// take is an error naming it.
func (l *Load) SetFrom(src *Load, names []string) error {
	k := KindOf(l.Op)
	for _, p := range ParamsOf(Kinds()) {
		if !slices.Contains(names, p.Name) {
			continue
		}
		if !k.Takes(p.Name) && !slices.ContainsFunc(CommonParams(), func(c Param) bool { return c.Name == p.Name }) {
			return fmt.Errorf("--%s does not apply to --workload %s", p.Name, l.Op)
		}
		switch d := p.Field(l).(type) {
		case *int:
			*d = *p.Field(src).(*int)
		case *int64:
			*d = *p.Field(src).(*int64)
		case *float64:
			*d = *p.Field(src).(*float64)
		case *string:
			*d = *p.Field(src).(*string)
		case *bool:
			*d = *p.Field(src).(*bool)
		}
	}
	return nil
}

// Plan says in words what the load writes, for the refusal to write to
// a cluster without --yes and for tune's heading.
func (l Load) Plan() string {
	var n string
	switch {
	case l.Total > 0 && l.Duration > 0:
		n = fmt.Sprintf("up to %d requests in up to %v", l.Total, l.Duration)
	case l.Total > 0:
		n = fmt.Sprintf("%d requests", l.Total)
	default:
		n = fmt.Sprintf("requests for %v", l.Duration)
	}
	return KindOf(l.Op).plan(l, n)
}
