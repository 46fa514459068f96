// Package walfile reads etcd's write-ahead log from its segment files,
// offline and read-only, to learn the write pattern etcd puts on a disk:
// the sizes of its records and how many bytes it writes between two
// fdatasyncs, from which it recommends the --bs of 'etcdbench disk wal'.
//
// # The on-disk format
//
// This is etcd's own format (go.etcd.io/etcd/server/v3/storage/wal, whose
// doc.go, encoder.go and decoder.go describe it); this package writes it
// down again because it reads the bytes itself rather than through etcd's
// decoder (see below).
//
// A WAL is a directory (member/wal under etcd's --data-dir, or --wal-dir)
// of segment files named %016x-%016x.wal: a sequence number and the raft
// index of the first entry the segment may hold, so that the names sort in
// order. The first is 0000000000000000-0000000000000000.wal. etcd
// preallocates each segment to 64 MB (SegmentSizeBytes) and cuts to the
// next when the one being written grows past that: it syncs and truncates
// the full one, then renames the next, already preallocated as N.tmp by a
// background file pipeline, into place. So every segment but the last ends
// at its last record, and the last ends in zeros.
//
// A segment is a stream of frames. Each frame is an 8-byte little-endian
// length word followed by a walpb.Record protobuf and zero padding up to
// the next 8-byte boundary, so that a length word is never torn. The
// word's lower 56 bits are the record's length; when its top bit is set,
// the low 3 bits of its top byte are the number of padding bytes (1 to 7). A zero length word ends the records:
// it is the preallocated tail.
//
// A record has a type, a CRC and data. The types are metadata (1, the
// member and cluster ids), entry (2, a raft entry whose data is the
// serialized request), state (3, a raft HardState: term, vote, commit),
// crc (4, the chain's value where the previous segment ended) and snapshot
// (5, the index and term of a raft snapshot). Every segment starts with a
// crc record and a metadata record, then a snapshot record (the first
// segment) or the current state (a segment after a cut). The CRCs form one chain over the whole WAL: each
// record's is the CRC-32C (Castagnoli) of the data of every record before
// it and its own, continuing across segments through the crc records.
//
// etcd's WAL.Save appends a Save's entries and then its hard state to a
// page buffer, and flushes it and calls fdatasync when raft says it must:
// there were entries, or the term or the vote changed. Profile
// infers those write+fdatasync batches from the records.
//
// A crash can leave the last segment with a torn write: a record cut
// short, or a sector of it still zeros from the preallocation. etcd's
// decoder tells a torn tail (a sector-sized piece of zeros inside a
// record) from corruption and truncates the former when it repairs the
// WAL. This reader makes the same call but never fails: ScanFrames and
// DecodeSegment return how and where the good records ended (Tail: at the
// end of the data, at the zero tail, torn or corrupt), and a damaged tail
// becomes a note of the report rather than an error.
//
// # Files
//
// frame.go reads frames, record.go decodes records and checks the CRC
// chain, profile.go builds the write-pattern Profile and its exact size
// distributions (Sizes), dir.go finds the WAL directory and reads its
// segments, report.go renders the profile and the recommended --bs through
// the result model.
package walfile
