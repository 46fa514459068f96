package sweep

import (
	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

// CheckPerfMarks are etcdctl check perf's loads (verdict.CheckPerfLoads),
// the reference loads every capacity (the disk's model's and etcd's) is
// compared with.
var CheckPerfMarks = checkPerfMarks(verdict.CheckPerfLoads)

func checkPerfMarks(loads []verdict.CheckPerfLoad) []result.CapacityMark {
	var ms []result.CapacityMark
	for _, l := range loads {
		ms = append(ms, result.CapacityMark{Name: l.Name, Rate: l.Rate, Source: l.Mark()})
	}
	return ms
}

// ClusterSizes are the cluster sizes of etcd's hardware guide, by the
// requests per second each serves at most (xLarge serves more than
// large's 10,000). The guide counts every request; a capacity in writes
// is compared with them as if every request were a write, which is the
// heavier case for the disk.
var ClusterSizes = []result.CapacityMark{
	{Name: "small", Rate: 200, Source: "etcd's hardware guide: a small cluster serves fewer than 200 requests/s (e.g. a 50-node Kubernetes cluster)"},
	{Name: "medium", Rate: 1000, Source: "etcd's hardware guide: a medium cluster serves fewer than 1,000 requests/s (e.g. a 250-node Kubernetes cluster)"},
	{Name: "large", Rate: 10000, Source: "etcd's hardware guide: a large cluster serves fewer than 10,000 requests/s (e.g. a 1,000-node Kubernetes cluster); an xLarge one more"},
}
