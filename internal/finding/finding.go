// Package finding is the one vocabulary of what etcdbench finds wrong:
// check's causes, diagnose's rules, `etcd capacity`'s limit and what
// bends a capacity curve all name a Kind from it and give the Facts
// that show it. A Finding is data; words are rendered from it by whoever
// shows it, so tests assert kinds and facts, not wording.
package finding

import "slices"

// Kind is what a finding blames.
type Kind string

// The kinds. Their values are the stable names in results (`capacity.bend`
// in the JSON schema holds those of a capacity's limit and bend).
const (
	// None: nothing was found (no step of a sweep failed).
	None Kind = "none"

	// Disk: the storage is too slow (WAL fdatasync, backend commit,
	// synced IOPS).
	Disk Kind = "disk"
	// NotDurable: the storage is fast because a mount option stops
	// fdatasync from flushing.
	NotDurable Kind = "not-durable"
	// FakeSync: fdatasync returns sooner than any flush can.
	FakeSync Kind = "fake-sync"
	// Unsuitable: storage etcd's docs advise against (network
	// filesystems, container layers).
	Unsuitable Kind = "unsuitable-storage"
	// SlowRecovery: sequential reads (a restarting member's) are slow.
	SlowRecovery Kind = "slow-recovery"

	// RateCap, Queueing, Stalls and Backlog are how a disk bends its
	// capacity curve: a cap on the sync rate (an IOPS limit), sync time
	// growing with the queue, rare slow syncs, a writer falling behind.
	RateCap  Kind = "rate-cap"
	Queueing Kind = "queueing"
	Stalls   Kind = "stalls"
	Backlog  Kind = "backlog"

	// CPU: etcd's CPUs (or the machine's) are saturated.
	CPU Kind = "cpu"
	// Network: the round trip between members is slow.
	Network Kind = "network"
	// Leader: the leader, raft loop or apply do not keep up: leader
	// changes, slow applies, a proposal backlog.
	Leader Kind = "leader"
	// Member: a member was busy or starved during a load (elections or
	// slow applies).
	Member Kind = "member"
	// Client: the load generator's machine, not the cluster, gave out.
	Client Kind = "client"
	// Database: the backend database is near its quota or fragmented.
	Database Kind = "database"
	// Memory: the member's memory limit, against what its requests need.
	Memory Kind = "memory"
	// Contention: requests wait on each other (compaction, expensive
	// requests, a proposal pile-up).
	Contention Kind = "contention"
	// Requests: requests or proposals fail.
	Requests Kind = "requests"
	// Unreachable: a member does not answer, or the endpoint is not etcd.
	Unreachable Kind = "unreachable"
	// Disagreement: members disagree on what they should share (the
	// member list, the cluster, the leader, the versions).
	Disagreement Kind = "disagreement"
	// Corruption: members' data differ, or etcd raised its CORRUPT alarm.
	Corruption Kind = "corruption"
	// Unknown: a rule failed with every resource within its limits.
	Unknown Kind = "unknown"
)

// Info is what people are told about a kind.
type Info struct {
	Kind Kind
	// Name is the kind in words, e.g. "slow disk".
	Name string
	// Advice says what to do, where one piece of advice fits every
	// finding of the kind.
	Advice string
	// Rank orders findings of the same status, lowest first: what etcd
	// waits on (the disk) before what follows from it.
	Rank int
}

// Kinds are the kinds in words, as data.
var Kinds = []Info{
	{Kind: None, Name: "nothing found", Rank: 1000},
	{Kind: NotDurable, Name: "fast because writes are not made durable", Rank: 0, Advice: "a mount option stops fdatasync from flushing the disk's cache, so every latency figure above is that of a volatile cache " +
		"and etcd can lose writes it acknowledged at a power failure or host crash; remount without the option (the verdict names it) and run the check again before trusting any figure"},
	{Kind: Disk, Name: "slow disk", Rank: 1, Advice: "move etcd's data dir (at least its WAL, --wal-dir) to a faster disk of its own (local SSD/NVMe); " +
		"keep other writers off it or lower their I/O priority (ionice -c2 -n7, or -c3 for batch jobs); on cloud volumes, provision more IOPS"},
	{Kind: RateCap, Name: "a cap on the sync rate", Rank: 1},
	{Kind: Queueing, Name: "queueing at the disk", Rank: 1},
	{Kind: Stalls, Name: "disk stalls", Rank: 1},
	{Kind: Backlog, Name: "a writer falling behind", Rank: 1},
	{Kind: FakeSync, Name: "fdatasync does not reach stable storage", Rank: 2, Advice: "the filesystem or a cache acknowledges syncs it has not made durable " +
		"(tmpfs, a write cache without power-loss protection, a hypervisor setting): etcd can lose acknowledged writes on a crash; use storage that honours flushes"},
	{Kind: Unsuitable, Name: "storage etcd's docs advise against", Rank: 2, Advice: "network filesystems and container writable layers put a network, a daemon or overlayfs between etcd and the disk; " +
		"give etcd's data dir a local SSD/NVMe disk or block volume mounted into the container"},
	{Kind: CPU, Name: "CPU starvation", Rank: 3, Advice: "give etcd CPU of its own: dedicated cores (a cpuset, or the kubelet's static CPU manager for a Guaranteed pod), " +
		"or a higher CPU priority than its neighbours (nice -n -5, a larger cpu.weight or cpu.shares); etcd's fsync and commit histograms count its waits for a CPU as disk time, so a faster disk does not help"},
	{Kind: Member, Name: "busy or starved etcd member", Rank: 3, Advice: "elections or slow applies during the load: give etcd dedicated CPU (and a disk of its own), " +
		"and if the disk and CPU are fine, raise --heartbeat-interval and --election-timeout (e.g. 250 ms / 2.5 s) for slow networks; run etcdbench diagnose on the cluster"},
	{Kind: SlowRecovery, Name: "slow sequential reads", Rank: 4, Advice: "a member that restarts or joins reads its snapshot and WAL at this speed; use faster storage for large clusters"},
	{Kind: Network, Name: "network", Rank: 5},
	{Kind: Database, Name: "oversized or fragmented database", Rank: 6},
	{Kind: Memory, Name: "memory limit", Rank: 6},
	{Kind: Contention, Name: "contention", Rank: 7},
	{Kind: Leader, Name: "leader instability", Rank: 8},
	{Kind: Client, Name: "the load generator's machine", Rank: 9},
	{Kind: Requests, Name: "failing requests", Rank: 10},
	{Kind: Unreachable, Name: "a member does not answer", Rank: 0},
	{Kind: Corruption, Name: "members' data differ", Rank: 0},
	{Kind: Disagreement, Name: "members disagree", Rank: 2},
	{Kind: Unknown, Name: "no resource at its limit", Rank: 100},
}

// Info returns the kind in words; a kind not in Kinds gets its own value
// as its name.
func (k Kind) Info() Info {
	if i := slices.IndexFunc(Kinds, func(x Info) bool { return x.Kind == k }); i >= 0 {
		return Kinds[i]
	}
	return Info{Kind: k, Name: string(k), Rank: 100}
}

// Known reports whether k is one of Kinds.
func (k Kind) Known() bool {
	return slices.ContainsFunc(Kinds, func(x Info) bool { return x.Kind == k })
}

// Fact is one measured figure a finding rests on.
type Fact struct {
	// Name says what was measured, e.g. "host_cpu_busy".
	Name  string
	Value float64
	Unit  string
	// Limit is what Value was judged against, when it was (0: not).
	Limit float64
}

// Finding is one thing found: its kind, which case of its rule decided
// it, and the facts that show it. How bad it is (a verdict's status)
// goes beside it where it is judged.
type Finding struct {
	Kind Kind
	// Case names which of the rule's cases decided, when a kind is
	// reached in more than one way (e.g. "traced" for a CPU limit the
	// kernel's trace of the syncs showed); empty otherwise.
	Case  string
	Facts []Fact
}

// Fact returns the finding's fact of that name.
func (f Finding) Fact(name string) (Fact, bool) {
	i := slices.IndexFunc(f.Facts, func(x Fact) bool { return x.Name == name })
	if i < 0 {
		return Fact{}, false
	}
	return f.Facts[i], true
}

// With returns f with a fact added.
func (f Finding) With(name string, v float64, unit string, limit float64) Finding {
	f.Facts = append(slices.Clip(f.Facts), Fact{Name: name, Value: v, Unit: unit, Limit: limit})
	return f
}
