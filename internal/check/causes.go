package check

import (
	"fmt"
	"sort"

	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// kindOf maps the checks' IDs, each taken from its one definition, to
// the kind of trouble they point at.
var kindOf = func() map[string]finding.Kind {
	d, perf, diag := verdict.Defaults(), verdict.CheckPerfDefaults(), verdict.DiagnoseDefaults()
	m := map[string]finding.Kind{
		verdict.CheckWALFsyncUnderLoad:  finding.Disk,
		verdict.CheckMountFlushDisabled: finding.NotDurable,
		verdict.CheckNetworkFS:          finding.Unsuitable,
		verdict.CheckContainerLayer:     finding.Unsuitable,
	}
	for k, ths := range map[finding.Kind][]verdict.Threshold{
		finding.Disk:         {d.WALFsyncP99, d.BackendCommitP99, d.SyncIOPSMin, d.SyncIOPSHeavy, perf.ThroughputRatio, d.CapacityMin},
		finding.FakeSync:     {d.ImplausibleSync, d.RotationalSync},
		finding.Member:       {diag.LeaderChanges, diag.SlowApplies},
		finding.SlowRecovery: {d.RecoveryBW, d.RecoveryBWLarge},
	} {
		for _, th := range ths {
			m[th.ID] = k
		}
	}
	return m
}()

// Finding is one kind of trouble with the verdicts that point at it: a
// fact per verdict (its check, value and limit), and the same in words.
type Finding struct {
	finding.Finding
	Status verdict.Status // the worst of its verdicts
	// Title is the verdict's title when its check points at no known
	// kind (Kind is then finding.Unknown).
	Title    string
	Evidence []string // "workload: STATUS title value (limit)"
	// Advisory is set when a closed-loop WAL test's FAIL counts as a
	// WARN (Advise): the storage carries etcd's load.
	Advisory bool
}

// limitedBy is what limits the estimate capacity_min judges, when v is
// that verdict on w and the estimate named a known resource other than
// none: an etcd side that gave out on the CPUs is a CPU finding, not the
// disk's, whose advice (a faster disk) would not help.
func limitedBy(w result.Workload, v verdict.Verdict) finding.Kind {
	if v.Check != verdict.Defaults().CapacityMin.ID || w.Capacity == nil || w.Capacity.Etcd == nil {
		return ""
	}
	if k := w.Capacity.Etcd.LimitedBy; k.Known() && k != finding.None && k != finding.Unknown {
		return k
	}
	return ""
}

// Name is the finding in words: its kind's name, or the title of a
// verdict of no known kind.
func (f Finding) Name() string {
	if f.Kind == finding.Unknown {
		return f.Title
	}
	return f.Kind.Info().Name
}

// Advice says what to do about the finding.
func (f Finding) Advice() string {
	if a := f.Kind.Info().Advice; a != "" && f.Kind != finding.Unknown {
		return a
	}
	return "see the verdict's detail above"
}

func (f Finding) rank() int { return f.Kind.Info().Rank }

// Findings groups the workloads' FAIL and WARN verdicts by kind, worst
// status first, then by the kind's rank. Verdicts of no known kind are
// grouped under their own title.
func Findings(ws []result.Workload) []Finding { return findings(ws, nil) }

// findings is Findings with the kind of some verdicts decided by kindAt
// (ok false: the verdict's own kind): what the run measured beside the
// verdicts, typed, can name a cause its check alone does not.
func findings(ws []result.Workload, kindAt func(w result.Workload, v verdict.Verdict) (finding.Kind, bool)) []Finding {
	type key struct {
		kind  finding.Kind
		title string
	}
	byKey := map[key]*Finding{}
	var out []*Finding
	for _, w := range ws {
		for _, v := range w.Verdicts {
			st := v.Counted()
			if st != verdict.Fail && st != verdict.Warn {
				continue
			}
			k, ok := kindOf[v.Check]
			if lim := limitedBy(w, v); lim != "" {
				k, ok = lim, true
			}
			if kindAt != nil {
				if at, atOK := kindAt(w, v); atOK {
					k, ok = at, true
				}
			}
			if verdict.IsDurabilityFailure(v) {
				k, ok = finding.NotDurable, true
			}
			id := key{kind: k}
			if !ok {
				id = key{kind: finding.Unknown, title: v.Title}
			}
			f := byKey[id]
			if f == nil {
				f = &Finding{Finding: finding.Finding{Kind: id.kind}, Status: st, Title: id.title}
				byKey[id] = f
				out = append(out, f)
			}
			f.Advisory = f.Advisory || v.Advisory
			if st > f.Status {
				f.Status = st
			}
			f.Facts = append(f.Facts, finding.Fact{Name: w.Name + ": " + v.Check, Value: v.Value, Unit: v.Unit, Limit: v.Limit})
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: %s %s %s (limit %s)", w.Name, v.Status, v.Title, units.FormatValue(v.Value, v.Unit), v.LimitText()))
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Status != out[j].Status {
			return out[i].Status > out[j].Status
		}
		return out[i].rank() < out[j].rank()
	})
	res := make([]Finding, len(out))
	for i, f := range out {
		res[i] = *f
	}
	return res
}
