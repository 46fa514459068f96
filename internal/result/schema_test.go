package result_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/capacity/diskmodel"
	"etcdbench/internal/check"
	"etcdbench/internal/disk"
	"etcdbench/internal/drill"
	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/finding"
	"etcdbench/internal/report"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/testutil/loopmount"
	"etcdbench/internal/verdict"
)

// validate checks v against the subset of JSON Schema that
// docs/result.schema.json uses (type, required, properties, items, enum,
// local $ref). It is strict: an object whose schema lists properties may not
// carry others, so the documentation cannot fall behind the code.
func validate(root, s map[string]any, v any, path string) []string {
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		s = root["$defs"].(map[string]any)[name].(map[string]any)
	}
	var errs []string
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if e == v {
				found = true
			}
		}
		if !found {
			errs = append(errs, fmt.Sprintf("%s: %v not in %v", path, v, enum))
		}
	}
	switch s["type"] {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return append(errs, path+": not an object")
		}
		for _, r := range asSlice(s["required"]) {
			if _, ok := obj[r.(string)]; !ok {
				errs = append(errs, fmt.Sprintf("%s: missing required %q", path, r))
			}
		}
		if props, ok := s["properties"].(map[string]any); ok {
			for k, val := range obj {
				ps, ok := props[k].(map[string]any)
				if !ok {
					errs = append(errs, fmt.Sprintf("%s: %q is not documented in the schema", path, k))
					continue
				}
				errs = append(errs, validate(root, ps, val, path+"."+k)...)
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return append(errs, path+": not an array")
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, it := range arr {
				errs = append(errs, validate(root, items, it, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	case "string":
		if _, ok := v.(string); !ok {
			errs = append(errs, path+": not a string")
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			errs = append(errs, path+": not a boolean")
		}
	case "number":
		if _, ok := v.(float64); !ok {
			errs = append(errs, path+": not a number")
		}
	case "integer":
		if f, ok := v.(float64); !ok || f != float64(int64(f)) {
			errs = append(errs, path+": not an integer")
		}
	}
	return errs
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("../../docs/result.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func checkDoc(t *testing.T, schema map[string]any, doc []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	for _, e := range validate(schema, schema, v, "$") {
		t.Error(e)
	}
}

// TestRealRunMatchesSchema runs a short real WAL loop and checks its JSON
// against docs/result.schema.json.
func TestRealRunMatchesSchema(t *testing.T) {
	schema := loadSchema(t)
	dir := t.TempDir()
	cfg := disk.WALConfig{BlockSize: 2300, Count: 200, Mode: disk.ModeCount,
		Rule: stats.StopRule{Threshold: 10 * time.Millisecond, Quantile: 0.99, Confidence: 0.95, Interval: time.Second}}
	run, err := disk.RunWAL(context.Background(), dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	env := sysinfo.Collect("/", dir)
	wl, err := run.Workload(verdict.Defaults(), env)
	if err != nil {
		t.Fatal(err)
	}
	r := &result.Result{Schema: result.SchemaID, Tool: result.Tool{Name: "etcdbench", Version: result.Version, Args: []string{"test"}},
		StartedAt: time.Now(), Environment: env, Workloads: []result.Workload{wl}}
	r.Finish(time.Now())
	var b bytes.Buffer
	if err := report.JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	checkDoc(t, schema, b.Bytes())
}

// TestEveryWorkloadMatchesSchema runs every registered workload briefly as
// one suite and checks the whole result against the schema, so that a field
// any workload adds must be documented.
func TestEveryWorkloadMatchesSchema(t *testing.T) {
	schema := loadSchema(t)
	small := map[string]map[string]string{
		"backend":        {"db-size": "4m", "runtime": "1s", "min-runtime": "500ms"},
		"wal-under-load": {"runtime": "1s", "min-runtime": "500ms"},
		"mixed":          {"size": "8m", "runtime": "500ms", "numjobs": "1", "iodepth": "2"},
		"snapshot":       {"size": "4m"},
		"compaction":     {"size": "4m", "sync-every": "1m"},
		"recovery":       {"size": "4m", "random-runtime": "200ms"},
		"capacity":       {"start": "2000", "max-rate": "4000", "step-runtime": "1s", "step-min-runtime": "200ms"},
	}
	p, err := disk.PresetNamed("quick")
	if err != nil {
		t.Fatal(err)
	}
	p.WAL.MinRuntime, p.WAL.MinSamples, p.WAL.Runtime = 500*time.Millisecond, 10, time.Second
	p.Backend.DBSize = 4 << 20
	var ws []disk.Named
	for _, spec := range diskmodel.Specs() {
		w, err := spec.Build(p, disk.NewSettings(small[spec.Name]))
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, disk.Named{Name: spec.Name, Workload: w})
	}
	dir := t.TempDir()
	env := disk.Env{Dir: dir, Root: "/", Facts: sysinfo.Collect("/", dir), Thresholds: verdict.Defaults()}
	wls, _, err := disk.RunSuite(context.Background(), env, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &result.Result{Schema: result.SchemaID, Tool: result.Tool{Name: "etcdbench", Version: result.Version, Args: []string{"test"}},
		StartedAt: time.Now(), Environment: env.Facts, Workloads: wls}
	r.Finish(time.Now())
	var b bytes.Buffer
	if err := report.JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	checkDoc(t, schema, b.Bytes())
}

func TestGoldenMatchesSchema(t *testing.T) {
	b, err := os.ReadFile("../report/testdata/wal.json")
	if err != nil {
		t.Fatal(err)
	}
	checkDoc(t, loadSchema(t), b)
}

// TestDiagnoseDataFixtureMatchesSchema checks a real `diagnose data`
// run's JSON (a member's data dir with its predictions) against the
// schema.
func TestDiagnoseDataFixtureMatchesSchema(t *testing.T) {
	b, err := os.ReadFile("../report/testdata/diagnose-data.json")
	if err != nil {
		t.Fatal(err)
	}
	checkDoc(t, loadSchema(t), b)
}

func TestValidatorCatchesDrift(t *testing.T) {
	schema := loadSchema(t)
	bad := []byte(`{"schema":"etcdbench.result/v1","tool":{"name":"x","version":"1","go_version":"go","args":[]},
		"started_at":"t","finished_at":"t","environment":{"dir":"/","filesystem":{},"kernel":"k","cpus":1},
		"workloads":[],"status":"MAYBE","surprise":1}`)
	var v any
	if err := json.Unmarshal(bad, &v); err != nil {
		t.Fatal(err)
	}
	errs := strings.Join(validate(schema, schema, v, "$"), "\n")
	for _, want := range []string{`"surprise" is not documented`, "MAYBE not in", `missing required "type"`} {
		if !strings.Contains(errs, want) {
			t.Errorf("validator missed %q; got:\n%s", want, errs)
		}
	}
}

// TestEtcdWorkloadMatchesSchema runs a small put load against an embedded
// etcd and checks its result against the schema.
func TestEtcdWorkloadMatchesSchema(t *testing.T) {
	schema := loadSchema(t)
	dir := t.TempDir()
	c, err := etcdcluster.Start(context.Background(), etcdcluster.Options{Dir: dir, Members: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Every load kind, the defragmentation figures, and the check's
	// summary of them all.
	var wls []result.Workload
	var measured check.Measured
	for _, op := range etcdload.Ops {
		l := etcdload.DefaultLoad(op)
		l.Client.Endpoints = c.Endpoints()
		l.RunID = etcdload.NewRunID()
		l.Total, l.Clients = 200, 4
		if op == etcdload.OpWatch {
			l.Total, l.Rate = 20, 1000
		}
		out, err := etcdload.Bench(context.Background(), l, etcdload.BenchOptions{Targets: observe.EmbeddedTargets(c.MetricsURLs()), Thresholds: verdict.Defaults(),
			After: etcdload.Maintenance{Compact: op == etcdload.OpTxn, Defrag: op == etcdload.OpTxn}})
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		wls = append(wls, out.Workload)
		if op == etcdload.OpPut {
			measured.PutMembers = out.Members
		}
	}
	wls = append(wls, check.Summarize(wls, measured, false))
	r := &result.Result{Schema: result.SchemaID, Tool: result.Tool{Name: "etcdbench", Version: result.Version, Args: []string{"test"}},
		StartedAt: time.Now(), Environment: sysinfo.Collect("/", dir), Workloads: wls}
	r.Finish(time.Now())
	var b bytes.Buffer
	if err := report.JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	checkDoc(t, schema, b.Bytes())
}

// TestStackedRunMatchesSchema runs the WAL workload (with its flush
// probe) on an ext4 image mounted barrier=0 on a real loop device, so that
// the storage chain and the durability verdict are checked against the
// schema too.
func TestStackedRunMatchesSchema(t *testing.T) {
	schema := loadSchema(t)
	m := loopmount.Mount(t, "", "ext4", "barrier=0", 256<<20) // two 64 MB WAL segments fit
	p, err := disk.PresetNamed("quick")
	if err != nil {
		t.Fatal(err)
	}
	p.WAL.MinRuntime, p.WAL.MinSamples, p.WAL.Runtime = 500*time.Millisecond, 10, time.Second
	spec, _ := disk.Lookup("wal")
	w, err := spec.Build(p, disk.NewSettings(nil))
	if err != nil {
		t.Fatal(err)
	}
	env := disk.Env{Dir: m.Dir, Root: "/", Facts: sysinfo.Collect("/", m.Dir), Thresholds: verdict.Defaults()}
	if env.Facts.Stack == nil {
		t.Fatalf("no storage chain for %s: %q", m.Loop, env.Facts.Notes)
	}
	wl, err := w.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if wl.Verdicts[0].Check != verdict.CheckMountFlushDisabled {
		t.Errorf("first verdict %s, want %s", wl.Verdicts[0].Check, verdict.CheckMountFlushDisabled)
	}
	if wl.Figure("flush_probe_with_flush_p50") == nil {
		t.Errorf("no flush probe figures: %+v", wl.Figures)
	}
	r := &result.Result{Schema: result.SchemaID, Tool: result.Tool{Name: "etcdbench", Version: result.Version, Args: []string{"test"}},
		StartedAt: time.Now(), Environment: env.Facts, Workloads: []result.Workload{wl}}
	r.Finish(time.Now())
	var b bytes.Buffer
	if err := report.JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	checkDoc(t, schema, b.Bytes())
}

// TestCapacityLimitsMatchSchema checks that every answer a sweep can give
// (what bends a disk's curve, the resource that limits an etcd) is one the
// schema allows.
func TestCapacityLimitsMatchSchema(t *testing.T) {
	schema := loadSchema(t)
	for _, bend := range []finding.Kind{finding.None, finding.RateCap, finding.Queueing, finding.Stalls, finding.Backlog,
		finding.CPU, finding.Disk, finding.Network, finding.Leader, finding.Client, finding.Unknown} {
		th := verdict.Defaults()
		w := result.Workload{
			Name: "etcd-capacity", Description: "d", Parameters: map[string]any{}, Stop: result.Stop{Mode: "sweep", Reason: "2 steps"},
			Latencies: []result.Latency{}, Series: []stats.SecondSample{}, Figures: []result.Figure{},
			Verdicts: []verdict.Verdict{verdict.JudgeCapacity(th.CapacityMin, th.CapacityHeavy, 100, true, 0, "rules")},
			Capacity: &result.Capacity{Rate: 100, Upper: 200, Unit: "puts/s", Criterion: "rules", Bend: bend, Evidence: "why", Decided: true,
				Steps: []result.CapacityStep{{Phase: "ladder", Rate: 200, Status: verdict.Fail, Failed: "wal_fsync_p99: slow",
					Extra: []result.Figure{{Name: "member0_cpu", Value: 0.5, Unit: "x", Description: "d"}}}}},
		}
		b := workloadJSON(t, w)
		t.Run(string(bend), func(t *testing.T) { checkDoc(t, schema, b) })
	}
}

// TestClusterMatchesSchema checks a diagnose-cluster workload with every
// field of its cluster report set, and one without it (results written
// before it existed load and validate as before).
func TestClusterMatchesSchema(t *testing.T) {
	schema := loadSchema(t)
	read := &result.ReadLatency{Count: 200, P50Ns: 1e6, P99Ns: 3e6, MaxNs: 4e6}
	c := &result.Cluster{Voters: 3, Answering: 2, Quorum: 2, TimeoutNs: 5e9,
		Members: []result.ClusterMember{
			{Name: "etcd0", Endpoint: "http://127.0.0.1:2379", Answered: true, ID: "a1", ClusterID: "c1", Version: "3.6.0", StorageVersion: "3.6.0",
				Leader: "a1", IsLeader: true, RaftTerm: 2, RaftIndex: 9, RaftApplied: 9, Lag: 0, Revision: 5, CompactRevision: -1,
				DBSize: 20480, DBInUse: 16384, Quota: 1 << 20, Alarms: []string{"NOSPACE"}, Members: []string{"etcd0=a1", "etcd1=b2(learner)"},
				HashKV: 7, HashRevision: 5, SerializableRead: read, LinearizableRead: read},
			{Name: "etcd1", Endpoint: "http://127.0.0.1:2381", Reason: "down: connection refused"},
		},
		Findings: []result.ClusterFinding{{Rank: 1, Rule: "member-unreachable", Kind: string(finding.Unreachable), Status: "FAIL",
			Member: "etcd1 (http://127.0.0.1:2381)", Endpoint: "http://127.0.0.1:2381", Value: 1, Unit: "count", Limit: 1, Evidence: "e", Advice: "a"}},
	}
	for name, cl := range map[string]*result.Cluster{"cluster": c, "before the cluster report": nil} {
		w := diagnoseWorkload("diagnose-cluster", "time")
		w.Cluster = cl
		t.Run(name, func(t *testing.T) {
			back := validRoundTrip(t, schema, w)
			if got := back.Cluster; (got == nil) != (cl == nil) || got != nil && got.Members[0].LinearizableRead.P99Ns != read.P99Ns {
				t.Errorf("read back: %+v", got)
			}
		})
	}
}

// diagnoseWorkload is a diagnose workload without figures of its own.
func diagnoseWorkload(name, stop string) result.Workload {
	return result.Workload{Name: name, Description: "d", Parameters: map[string]any{}, Stop: result.Stop{Mode: stop, Reason: "r"},
		Latencies: []result.Latency{}, Series: []stats.SecondSample{}, Verdicts: []verdict.Verdict{}}
}

// validRoundTrip checks w's JSON against the schema and returns it read
// back.
func validRoundTrip(t *testing.T, schema map[string]any, w result.Workload) result.Workload {
	t.Helper()
	b := workloadJSON(t, w)
	checkDoc(t, schema, b)
	back, err := result.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return back.Workloads[0]
}

// workloadJSON is the JSON of a finished result holding w alone.
func workloadJSON(t *testing.T, w result.Workload) []byte {
	t.Helper()
	r := &result.Result{Schema: result.SchemaID, Tool: result.Tool{Name: "etcdbench", Version: result.Version, Args: []string{"test"}},
		StartedAt: time.Now(), Workloads: []result.Workload{w}}
	r.Finish(time.Now())
	var b bytes.Buffer
	if err := report.JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDataMatchesSchema checks a diagnose-data workload with every field
// of its data report set, and one without it (results written before it
// existed load and validate as before).
func TestDataMatchesSchema(t *testing.T) {
	schema := loadSchema(t)
	d := &result.Data{Source: "endpoint", Path: "/var/tmp/.etcdbench-scratch-1/snapshot.db", Endpoint: "http://127.0.0.1:2379",
		Keys: 3, Revisions: 9, Tombstones: 1, AnalysisNs: 1e6,
		Resources: []result.DataResource{{Resource: "pods", Prefix: "/registry/pods/", Keys: 2, Bytes: 900, BytesAllRevisions: 2000, Revisions: 5},
			{Resource: "(other keys)", Prefix: "", Keys: 1, Bytes: 10, BytesAllRevisions: 10, Revisions: 1}},
		TopKeys:       []result.DataKey{{Key: "/registry/pods/a/b", Revisions: 4, Bytes: 450}},
		TopKeysBySize: []result.DataKey{{Key: "/registry/pods/a/b", Revisions: 4, Bytes: 450}},
		Leases:        result.DataLeases{Count: 1, KeysAttached: 1, TTLMinNs: 3600e9, TTLMedianNs: 3600e9, TTLMaxNs: 3600e9},
		DB: result.DataDB{FileBytes: 20480, SizeBytes: 20480, InUseBytes: 16384, FreeBytes: 4096, FreePages: 1, PageSize: 4096, Fill: 0.7,
			Revision: 9, CompactedRevision: 4, ConsistentIndex: 12, QuotaBytes: 2 << 30},
		Predicted: &result.DataPredicted{RestartSeconds: 1.5, RestartFrom: "r", DefragSeconds: 0.5, DefragFrom: "d",
			SnapshotSendSeconds: 0.2, SnapshotSendFrom: "s", WALBytes: 4096, WALEntries: 10},
	}
	for name, data := range map[string]*result.Data{"data": d, "before the data report": nil} {
		w := diagnoseWorkload("diagnose-data", "endpoint")
		w.Data = data
		t.Run(name, func(t *testing.T) {
			back := validRoundTrip(t, schema, w)
			if got := back.Data; (got == nil) != (data == nil) || got != nil && (got.DB.InUseBytes != d.DB.InUseBytes || got.Predicted.RestartSeconds != 1.5) {
				t.Errorf("read back: %+v", got)
			}
		})
	}
}

// TestDrillMatchesSchema checks the workload of a fault over two rounds,
// built by the drill's own code from puts around a fault.
func TestDrillMatchesSchema(t *testing.T) {
	schema := loadSchema(t)
	at := time.Unix(1000, 0)
	var outs []*drill.Outcome
	for round := range 2 {
		o := &drill.Outcome{Fault: drill.KillLeader, Leader: "member0", NewLeader: "member1", At: at, NewLeaderAfter: time.Second, Terms: 1, Restart: time.Second}
		for i := -100; i < 300; i++ {
			due := at.Add(time.Duration(i) * 10 * time.Millisecond)
			r := drill.Request{Due: due, Done: due.Add(3 * time.Millisecond)}
			if i >= 0 && i < 100+10*round {
				r.Done, r.Failed = due.Add(2*time.Second), true
			}
			o.Requests = append(o.Requests, r)
		}
		o.Outage = drill.FindOutage(o.Requests, at, drill.SlowPut)
		outs = append(outs, o)
	}
	s := drill.Setting{Rounds: 2}
	s.Load = etcdload.CheckPresetAt(150).Load()
	s.Before, s.FaultFor, s.After, s.Load.RequestTimeout = time.Second, 2*time.Second, time.Second, 2*time.Second
	w := drill.Fault(drill.KillLeader, outs, s)
	back := validRoundTrip(t, schema, w)
	d := back.Drill
	if d == nil || d.Rounds != 2 || len(d.Runs) != 2 || d.OutageSeconds < 1 || d.OutageSeconds > 1.2 || len(d.Timeline) == 0 || d.RestartSeconds != 1 {
		t.Errorf("read back: %+v", d)
	}
}
