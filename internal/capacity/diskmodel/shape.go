package diskmodel

import "etcdbench/internal/verdict"

// PutShape is the shape of the puts a capacity sweep models: etcdctl
// check perf's are new 256-byte keys with 1024-byte values.
type PutShape struct {
	KeyBytes, ValueBytes int
}

// CheckPerfShape is etcdctl check perf's put (every load, s to xl).
var CheckPerfShape = PutShape{KeyBytes: 256, ValueBytes: 1024}

// walEntryOverhead is what etcd's WAL adds to a put's key and value: the
// raft entry (term, index, type), the InternalRaftRequest around the
// PutRequest, the WAL record (type, CRC) and its length frame, padded to
// 8 bytes, and its share of the HardState record each Save adds.
// Measured (bench/device-cost): etcd_disk_wal_write_bytes_total per put
// of 256-byte keys and 1024-byte values was 1,341-1,371 bytes on etcd
// 3.7 (1,371 at one entry per Save, 1,341 at nine), so about 64 per entry
// and 27 per Save; the sweep writes one size per entry, the mean.
const walEntryOverhead = 80

// WALEntryBytes is the bytes a put of s takes in etcd's WAL.
func (s PutShape) WALEntryBytes() int { return s.KeyBytes + s.ValueBytes + walEntryOverhead }

// withEntryBytes is the shape whose puts take n bytes in the WAL: the
// value shrinks or grows, the key only when the value cannot shrink more.
func (s PutShape) withEntryBytes(n int) PutShape {
	if v := n - s.KeyBytes - walEntryOverhead; v >= 0 {
		s.ValueBytes = v
		return s
	}
	s.KeyBytes, s.ValueBytes = max(n-walEntryOverhead, 8), 0
	return s
}

// CheckPerfClients is the number of clients of the smallest check perf
// load that asks for at least rate puts/s (the largest's above xl), as
// `etcd capacity` drives each step (verdict.CheckPerfLoadAt): each has one
// put in flight, so etcd never has more proposals waiting for its WAL
// than that.
func CheckPerfClients(rate float64) int { return verdict.CheckPerfLoadAt(rate).Clients }
