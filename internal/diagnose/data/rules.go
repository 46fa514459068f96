package data

import (
	"fmt"
	"strings"

	"etcdbench/internal/diagnose"
	"etcdbench/internal/finding"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// Thresholds are the limits of the data rules, with their sources.
type Thresholds struct {
	// EventsShare is the share of the bytes kept (all revisions) that
	// events may hold.
	EventsShare verdict.Threshold
	// HelmRevisions is how many revisions of one Helm release may be kept.
	HelmRevisions verdict.Threshold
	// HotKey is how many revisions of one key may be kept.
	HotKey verdict.Threshold
	// Quota, Fragmentation and FragmentedMin are diagnose's (the same
	// question of the same db, asked of a live member's /metrics).
	Quota, Fragmentation, FragmentedMin verdict.Threshold
	// ConcurrentLists is how many full LISTs of the largest resource at
	// once must fit under the member's memory limit.
	ConcurrentLists verdict.Threshold
}

// DefaultThresholds are the documented limits (docs/diagnose.md).
func DefaultThresholds() Thresholds {
	d := verdict.DiagnoseDefaults()
	return Thresholds{
		EventsShare: verdict.Threshold{
			ID: "events_share", Title: "events' share of the bytes kept", Limit: 0.5, Unit: "ratio",
			Source: "etcdbench: events are records of what happened, kept for kube-apiserver's --event-ttl (1 h by default); when they hold half of what etcd keeps, they, not the cluster's objects, size the db",
		},
		HelmRevisions: verdict.Threshold{
			ID: "helm_revisions", Title: "revisions kept of one Helm release", Limit: 10, Unit: "count",
			Source: "Helm 3: helm upgrade --history-max, 10 revisions kept per release by default (0 keeps every one); each is a Secret of the whole release",
		},
		HotKey: verdict.Threshold{
			ID: "key_revisions", Title: "revisions kept of one key", Limit: 1000, Unit: "count",
			Source: "etcdbench: kube-apiserver compacts every 5 minutes (--etcd-compaction-interval), so a node Lease renewed every 10 s keeps about 30 revisions; thousands mean history is kept far longer",
		},
		Quota: d.DBQuota, Fragmentation: d.Fragmentation, FragmentedMin: d.FragmentedMin,
		ConcurrentLists: verdict.Threshold{
			ID: "concurrent_full_lists", Title: "full LISTs of the largest resource at once under the memory limit", Limit: 4, Unit: "count",
			Source: "etcdbench: every kube-apiserver lists each resource from etcd when it starts (its watch cache) and LISTs without a resourceVersion went to etcd before Kubernetes 1.31; three apiservers restarting and one client bypassing the cache are four at once (etcd-io/etcd#12342: about 100)",
		},
	}
}

// Advice of the data rules.
const (
	adviceEvents = "shorten kube-apiserver's --event-ttl (1h by default) or store events in an etcd of their own " +
		"(--etcd-servers-overrides=/events#URL); find what emits them (kubectl get events -A --sort-by=.count)"
	adviceHelm = "keep fewer revisions: helm upgrade --history-max 10 (or less), and for a release that has too many, " +
		"delete its oldest sh.helm.release.v1.<name>.v<N> Secrets; each revision is a Secret holding the whole release"
	adviceHotKey = "compact more often: kube-apiserver's --etcd-compaction-interval (5m by default; 0 turns its compaction off) " +
		"or etcd's --auto-compaction-mode/--auto-compaction-retention; then defragment to return the space"
	adviceDefrag = "defragment each member in turn (etcdctl defrag --endpoints <one member>): it rewrites the file to its in-use size, " +
		"blocking that member meanwhile, so do it off-peak"
)

// rules are the data rules as data; each judges one figure of the
// analysis.
var rules = []*diagnose.Rule{
	{ID: "db-quota", Title: "the database is near its quota", Kind: finding.Database, Rank: 40, Source: "etcd op-guide/maintenance.md (space quota)"},
	{ID: "db-fragmentation", Title: "the database file is mostly free pages", Kind: finding.Database, Rank: 41, Source: "etcd op-guide/maintenance.md (defragmentation)"},
	{ID: "events-dominate", Title: "events fill the database", Kind: finding.Database, Rank: 42, Source: "kube-apiserver --event-ttl"},
	{ID: "helm-history", Title: "Helm keeps many release revisions", Kind: finding.Database, Rank: 43, Source: "Helm 3 --history-max"},
	{ID: "key-rewritten", Title: "a key keeps thousands of revisions", Kind: finding.Database, Rank: 44, Source: "etcd op-guide/maintenance.md (history compaction)"},
	{ID: "list-memory", Title: "a few full LISTs would take the member past its memory limit", Kind: finding.Memory, Rank: 45,
		Source: "etcd-io/etcd#12342, kubernetes/kubernetes#107325: full LISTs at once OOM-kill etcd"},
}

func rule(id string) *diagnose.Rule {
	for _, r := range rules {
		if r.ID == id {
			return r
		}
	}
	panic("no data rule " + id)
}

// judge runs the data rules over a and returns the findings ranked, the
// member named by source.
func judge(a *Analysis, th Thresholds, source string) []diagnose.Finding {
	var out []diagnose.Finding
	add := func(id string, status verdict.Status, t verdict.Threshold, v float64, evidence, advice string) {
		r := rule(id)
		f := diagnose.Finding{Rule: r, Member: source, Status: status, Threshold: t, Value: v, Evidence: evidence, Advice: advice}
		f.Kind = r.Kind
		f.Facts = []finding.Fact{{Name: t.ID, Value: v, Unit: t.Unit, Limit: t.Limit}}
		out = append(out, f)
	}
	db := a.DB
	if db.Quota > 0 {
		if r := float64(db.SizeBytes) / float64(db.Quota); r >= th.Quota.Limit {
			add("db-quota", verdict.Fail, th.Quota, r, fmt.Sprintf("the db is %s of a %s quota (%.0f %%), %s of it in use",
				units.FormatBytes(db.SizeBytes), units.FormatBytes(db.Quota), 100*r, units.FormatBytes(db.InUseBytes)), diagnose.AdviceQuota)
		}
	}
	if db.SizeBytes > 0 && float64(db.InUseBytes) >= th.FragmentedMin.Limit {
		if r := float64(db.InUseBytes) / float64(db.SizeBytes); r < th.Fragmentation.Limit {
			add("db-fragmentation", verdict.Warn, th.Fragmentation, r, fmt.Sprintf("%s of the %s db is in use (%.0f %%): a defragmentation would free %s",
				units.FormatBytes(db.InUseBytes), units.FormatBytes(db.SizeBytes), 100*r, units.FormatBytes(db.FreeBytes)), adviceDefrag)
		}
	}
	var all int64
	var events *Resource
	for i, r := range a.Resources {
		all += r.BytesAllRevisions
		if r.Prefix == registry+"events/" {
			events = &a.Resources[i]
		}
	}
	if events != nil && all > 0 {
		if r := float64(events.BytesAllRevisions) / float64(all); r >= th.EventsShare.Limit {
			add("events-dominate", verdict.Warn, th.EventsShare, r, fmt.Sprintf("events hold %s of the %s kept (%.0f %%) in %d keys",
				units.FormatBytes(events.BytesAllRevisions), units.FormatBytes(all), 100*r, events.Keys), adviceEvents)
		}
	}
	if h := a.Helm; h.MostRevisions > int(th.HelmRevisions.Limit) {
		add("helm-history", verdict.Warn, th.HelmRevisions, float64(h.MostRevisions), fmt.Sprintf("release %s keeps %d revisions; %d releases keep %d release Secrets, %s",
			h.Most, h.MostRevisions, h.Releases, h.Secrets, units.FormatBytes(h.Bytes)), adviceHelm)
	}
	if len(a.TopByRevisions) > 0 {
		k := a.TopByRevisions[0]
		if float64(k.Revisions) >= th.HotKey.Limit {
			var n int
			for _, o := range a.TopByRevisions {
				if float64(o.Revisions) >= th.HotKey.Limit {
					n++
				}
			}
			more := ""
			if n > 1 {
				more = fmt.Sprintf(" (%d of the top %d keys keep as many)", n, len(a.TopByRevisions))
			}
			add("key-rewritten", verdict.Warn, th.HotKey, float64(k.Revisions), fmt.Sprintf("%s keeps %d revisions since the compaction at revision %d%s",
				strings.TrimSpace(k.Key), k.Revisions, db.CompactedRevision, more), adviceHotKey)
		}
	}
	diagnose.Rank(out)
	return out
}

// healthy is the verdict when no data rule fires.
var healthy = verdict.Threshold{ID: "healthy", Title: "nothing in the data calls for action", Unit: "count", Source: "etcdbench diagnose data rules (docs/diagnose.md)"}

// verdicts are the findings as verdicts, or one PASS saying what was
// judged.
func verdicts(fs []diagnose.Finding, quotaKnown bool) []verdict.Verdict {
	if len(fs) > 0 {
		return diagnose.Verdicts(diagnose.Evidence{}, fs, rules)
	}
	judged := "events' share, Helm's history, keys' revisions and fragmentation"
	if quotaKnown {
		judged += ", and the quota"
	} else {
		judged += " (the quota is not known offline)"
	}
	return []verdict.Verdict{{Check: healthy.ID, Title: "healthy: " + healthy.Title, Status: verdict.Pass, Unit: healthy.Unit,
		Comparison: "<=", Source: healthy.Source, Detail: fmt.Sprintf("none of the %d data rules fired: %s", len(rules), judged)}}
}
