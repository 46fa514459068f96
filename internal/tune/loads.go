package tune

import (
	"time"

	"etcdbench/internal/etcdload"
)

// Load is the load of tune's runs before the flags: etcd's benchmark
// defaults for op, shorter, but with enough concurrency that etcd batches
// its WAL writes as it does under real load.
func Load(op etcdload.Op) etcdload.Load {
	l := etcdload.DefaultLoad(op)
	l.Clients, l.Total, l.Duration = 16, 20000, 10*time.Second
	return l
}

// Kinds are the loads tune can send: watch is left out, its figures are
// event latencies that the table does not compare.
func Kinds() []etcdload.Kind {
	var ks []etcdload.Kind
	for _, k := range etcdload.Kinds() {
		if k.Op != etcdload.OpWatch {
			ks = append(ks, k)
		}
	}
	return ks
}
