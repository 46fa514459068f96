package walfile

// The frame layer of etcd's WAL segment files (server/storage/wal doc.go,
// encoder.go, decoder.go): each record is an 8-byte little-endian length
// word followed by a walpb.Record protobuf, padded to 8 bytes so that the
// next length word is never torn. The lower 56 bits of the word are the
// record's length; when the top bit is set, bits 56-58 hold the padding.
// A zero word is the end of the records (the segment is preallocated with
// zeros). This reader is written apart from etcd's decoder on purpose: it
// is a pure function over bytes, it never gives up with an error, and it
// says how the records ended.

import (
	"encoding/binary"
	"fmt"
)

// frameHeader is the size of the length word in front of every record.
const frameHeader = 8

// sectorBytes is the sector size etcd's decoder assumes when it tells a
// torn write (a sector of zeros inside a record) from corruption.
const sectorBytes = 512

// Frame is one record's frame in a segment file.
type Frame struct {
	Offset   int64 // of the length word, from the start of the file
	RecBytes int64 // length of the walpb.Record protobuf
	PadBytes int64 // zero bytes after it up to the 8-byte boundary
}

// Size is the frame's bytes on disk: length word, record and padding.
func (f Frame) Size() int64 { return frameHeader + f.RecBytes + f.PadBytes }

// End says how the frames of a segment ended.
type End string

// How a segment's frames can end.
const (
	// EndEOF: the last frame ends exactly at the end of the data (a
	// segment that was cut, i.e. truncated and closed).
	EndEOF End = "eof"
	// EndZero: a zero length word, the preallocated tail of the segment
	// being written.
	EndZero End = "zero"
	// EndTorn: the data ends inside a frame or a frame holds a sector of
	// zeros: a write that did not complete (a crash, or a segment read while
	// etcd was writing it).
	EndTorn End = "torn"
	// EndCorrupt: a length word or record that cannot be right.
	EndCorrupt End = "corrupt"
)

// Tail is where and why the frames of a segment ended.
type Tail struct {
	End    End
	Offset int64  // where the first byte that is not part of a good frame starts
	Detail string // in words, for torn and corrupt ends
	// TrailingGarbage is set when non-zero bytes follow a zero length word
	// (after EndZero): the end of the records was found, but the rest
	// of the segment is not the clean preallocated tail.
	TrailingGarbage bool
}

// ScanFrames walks the frames of one segment file's contents, calling fn
// with each frame and its record bytes (without padding) until the frames
// end or fn rejects a record. It never fails: a damaged or torn tail ends
// the walk and is described in the returned Tail. A record fn rejects
// (it does not decode, or its CRC does not match) is a torn write when a
// sector-sized piece of it is all zeros, as etcd's decoder decides, and
// corruption otherwise.
func ScanFrames(b []byte, fn func(f Frame, rec []byte) error) Tail {
	var off int64
	n := int64(len(b))
	for {
		if off == n {
			return Tail{End: EndEOF, Offset: off}
		}
		if n-off < frameHeader {
			if allZero(b[off:]) {
				return Tail{End: EndZero, Offset: off}
			}
			return Tail{End: EndTorn, Offset: off, Detail: fmt.Sprintf("the data ends inside a length word (%d bytes left)", n-off)}
		}
		word := binary.LittleEndian.Uint64(b[off:])
		if word == 0 {
			return Tail{End: EndZero, Offset: off, TrailingGarbage: !allZero(b[off:])}
		}
		f, ok := decodeLength(word)
		f.Offset = off
		if !ok {
			return Tail{End: EndCorrupt, Offset: off, Detail: fmt.Sprintf("length word %#016x is not a valid record length", word)}
		}
		body := off + frameHeader
		if f.RecBytes+f.PadBytes > n-body {
			return Tail{End: EndTorn, Offset: off, Detail: fmt.Sprintf("a record of %d bytes does not fit in the %d bytes left", f.RecBytes, n-body)}
		}
		data := b[body : body+f.RecBytes+f.PadBytes]
		if err := fn(f, data[:f.RecBytes]); err != nil {
			if hasZeroChunk(data, body) {
				return Tail{End: EndTorn, Offset: off, Detail: fmt.Sprintf("the %d-byte record at offset %d has a sector of zeros (%v): a write that did not complete", f.RecBytes, off, err)}
			}
			return Tail{End: EndCorrupt, Offset: off, Detail: fmt.Sprintf("the %d-byte record at offset %d: %v", f.RecBytes, off, err)}
		}
		off += f.Size()
	}
}

// decodeLength splits a non-zero length word into record length and
// padding; ok is false for words etcd's encoder never writes.
func decodeLength(word uint64) (f Frame, ok bool) {
	const lenMask = 1<<56 - 1
	f.RecBytes = int64(word & lenMask)
	top := byte(word >> 56)
	switch {
	case top == 0:
		// no padding: the record length is a multiple of 8
		ok = f.RecBytes%8 == 0
	case top&0x80 != 0 && top&0x78 == 0:
		f.PadBytes = int64(top & 0x7)
		// the encoder sets the flag only for a non-zero padding that brings
		// the record to the next 8-byte boundary
		ok = f.PadBytes != 0 && (f.RecBytes+f.PadBytes)%8 == 0
	}
	// a protobuf Record is never empty: it has at least its type
	return f, ok && f.RecBytes > 0
}

// hasZeroChunk reports whether data (a record and its padding, starting
// at file offset off), split on sector boundaries, has a piece of zeros:
// the sign etcd's decoder (isTornEntry) takes for a torn write.
func hasZeroChunk(data []byte, off int64) bool {
	for cur := 0; cur < len(data); {
		l := int(sectorBytes - off%sectorBytes)
		if l > len(data)-cur {
			l = len(data) - cur
		}
		if allZero(data[cur : cur+l]) {
			return true
		}
		cur += l
		off += int64(l)
	}
	return false
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
