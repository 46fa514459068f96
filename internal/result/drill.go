package result

// Drill is what one fault of `etcdbench drill` cost, as the clients of
// the put load saw it: the median over its rounds, and each round.
type Drill struct {
	// Fault names it: kill-leader, stop-leader, partition-leader,
	// move-leader.
	Fault  string `json:"fault"`
	Rounds int    `json:"rounds"`
	// The medians over the rounds (see DrillRun).
	OutageSeconds    float64 `json:"outage_seconds"`
	NewLeaderSeconds float64 `json:"new_leader_seconds"`
	// OutageAfterEndSeconds is the longest outage among the puts due
	// after the fault ended (see DrillRun).
	OutageAfterEndSeconds float64 `json:"outage_after_end_seconds"`
	Elections             float64 `json:"elections"`
	FailedRequests        float64 `json:"failed_requests"`
	SlowRequests          float64 `json:"slow_requests"`
	LateUntilSeconds      float64 `json:"late_until_seconds"`
	P99BeforeSeconds      float64 `json:"p99_before_seconds"`
	P99DuringSeconds      float64 `json:"p99_during_seconds"`
	P99AfterSeconds       float64 `json:"p99_after_seconds"`
	RestartSeconds        float64 `json:"restart_seconds,omitempty"`
	// RestartPredictedSeconds is diagnose data's prediction of that
	// restart from the killed member's data (kill-leader).
	RestartPredictedSeconds float64 `json:"restart_predicted_seconds,omitempty"`
	// CatchUpSeconds is from a member's addition to its promotion
	// (add-member).
	CatchUpSeconds float64 `json:"catch_up_seconds,omitempty"`
	// DefragSeconds is how long the leader's defragmentation took, of a
	// db of DBSizeBytes (defrag-leader).
	DefragSeconds float64 `json:"defrag_seconds,omitempty"`
	DBSizeBytes   float64 `json:"db_size_bytes,omitempty"`
	// OutageOpen says that in some round writes had not come back when
	// the load ended: the outage is at least OutageSeconds.
	OutageOpen bool       `json:"outage_open,omitempty"`
	Runs       []DrillRun `json:"runs"`
	// Timeline is the first round's puts in slices of TimelineStepNs from
	// the fault, for its chart.
	TimelineStepNs int64           `json:"timeline_step_ns"`
	Timeline       []DrillInterval `json:"timeline"`
}

// DrillRun is one round of a fault.
type DrillRun struct {
	// Leader led when the fault struck; NewLeader after it (the same
	// member when it kept its place).
	Leader    string `json:"leader"`
	NewLeader string `json:"new_leader"`
	// Member is the member defragmented (defrag-member) or handed the
	// leadership (move-leader).
	Member string `json:"member,omitempty"`
	// OutageSeconds is the write outage: from the first put at or after
	// the fault that failed or took longer than check perf's slowest-put
	// limit (0.5 s) from its due time, to the completion of the first
	// in-time put after it; 0 when no put was late. OutageOpen: writes
	// had not come back when the load ended.
	OutageSeconds float64 `json:"outage_seconds"`
	OutageOpen    bool    `json:"outage_open,omitempty"`
	// OutageAfterEndSeconds is the longest write outage among the puts
	// due after the fault ended: a member cut off without pre-vote
	// deposes the leader when it comes back.
	OutageAfterEndSeconds float64 `json:"outage_after_end_seconds"`
	// LateUntilSeconds is, from the fault, the end of the last late put
	// it caught: past the outage when some clients still waited while
	// others were served.
	LateUntilSeconds float64 `json:"late_until_seconds"`
	// NewLeaderSeconds is the time from the fault to another member
	// leading (0: none did, as when a cut lasted less than an election).
	NewLeaderSeconds float64 `json:"new_leader_seconds"`
	// Elections is how far the raft term advanced.
	Elections      uint64 `json:"elections"`
	FailedRequests int64  `json:"failed_requests"`
	SlowRequests   int64  `json:"slow_requests"`
	// The put p99s (from each put's due time) before the fault, from the
	// fault to the end of the outage or of the fault, and after.
	P99BeforeSeconds float64 `json:"p99_before_seconds"`
	P99DuringSeconds float64 `json:"p99_during_seconds"`
	P99AfterSeconds  float64 `json:"p99_after_seconds"`
	// RestartSeconds is how long the killed member took to serve clients
	// again on its data (kill-leader).
	RestartSeconds float64 `json:"restart_seconds,omitempty"`
	// RestartPredictedSeconds is diagnose data's prediction of it from
	// the killed member's data dir, RestartPredictedFrom the measured
	// figure it comes from.
	RestartPredictedSeconds float64 `json:"restart_predicted_seconds,omitempty"`
	RestartPredictedFrom    string  `json:"restart_predicted_from,omitempty"`
	// CatchUpSeconds is from a member's addition to its promotion: the
	// leader brought it up to date (add-member).
	CatchUpSeconds float64 `json:"catch_up_seconds,omitempty"`
	// DefragSeconds is how long the leader's defragmentation took, its
	// db DBSizeBytes before it (defrag-leader).
	DefragSeconds float64 `json:"defrag_seconds,omitempty"`
	DBSizeBytes   int64   `json:"db_size_bytes,omitempty"`
	Puts          int64   `json:"puts"`
}

// DrillInterval is the puts due in one slice of a drill's timeline.
type DrillInterval struct {
	// StartNs is the slice's start from the fault (negative before it).
	StartNs int64 `json:"start_ns"`
	// Puts due in it, those that Failed, and the slowest successful
	// one's latency from its due time (MaxNs) and their p99.
	Puts   int64 `json:"puts"`
	Failed int64 `json:"failed"`
	P99Ns  int64 `json:"p99_ns"`
	MaxNs  int64 `json:"max_ns"`
}
