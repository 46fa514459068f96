// Package result defines the one record every etcdbench workload produces
// and every reporter renders: what ran, with which parameters, where, what
// it measured (latency distributions, throughput, per-second series) and the
// verdicts. It is saved as JSON (schema SchemaID, documented in
// docs/json-schema.md and docs/result.schema.json) so that a run can be
// re-rendered or compared later.
package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"etcdbench/internal/finding"
	"etcdbench/internal/stats"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

// SchemaID names the JSON schema a Result follows. It changes only when a
// field is removed or its meaning changes; added fields keep it.
const SchemaID = "etcdbench.result/v1"

// Version is etcdbench's version, set at build time with
// -ldflags "-X etcdbench/internal/result.Version=...".
var Version = "0.1.0-dev"

// Result is one run of etcdbench: one or more workloads on one machine.
type Result struct {
	Schema      string        `json:"schema"`
	Tool        Tool          `json:"tool"`
	StartedAt   time.Time     `json:"started_at"`
	FinishedAt  time.Time     `json:"finished_at"`
	Environment sysinfo.Facts `json:"environment"`
	Workloads   []Workload    `json:"workloads"`
	// Status is the worst verdict of all workloads; nil when the run was
	// interrupted, since its verdicts were never reached.
	Status      *verdict.Status `json:"status,omitempty"`
	Interrupted bool            `json:"interrupted,omitempty"`
}

// Tool identifies the program and the exact command that produced a result.
type Tool struct {
	Name      string   `json:"name"`
	Version   string   `json:"version"`
	GoVersion string   `json:"go_version"`
	Args      []string `json:"args"` // the command line, to reproduce the run
}

// Workload is what one workload measured.
type Workload struct {
	Name        string               `json:"name"` // e.g. "wal"
	Description string               `json:"description"`
	Parameters  map[string]any       `json:"parameters"` // documented per workload
	Stop        Stop                 `json:"stop"`
	Ops         int64                `json:"ops"`
	Bytes       int64                `json:"bytes"`
	DurationNs  int64                `json:"duration_ns"`
	OpsPerSec   float64              `json:"ops_per_sec"`
	BytesPerSec float64              `json:"bytes_per_sec"`
	Latencies   []Latency            `json:"latencies"`
	Series      []stats.SecondSample `json:"series"` // per second, of the first latency
	Verdicts    []verdict.Verdict    `json:"verdicts"`
	Notes       []string             `json:"notes,omitempty"`
	// Figures are the workload's other scalar results (read IOPS, time to
	// durable, ratio to the idle WAL...), named and with units.
	Figures []Figure `json:"figures,omitempty"`
	// Engine names how the I/O was issued (io_uring, psync) or how the page
	// cache was defeated (O_DIRECT, fadvise), where that matters.
	Engine  string        `json:"engine,omitempty"`
	Process *ProcessStats `json:"process,omitempty"` // this process's CPU over the run
	Device  *DeviceStats  `json:"device,omitempty"`  // the block device over the run
	// Capacity is a capacity sweep's answer and curve (the capacity
	// workload only).
	Capacity *Capacity `json:"capacity,omitempty"`
	// Cluster is a live cluster's health as each member reported it
	// (`diagnose --endpoints` only).
	Cluster *Cluster `json:"cluster,omitempty"`
	// Data is what fills an etcd's database (`diagnose data` only).
	Data *Data `json:"data,omitempty"`
	// Drill is what one fault cost the clients (`drill` only).
	Drill *Drill `json:"drill,omitempty"`
}

// Data is what `diagnose data` found in one member's database: the
// figures per resource, the top keys, the leases, the file, and what the
// data costs on the disk under --dir.
type Data struct {
	// Source is "data-dir", "snapshot" or "endpoint"; Path the db file
	// read (for an endpoint, the snapshot streamed from Endpoint, since
	// removed).
	Source   string `json:"source"`
	Path     string `json:"path"`
	Endpoint string `json:"endpoint,omitempty"`
	// Keys live at the latest revision, Revisions kept since the last
	// compaction (Tombstones of deletions among them).
	Keys       int64 `json:"keys"`
	Revisions  int64 `json:"revisions"`
	Tombstones int64 `json:"tombstones"`
	// Resources are by bytes of all revisions, largest first.
	Resources []DataResource `json:"resources"`
	// TopKeys are the keys with the most revisions kept; TopKeysBySize
	// the largest at their latest revision.
	TopKeys       []DataKey  `json:"top_keys"`
	TopKeysBySize []DataKey  `json:"top_keys_by_size"`
	Leases        DataLeases `json:"leases"`
	DB            DataDB     `json:"db"`
	// Predicted is what the data costs on the disk under --dir; absent
	// with --predict=false.
	Predicted *DataPredicted `json:"predicted,omitempty"`
	// Memory is what LISTs of the data cost the member's memory against
	// its limit; absent with --predict=false.
	Memory *DataMemory `json:"memory,omitempty"`
	// AnalysisNs is how long the analysis of the db took.
	AnalysisNs int64 `json:"analysis_ns"`
}

// DataResource is one resource (a key prefix) of a database.
type DataResource struct {
	Resource string `json:"resource"`
	Prefix   string `json:"prefix"`
	// Keys and Bytes (key + value) live at the latest revision.
	Keys  int64 `json:"keys"`
	Bytes int64 `json:"bytes"`
	// BytesAllRevisions and Revisions of every revision kept since the
	// last compaction.
	BytesAllRevisions int64 `json:"bytes_all_revisions"`
	Revisions         int64 `json:"revisions"`
	// ListMemoryBytes is what one full unpaginated LIST of the resource
	// adds to the member's resident memory at its peak;
	// ListMemoryPagedBytes one paginated LIST (500 objects a page), as
	// kube-apiserver pages (predicted: Data.Memory says from what).
	ListMemoryBytes      int64 `json:"list_memory_bytes,omitempty"`
	ListMemoryPagedBytes int64 `json:"list_memory_paged_bytes,omitempty"`
}

// DataMemory is what LISTs cost a member's memory: its limit and its
// resident memory before any LIST, each with where it comes from, and
// how many full LISTs of the largest resource fit between them, from a
// probe of this etcd build.
type DataMemory struct {
	LimitBytes int64  `json:"limit_bytes"`
	LimitFrom  string `json:"limit_from"`
	IdleBytes  int64  `json:"idle_bytes"`
	IdleFrom   string `json:"idle_from"`
	// Resource is the largest resource by live bytes; ConcurrentFullLists
	// how many full LISTs of it at once fit under the limit (0: not one),
	// FullListPeakBytes the member's resident memory at one's peak.
	Resource            string `json:"resource"`
	ConcurrentFullLists int    `json:"concurrent_full_lists"`
	FullListPeakBytes   int64  `json:"full_list_peak_bytes"`
	// The probe's factors: the peak over idle per listed byte of one
	// full LIST, of each of several at once, and of a paginated LIST per
	// byte of one page; ProbeFrom says how they were measured.
	PerListedByte           float64 `json:"per_listed_byte"`
	PerListedByteConcurrent float64 `json:"per_listed_byte_concurrent"`
	PagedPerListedByte      float64 `json:"paged_per_listed_byte"`
	ProbeFrom               string  `json:"probe_from"`
}

// DataKey is one key of a top list: its revisions kept and its bytes at
// the latest revision (0 when deleted).
type DataKey struct {
	Key       string `json:"key"`
	Revisions int64  `json:"revisions"`
	Bytes     int64  `json:"bytes"`
}

// DataLeases are a database's leases and the live keys attached to them.
type DataLeases struct {
	Count        int64 `json:"count"`
	KeysAttached int64 `json:"keys_attached"`
	// The spread of the leases' granted TTLs.
	TTLMinNs    int64 `json:"ttl_min_ns"`
	TTLMedianNs int64 `json:"ttl_median_ns"`
	TTLMaxNs    int64 `json:"ttl_max_ns"`
}

// DataDB is the database file as bbolt counts it.
type DataDB struct {
	// FileBytes is the file's size; SizeBytes bbolt's pages up to their
	// high-water mark (etcd's db size), InUseBytes those less the free
	// pages (etcd's in use), FreeBytes the free pages.
	FileBytes  int64 `json:"file_bytes"`
	SizeBytes  int64 `json:"size_bytes"`
	InUseBytes int64 `json:"in_use_bytes"`
	FreeBytes  int64 `json:"free_bytes"`
	FreePages  int64 `json:"free_pages"`
	PageSize   int64 `json:"page_size"`
	// Fill is the bytes used over the bytes allocated in the buckets'
	// pages (0..1).
	Fill float64 `json:"fill"`
	// Revision is the store's revision, CompactedRevision the last
	// compaction's.
	Revision          int64  `json:"revision"`
	CompactedRevision int64  `json:"compacted_revision"`
	ConsistentIndex   uint64 `json:"consistent_index"`
	// QuotaBytes is the member's --quota-backend-bytes, when it said it.
	QuotaBytes int64 `json:"quota_bytes,omitempty"`
}

// DataPredicted is what the data costs on the disk under --dir, each
// prediction with the measured figure it comes from.
type DataPredicted struct {
	RestartSeconds      float64 `json:"restart_seconds"`
	RestartFrom         string  `json:"restart_from"`
	DefragSeconds       float64 `json:"defrag_seconds"`
	DefragFrom          string  `json:"defrag_from"`
	SnapshotSendSeconds float64 `json:"snapshot_send_seconds"`
	SnapshotSendFrom    string  `json:"snapshot_send_from"`
	// WALBytes and WALEntries are the WAL since the last snapshot that a
	// restart replays (0 for a snapshot).
	WALBytes   int64 `json:"wal_bytes"`
	WALEntries int64 `json:"wal_entries"`
}

// Cluster is what `diagnose --endpoints` found: every member as it
// answered (or why it did not), and the findings ranked, each naming the
// member.
type Cluster struct {
	Members  []ClusterMember  `json:"members"`
	Findings []ClusterFinding `json:"findings"`
	// Voters is the number of voting members in the member lists,
	// Answering how many of them answered, and Quorum how many a
	// majority needs.
	Voters    int `json:"voters"`
	Answering int `json:"answering"`
	Quorum    int `json:"quorum"`
	// TimeoutNs is the deadline of every call to one member.
	TimeoutNs int64 `json:"timeout_ns"`
}

// ClusterMember is one member's status as it reported it. The raft,
// revision and db fields are absent when it did not answer.
type ClusterMember struct {
	Name     string `json:"name"`
	Endpoint string `json:"endpoint"`
	// Answered is false when the member did not answer; Reason says why
	// (down, not answering in time, not etcd, TLS mismatch).
	Answered bool   `json:"answered"`
	Reason   string `json:"reason,omitempty"`
	ID       string `json:"id,omitempty"` // hexadecimal, as etcdctl prints it
	// ClusterID is the cluster the member says it belongs to.
	ClusterID      string `json:"cluster_id,omitempty"`
	Version        string `json:"version,omitempty"`
	StorageVersion string `json:"storage_version,omitempty"`
	// Leader is the ID of the leader as this member sees it.
	Leader      string `json:"leader,omitempty"`
	IsLeader    bool   `json:"is_leader"`
	IsLearner   bool   `json:"is_learner"`
	RaftTerm    uint64 `json:"raft_term,omitempty"`
	RaftIndex   uint64 `json:"raft_index,omitempty"`
	RaftApplied uint64 `json:"raft_applied_index,omitempty"`
	// Lag is how many raft entries this member has applied fewer than
	// the leader has committed.
	Lag             uint64   `json:"lag"`
	Revision        int64    `json:"revision,omitempty"`
	CompactRevision int64    `json:"compact_revision,omitempty"`
	DBSize          int64    `json:"db_size,omitempty"`
	DBInUse         int64    `json:"db_in_use,omitempty"`
	Quota           int64    `json:"quota,omitempty"`
	Alarms          []string `json:"alarms,omitempty"`
	// Members is the member list as this member sees it (names or IDs).
	Members []string `json:"members,omitempty"`
	// HashKV is the hash of the key space at HashRevision.
	HashKV       uint32 `json:"hash_kv,omitempty"`
	HashRevision int64  `json:"hash_revision,omitempty"`
	// HeartbeatIntervalNs and ElectionTimeoutNs are the timeouts the
	// member runs with, where its process on this machine told them;
	// TimeoutsFrom says where (absent: not known, the member is elsewhere).
	HeartbeatIntervalNs int64  `json:"heartbeat_interval_ns,omitempty"`
	ElectionTimeoutNs   int64  `json:"election_timeout_ns,omitempty"`
	TimeoutsFrom        string `json:"timeouts_from,omitempty"`
	// ResidentBytes is the member's resident memory (its metrics', else
	// its VmRSS); MemoryLimitBytes its memory limit when it runs on this
	// machine (its cgroup's, else the machine's), MemoryLimitFrom says
	// which.
	ResidentBytes    int64  `json:"resident_bytes,omitempty"`
	MemoryLimitBytes int64  `json:"memory_limit_bytes,omitempty"`
	MemoryLimitFrom  string `json:"memory_limit_from,omitempty"`
	// Reads are the serializable and linearizable read latencies.
	SerializableRead *ReadLatency `json:"serializable_read,omitempty"`
	LinearizableRead *ReadLatency `json:"linearizable_read,omitempty"`
}

// ReadLatency is a series of small reads' latency at one member.
type ReadLatency struct {
	Count int64 `json:"count"`
	P50Ns int64 `json:"p50_ns"`
	P99Ns int64 `json:"p99_ns"`
	MaxNs int64 `json:"max_ns"`
}

// ClusterFinding is one finding of `diagnose --endpoints`, in rank order
// (the first is the top cause); its verdict is the workload's verdict of
// the same rank.
type ClusterFinding struct {
	Rank     int     `json:"rank"`
	Rule     string  `json:"rule"`
	Kind     string  `json:"kind"`
	Status   string  `json:"status"`
	Member   string  `json:"member"`
	Endpoint string  `json:"endpoint,omitempty"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Limit    float64 `json:"limit"`
	Evidence string  `json:"evidence"`
	Advice   string  `json:"advice"`
}

// Capacity is what a sweep of rising offered rates found: the highest
// rate whose step met every limit, the curve of steps, and what bent it.
type Capacity struct {
	// Rate is the highest offered rate that passed (0: none did); Upper
	// the lowest that failed (0: none did, so the capacity is at least
	// Rate). The true limit lies between them.
	Rate  float64 `json:"rate"`
	Upper float64 `json:"upper,omitempty"`
	Unit  string  `json:"unit"` // what the rate counts, e.g. "writes/s"
	// Criterion is what every step had to meet, in words.
	Criterion string `json:"criterion"`
	// Confidence is the overall level of the sweep's verdicts; each step
	// was judged at StepConfidence, its share (Bonferroni over MaxSteps).
	Confidence     float64 `json:"confidence"`
	StepConfidence float64 `json:"step_confidence"`
	// Decided says whether the two steps that bound the answer were
	// both statistically decided (not cut off at their time cap).
	Decided bool `json:"decided"`
	// FailedRule is the check that failed first at Upper.
	FailedRule string `json:"failed_rule,omitempty"`
	// Bend is what bends the curve: "rate-cap" (syncs per second flat
	// while the offered rate rises), "queueing" (sync time grows with the
	// batch), "stalls" (a tail of rare slow syncs), "backlog" (the rate
	// was not kept), "none" (no step failed); for `etcd capacity`, the
	// resource that limits etcd ("cpu", "disk", "network", "leader",
	// "client", "unknown"). Evidence says why in words.
	Bend     finding.Kind `json:"bend"`
	Evidence string       `json:"evidence"`
	// Marks are reference loads and whether the capacity carries them;
	// Sizes the cluster sizes of etcd's hardware guide (by the requests
	// per second each serves at most) and whether it fits them.
	Marks []CapacityMark `json:"marks,omitempty"`
	Sizes []CapacityMark `json:"sizes,omitempty"`
	Steps []CapacityStep `json:"steps"`
	// Interrupted is set when the sweep was stopped before its answer.
	Interrupted bool `json:"interrupted,omitempty"`
	// Etcd is the put rate an etcd on this storage and this machine is
	// expected to sustain (the disk sweep of `capacity` only, when the
	// CPU side was measured).
	Etcd *CapacityEstimate `json:"etcd,omitempty"`
	// Budgets are what a volume must give etcd for each reference load
	// (check perf's and the hardware guide's), from the device cost per
	// put the sweep measured (the disk sweep only, when the device's
	// counters were read).
	Budgets []CapacityBudget `json:"budgets,omitempty"`
	// Volume is what the volume was found to give, when the device's
	// writes per second stayed flat while the offered rate rose (a cap
	// bends the curve); nil otherwise.
	Volume *CapacityVolume `json:"volume,omitempty"`
	// BackgroundWriteIOPS is the device's writes per second by other
	// processes, in the idle second before the disk sweep (the disk
	// sweep only); the budgets' cost per put is net of it.
	BackgroundWriteIOPS float64 `json:"background_write_iops,omitempty"`
	// Cluster is what members put apart on this machine carried (a
	// sweep of members apart, --peer-rtt): the row's answer, its put
	// latency and the prediction for members on machines of their own;
	// nil for a sweep of members not put apart.
	Cluster *ClusterCapacity `json:"cluster,omitempty"`
}

// ClusterCapacity is one row of "what members R apart carry": the
// sweep of members whose peer links hold every byte for half the round
// trip each way, on this machine (they share its disk and CPUs), and a
// prediction for as many machines like this one, each with its own
// member.
type ClusterCapacity struct {
	Members      int   `json:"members"`
	PeerRTTNs    int64 `json:"peer_rtt_ns"`
	PeerJitterNs int64 `json:"peer_jitter_ns,omitempty"`
	// MemberRTTNs is each member's own round trip to the others (--peer-rtt
	// m3=40ms; 0: none): a pair's is the larger of theirs and PeerRTTNs.
	MemberRTTNs []int64 `json:"member_rtt_ns,omitempty"`
	// Rate and Upper are what the emulated cluster carried (Upper 0: at
	// least Rate): `etcd capacity`'s sweep, or `capacity`'s estimate
	// (the lower of the disk's model and the sweep); LimitedBy what bends
	// it ("network" when each put's wait for the round trip sets it).
	Rate      float64      `json:"rate"`
	Upper     float64      `json:"upper,omitempty"`
	LimitedBy finding.Kind `json:"limited_by"`
	// Clients are check perf's clients at Rate; RequestP50Ns and
	// RequestP99Ns the puts' latency from their due time at Rate (0: no
	// rate passed).
	Clients      int   `json:"clients"`
	RequestP50Ns int64 `json:"request_p50_ns"`
	RequestP99Ns int64 `json:"request_p99_ns"`
	// Evidence says what the row measured and on what, in words.
	Evidence string `json:"evidence"`
	// Machines is the prediction for Members machines like this one;
	// nil when no single member was measured.
	Machines *ClusterPrediction `json:"machines,omitempty"`
}

// ClusterPrediction is what members PeerRTT apart, each on a machine like
// this one, are predicted to carry: this machine's single member's
// answer, bounded by what check perf's clients send when each put also
// waits for the round trip.
type ClusterPrediction struct {
	// Rate is the prediction (Upper 0: at least Rate; Upper = Rate: at
	// most, the network's bound).
	Rate  float64 `json:"rate"`
	Upper float64 `json:"upper,omitempty"`
	// OneMember and OneMemberUpper are this machine's single member's
	// answer; OneMemberP50Ns its put p50 there.
	OneMember      float64 `json:"one_member"`
	OneMemberUpper float64 `json:"one_member_upper,omitempty"`
	OneMemberP50Ns int64   `json:"one_member_p50_ns"`
	// NetworkBound is the highest rate whose check perf clients, each
	// waiting the round trip plus OneMemberP50Ns for every put, send it
	// (0: a put would wait longer than check perf's slowest request
	// allows); LimitedBy is "network" when it sets Rate, else the single
	// member's limit.
	NetworkBound float64      `json:"network_bound"`
	LimitedBy    finding.Kind `json:"limited_by"`
	// Evidence says which measured figure each number comes from.
	Evidence string `json:"evidence"`
}

// CapacityBudget is what a volume must give etcd for one reference load:
// the load's rate times the device cost per put measured at the nearest
// passing step, and the latency limits every step was judged against.
type CapacityBudget struct {
	Name string  `json:"name"` // the mark's or size's name
	Rate float64 `json:"rate"` // puts per second
	// Kind is "check-perf" (a check perf load) or "cluster-size" (a size
	// of etcd's hardware guide).
	Kind string `json:"kind"`
	// WriteIOPS, WriteBytesPerSec and FlushesPerSec are the device's
	// writes, bytes written and flushes per second at Rate.
	WriteIOPS        float64 `json:"write_iops"`
	WriteBytesPerSec float64 `json:"write_bytes_per_sec"`
	FlushesPerSec    float64 `json:"flushes_per_sec"`
	// SyncP99Ns and CommitP99Ns are the latencies the volume must keep
	// at that load: the WAL fdatasync p99 and the backend commit p99.
	SyncP99Ns   int64 `json:"sync_p99_ns"`
	CommitP99Ns int64 `json:"commit_p99_ns"`
	// CostFrom is the offered rate of the step whose cost per put was
	// used (the passing step nearest Rate).
	CostFrom float64 `json:"cost_from"`
	// Fits says whether the volume found (Capacity.Volume) gives that
	// many write IOPS; absent when no cap was found.
	Fits *bool `json:"fits,omitempty"`
}

// CapacityVolume is what a volume was found to give: the write IOPS at
// which the device's writes per second stayed while the offered rate
// rose, and the bytes per second meanwhile.
type CapacityVolume struct {
	WriteIOPS        float64 `json:"write_iops"`
	WriteBytesPerSec float64 `json:"write_bytes_per_sec"`
	// BurstWriteIOPS is the most writes per second the device gave an
	// earlier, passing step, when that is well above WriteIOPS: the
	// volume gave more while it could (burst credits) than it sustains,
	// and the passes on that burst are not counted; 0 otherwise.
	BurstWriteIOPS float64 `json:"burst_write_iops,omitempty"`
	// Evidence says which steps showed it, in words.
	Evidence string `json:"evidence"`
}

// StepDevice is what the block device did during one step (two reads of
// /proc/diskstats; other processes' writes included, and the
// filesystem's journal): per second and per entry (put).
type StepDevice struct {
	WriteIOPS        float64 `json:"write_iops"`
	WriteBytesPerSec float64 `json:"write_bytes_per_sec"`
	FlushesPerSec    float64 `json:"flushes_per_sec"`
	WritesPerEntry   float64 `json:"writes_per_entry"`
	BytesPerEntry    float64 `json:"bytes_per_entry"`
	FlushesPerEntry  float64 `json:"flushes_per_entry"`
}

// CapacityEstimate is the put rate an etcd is expected to sustain on a
// storage and a machine: the lower of what the storage carries (the disk
// sweep) and what the machine's CPUs carry (an embedded etcd whose
// fsyncs cost nothing), and which of the two limits it.
type CapacityEstimate struct {
	// Rate and Upper bound the estimate as Capacity's do (Upper 0: at
	// least Rate).
	Rate  float64 `json:"rate"`
	Upper float64 `json:"upper,omitempty"`
	// LimitedBy is "disk", "cpu", or "none" when neither sweep found its
	// limit below the rates tried.
	LimitedBy finding.Kind `json:"limited_by"`
	// DiskRate, DiskUpper and CPURate, CPUUpper are the two sides.
	DiskRate  float64 `json:"disk_rate"`
	DiskUpper float64 `json:"disk_upper,omitempty"`
	CPURate   float64 `json:"cpu_rate"`
	CPUUpper  float64 `json:"cpu_upper,omitempty"`
	// PassedAbove is the highest rate its side carried above Upper (0:
	// none): the estimate is then unstable, between Rate and it.
	PassedAbove float64 `json:"passed_above,omitempty"`
	// WithoutDiskModel says the disk's model did not run (check --quick):
	// the estimate is the etcd side's alone, and DiskRate is not a rate.
	WithoutDiskModel bool `json:"without_disk_model,omitempty"`
	// Evidence says why, in words.
	Evidence string `json:"evidence"`
	// Neighbours is what other processes took of this machine while the
	// estimate was measured; nil when it could not be read.
	Neighbours *Neighbours `json:"neighbours,omitempty"`
}

// Neighbours is what other processes than etcdbench took of the machine
// and of the device under the directory, measured while etcdbench was
// idle: a busy control-plane node's share that etcd does not get.
type Neighbours struct {
	// CPUs is how many of the machine's CPUs other processes kept busy
	// (its busy share times its CPUs, less etcdbench's own); HostCPUs the
	// machine's online CPUs.
	CPUs     float64 `json:"cpus"`
	HostCPUs int     `json:"host_cpus"`
	// WriteIOPS is the device's writes per second by other processes
	// (0: none, or not read).
	WriteIOPS float64 `json:"write_iops"`
}

// CapacityMark is a named reference load (etcdctl check perf's s, m, l,
// xl) and whether the measured capacity carries it.
type CapacityMark struct {
	Name    string  `json:"name"`
	Rate    float64 `json:"rate"`
	Carried bool    `json:"carried"`
	Source  string  `json:"source"`
}

// CapacityStep is one step of a capacity sweep: one offered rate, what
// it did and its verdict.
type CapacityStep struct {
	Phase    string         `json:"phase"` // "ladder", "down" or "bisect"
	Rate     float64        `json:"rate"`  // offered
	Achieved float64        `json:"achieved"`
	Status   verdict.Status `json:"status"`
	Decided  bool           `json:"decided"` // the p99 verdict was statistically decided
	// Failed is the check that failed, empty for a passing step.
	Failed     string `json:"failed,omitempty"`
	DurationNs int64  `json:"duration_ns"`
	Syncs      int64  `json:"syncs"`
	// SyncP50Ns and SyncP99Ns are the WAL fdatasync's (for etcd, the
	// members' wal_fsync) percentiles; CommitP50Ns and CommitP99Ns those
	// of each entry's (put's) latency from its scheduled arrival.
	SyncP50Ns      int64   `json:"sync_p50_ns"`
	SyncP99Ns      int64   `json:"sync_p99_ns"`
	CommitP50Ns    int64   `json:"commit_p50_ns"`
	CommitP99Ns    int64   `json:"commit_p99_ns"`
	SyncsPerSec    float64 `json:"syncs_per_sec"`
	EntriesPerSync float64 `json:"entries_per_sync"`
	BytesPerSync   float64 `json:"bytes_per_sync"`
	BacklogMax     float64 `json:"backlog_max"`
	LagEndNs       int64   `json:"lag_end_ns"`
	// CommitMaxNs is the slowest entry's latency from its scheduled
	// arrival (check perf's slowest request); 0 when not measured.
	CommitMaxNs int64 `json:"commit_max_ns,omitempty"`
	// BackendCommitP99Ns and BackendCommits are the p99 and the number of
	// the backend commits during the step (the disk sweep's etcd
	// backend); absent when none ran.
	BackendCommitP99Ns int64 `json:"backend_commit_p99_ns,omitempty"`
	BackendCommits     int64 `json:"backend_commits,omitempty"`
	// BackendCommitTimed says the backend commit p99 is the commits as
	// timed around each, not etcd's own histogram of them (which also
	// counted another etcd backend's commits in the process); absent:
	// etcd's own.
	BackendCommitTimed bool `json:"backend_commit_timed,omitempty"`
	// MaxBatch is the most entries one sync could carry (etcd's raft
	// saves at most the proposals its clients have in flight); 0: no
	// bound recorded.
	MaxBatch int `json:"max_batch,omitempty"`
	// HeldFromNs, when set, says the step was held: a step of this length
	// failed only on a p99 its few observations set, and not for good,
	// so it ran again at the same rate for DurationNs (etcd capacity's
	// steps; see docs/capacity.md, Held steps). A held step that fails
	// is not repeated: its hundred observations are not one stall.
	HeldFromNs int64 `json:"held_from_ns,omitempty"`
	// Device is what the block device did during the step; nil when its
	// counters could not be read.
	Device *StepDevice `json:"device,omitempty"`
	// Extra holds figures of one kind of sweep (etcd's backend commit
	// p99, leader changes...).
	Extra []Figure `json:"extra,omitempty"`
}

// Figure is one named scalar result.
type Figure struct {
	Name        string  `json:"name"` // stable identifier, e.g. "read_iops"
	Value       float64 `json:"value"`
	Unit        string  `json:"unit"` // "ops/s", "B/s", "s", "ratio", "%"
	Description string  `json:"description"`
}

// ProcessStats is the CPU etcdbench itself used during a workload, from
// getrusage(2).
type ProcessStats struct {
	UserNs            int64 `json:"user_ns"`
	SystemNs          int64 `json:"system_ns"`
	VoluntarySwitches int64 `json:"voluntary_switches"`
	InvoluntarySwitch int64 `json:"involuntary_switches"`
}

// DeviceStats is what the block device did during a workload, from the
// difference of two reads of /proc/diskstats. Other processes' I/O on the
// same device is included.
type DeviceStats struct {
	Name        string  `json:"name"`
	ReadIOs     int64   `json:"read_ios"`
	WriteIOs    int64   `json:"write_ios"`
	FlushIOs    int64   `json:"flush_ios"`
	ReadBytes   int64   `json:"read_bytes"`
	WriteBytes  int64   `json:"write_bytes"`
	BusyNs      int64   `json:"busy_ns"`     // time with at least one I/O in flight
	Utilization float64 `json:"utilization"` // busy time / elapsed, 0..1
	// AvgQueue is the average number of I/Os in flight (weighted time in
	// queue / elapsed), the "aqu-sz" of iostat.
	AvgQueue float64 `json:"avg_queue"`
	// AvgWaitNs is the mean time an I/O spent queued and in service.
	AvgWaitNs float64 `json:"avg_wait_ns"`
}

// Figure returns the named figure of a workload, or nil.
func (w *Workload) Figure(name string) *Figure {
	for i := range w.Figures {
		if w.Figures[i].Name == name {
			return &w.Figures[i]
		}
	}
	return nil
}

// Stop records how and why a workload ended.
type Stop struct {
	Mode   string `json:"mode"`   // adaptive, size, count or time
	Reason string `json:"reason"` // in words
	// Outcome is the stop rule's last decision (pass, fail, undecided).
	Outcome stats.Outcome `json:"outcome"`
	Looks   int           `json:"looks"` // times the stop rule was consulted
}

// Latency is the distribution of one timed operation (e.g. fdatasync).
type Latency struct {
	Name string `json:"name"`
	stats.Summary
	P99CI      *stats.QuantileInterval `json:"p99_ci,omitempty"`
	Exceedance *Exceedance             `json:"exceedance,omitempty"`
	Histogram  stats.EncodedHistogram  `json:"histogram"`
	// Series is this latency's own per-second series, for a latency
	// other than the workload's first when it has one (the trace's db,
	// snapshot and other files' syncs); the first one's is Workload.Series.
	Series []stats.SecondSample `json:"series,omitempty"`
}

// Exceedance is how often the operation was slower than a threshold, with a
// confidence interval for the true probability.
type Exceedance struct {
	ThresholdNs  int64          `json:"threshold_ns"`
	Count        int64          `json:"count"`
	Fraction     float64        `json:"fraction"`
	Interval     stats.Interval `json:"interval"`      // two-sided, on the probability
	DesignEffect float64        `json:"design_effect"` // variance inflation from autocorrelation
	NEff         float64        `json:"n_eff"`         // samples worth of independent evidence
}

// Latency returns the named latency of a workload, or nil.
func (w *Workload) Latency(name string) *Latency {
	for i := range w.Latencies {
		if w.Latencies[i].Name == name {
			return &w.Latencies[i]
		}
	}
	return nil
}

// Finish records the end time and sets the overall status from every
// workload's verdicts, unless the run was interrupted.
func (r *Result) Finish(at time.Time) {
	r.FinishedAt = at
	r.Status = nil
	if r.Interrupted {
		return
	}
	var all []verdict.Verdict
	for _, w := range r.Workloads {
		all = append(all, w.Verdicts...)
	}
	s := verdict.Worst(all)
	r.Status = &s
}

// Failed reports whether the run finished with a FAIL verdict.
func (r *Result) Failed() bool { return r.Status != nil && *r.Status == verdict.Fail }

// ErrSchema is returned by Read for a file that is not an etcdbench result.
var ErrSchema = errors.New("not an etcdbench result")

// Read parses a saved result and checks its schema.
func Read(rd io.Reader) (*Result, error) {
	var r Result
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSchema, err)
	}
	if r.Schema != SchemaID {
		return nil, fmt.Errorf("%w: schema %q, this etcdbench reads %q", ErrSchema, r.Schema, SchemaID)
	}
	return &r, nil
}

// ReadFiles reads the saved results at paths ("-" is standard input);
// every error names its file.
func ReadFiles(paths []string) ([]*Result, error) {
	var rs []*Result
	for _, p := range paths {
		r, err := readFile(p)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

func readFile(path string) (*Result, error) {
	var in io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		in = f
	}
	r, err := Read(in)
	if errors.Is(err, ErrSchema) {
		return nil, fmt.Errorf("%s: %w (save one with -o json)", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return r, nil
}

// UndecidedAbove is the highest rate above the answer whose step was
// neither carried nor failed (its p99 verdict not decided), or 0: probes
// and the failures a later step overruled do not count.
func (c *Capacity) UndecidedAbove() float64 {
	r := 0.0
	for _, s := range c.Steps {
		if s.Phase != "probe" && s.Phase != "retried" && s.Phase != "low" && !s.Decided && s.Status != verdict.Fail && s.Rate > c.Rate {
			r = max(r, s.Rate)
		}
	}
	return r
}

// PassedAbove is the highest rate of a step that passed above the lowest
// failing one (Upper), probes included, or 0: where it is not 0 the
// answer is unstable, carried up to Rate, failed at Upper and carried
// again at PassedAbove, as a busy machine's stalls make it.
func (c *Capacity) PassedAbove() float64 {
	r := 0.0
	if c.Upper == 0 {
		return 0
	}
	for _, s := range c.Steps {
		if s.Decided && s.Status != verdict.Fail && s.Rate > c.Upper {
			r = max(r, s.Rate)
		}
	}
	return r
}
