package walfile

import (
	"errors"
	"fmt"
	"hash/crc32"

	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// WAL record types, as etcd's wal package numbers them (wal.go).
const (
	MetadataType int64 = iota + 1
	EntryType
	StateType
	CRCType
	SnapshotType
)

// crcTable is the CRC-32C table etcd chains over every record's data.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Record is one decoded record with the sizes that matter for the write
// pattern; the payload itself is not kept.
type Record struct {
	Frame     Frame
	Type      int64
	DataBytes int // bytes of the record's data field (the entry, hard state...)
	// EntryDataBytes is the size of an entry's own payload (the serialized
	// request), for EntryType.
	EntryDataBytes int
	// Term and Vote of a StateType record (a raft HardState), which
	// decide whether etcd had to sync after it.
	Term, Vote uint64
}

// errCRC marks a record whose CRC does not continue the chain.
var errCRC = errors.New("CRC mismatch")

// DecodeSegment decodes the records of one segment file's contents,
// calling fn for each good record in order, and returns how the records
// ended. It checks the CRC chain as etcd does: a CRC record carries the
// chain's value so far (the previous segment's), every other record the
// CRC-32C of all data before and including its own.
func DecodeSegment(b []byte, fn func(Record)) Tail {
	var chain uint32
	var rec walpb.Record
	return ScanFrames(b, func(f Frame, raw []byte) error {
		rec.Reset()
		if err := proto.Unmarshal(raw, &rec); err != nil {
			return fmt.Errorf("not a WAL record: %v", err)
		}
		r := Record{Frame: f, Type: rec.GetType(), DataBytes: len(rec.GetData())}
		if r.Type == CRCType {
			if chain != 0 && rec.GetCrc() != chain {
				return fmt.Errorf("%w: the CRC record says %08x, the chain is at %08x", errCRC, rec.GetCrc(), chain)
			}
			chain = rec.GetCrc()
		} else {
			chain = crc32.Update(chain, crcTable, rec.GetData())
			if rec.GetCrc() != chain {
				return fmt.Errorf("%w: the record says %08x, its data gives %08x", errCRC, rec.GetCrc(), chain)
			}
		}
		switch r.Type {
		case EntryType:
			var e raftpb.Entry
			if err := proto.Unmarshal(rec.GetData(), &e); err != nil {
				return fmt.Errorf("an entry record that is not a raft entry: %v", err)
			}
			r.EntryDataBytes = len(e.GetData())
		case StateType:
			var s raftpb.HardState
			if err := proto.Unmarshal(rec.GetData(), &s); err != nil {
				return fmt.Errorf("a state record that is not a raft hard state: %v", err)
			}
			r.Term, r.Vote = s.GetTerm(), s.GetVote()
		case MetadataType, CRCType, SnapshotType:
		default:
			return fmt.Errorf("unknown record type %d", r.Type)
		}
		fn(r)
		return nil
	})
}
