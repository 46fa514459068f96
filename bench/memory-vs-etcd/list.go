package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// pageSize is the objects a paginated LIST asks for at a time, as
// kube-apiserver pages (and diagnose data's probe).
const pageSize = 500

// sampleEvery is how often the member's resident memory is read.
const sampleEvery = 10 * time.Millisecond

// rangeSummary is what this client keeps of a Range response: counts, not
// the objects. The member builds, marshals and sends the whole response
// as to any client; this one walks the bytes gRPC received and drops
// them, so that it holds one response's bytes at most per LIST.
type rangeSummary struct {
	kvs, bytes int64 // objects, and their keys' and values' bytes
	more       bool
	lastKey    []byte
}

// countCodec is a gRPC codec that marshals requests as gRPC's proto
// codec does and reads a RangeResponse into a rangeSummary.
type countCodec struct{}

func (countCodec) Name() string { return "proto" }

func (countCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("countCodec: cannot marshal %T", v)
	}
	b, err := proto.Marshal(m)
	return mem.BufferSlice{mem.SliceBuffer(b)}, err
}

func (countCodec) Unmarshal(data mem.BufferSlice, v any) error {
	s, ok := v.(*rangeSummary)
	if !ok {
		return fmt.Errorf("countCodec: cannot unmarshal into %T", v)
	}
	r := data.Reader()
	defer r.Close()
	return s.read(r, int64(r.Remaining()))
}

// byteReader is what read needs of gRPC's mem.Reader.
type byteReader interface {
	io.ByteReader
	io.Reader
	Discard(n int) (int, error)
}

// read walks a RangeResponse of n bytes (etcdserverpb: 2 kvs, 3 more;
// each mvccpb.KeyValue: 1 key, 5 value) and counts its objects.
func (s *rangeSummary) read(r byteReader, n int64) error {
	for n > 0 {
		num, typ, l, err := readTag(r)
		if err != nil {
			return err
		}
		n -= l
		switch {
		case num == 2 && typ == protowire.BytesType:
			size, l, err := readVarint(r)
			if err != nil {
				return err
			}
			n -= l + int64(size)
			if err := s.readKV(r, int64(size)); err != nil {
				return err
			}
		case num == 3 && typ == protowire.VarintType:
			v, l, err := readVarint(r)
			if err != nil {
				return err
			}
			n -= l
			s.more = v != 0
		default:
			l, err := skip(r, typ)
			if err != nil {
				return err
			}
			n -= l
		}
	}
	return nil
}

// readKV reads one KeyValue of n bytes: its key kept, its value counted.
func (s *rangeSummary) readKV(r byteReader, n int64) error {
	s.kvs++
	for n > 0 {
		num, typ, l, err := readTag(r)
		if err != nil {
			return err
		}
		n -= l
		if typ != protowire.BytesType || (num != 1 && num != 5) {
			l, err := skip(r, typ)
			if err != nil {
				return err
			}
			n -= l
			continue
		}
		size, l, err := readVarint(r)
		if err != nil {
			return err
		}
		n -= l + int64(size)
		s.bytes += int64(size)
		if num == 1 {
			s.lastKey = make([]byte, size)
			if _, err := io.ReadFull(r, s.lastKey); err != nil {
				return err
			}
		} else if _, err := r.Discard(int(size)); err != nil {
			return err
		}
	}
	return nil
}

func readVarint(r io.ByteReader) (v uint64, n int64, err error) {
	for shift := uint(0); shift < 64; shift += 7 {
		b, err := r.ReadByte()
		if err != nil {
			return 0, n, err
		}
		n++
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, n, nil
		}
	}
	return 0, n, errors.New("countCodec: varint overflows")
}

func readTag(r io.ByteReader) (protowire.Number, protowire.Type, int64, error) {
	v, n, err := readVarint(r)
	if err != nil {
		return 0, 0, n, err
	}
	num, typ := protowire.DecodeTag(v)
	return num, typ, n, nil
}

// skip skips a field's value of wire type typ and returns its length.
func skip(r byteReader, typ protowire.Type) (int64, error) {
	switch typ {
	case protowire.VarintType:
		_, n, err := readVarint(r)
		return n, err
	case protowire.Fixed32Type:
		_, err := r.Discard(4)
		return 4, err
	case protowire.Fixed64Type:
		_, err := r.Discard(8)
		return 8, err
	case protowire.BytesType:
		size, n, err := readVarint(r)
		if err != nil {
			return n, err
		}
		_, err = r.Discard(int(size))
		return n + int64(size), err
	}
	return 0, fmt.Errorf("countCodec: wire type %d", typ)
}

// lister sends LISTs (linearizable ranges, as kube-apiserver's and
// diagnose data's probe's) of one prefix to a member: through the
// counting codec, or (full) through clientv3's Get, which unmarshals
// every response as diagnose data's probe does.
type lister struct {
	conn   *grpc.ClientConn
	cli    *clientv3.Client // the full client; nil: the counting codec
	prefix string
}

// Clients of the LISTs (--client).
const (
	clientCount = "count"
	clientFull  = "clientv3"
)

func newLister(clientURL, prefix, client string) (*lister, error) {
	if client == clientFull {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{clientURL}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			return nil, err
		}
		return &lister{cli: cli, prefix: prefix}, nil
	}
	conn, err := grpc.NewClient(strings.TrimPrefix(clientURL, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32), grpc.ForceCodecV2(countCodec{})))
	if err != nil {
		return nil, err
	}
	return &lister{conn: conn, prefix: prefix}, nil
}

func (l *lister) close() {
	if l.cli != nil {
		l.cli.Close()
		return
	}
	l.conn.Close()
}

// get is one range from key to end (limit 0: all).
func (l *lister) get(ctx context.Context, key, end []byte, limit int64) (rangeSummary, error) {
	var s rangeSummary
	if l.cli == nil {
		err := l.conn.Invoke(ctx, "/etcdserverpb.KV/Range", &pb.RangeRequest{Key: key, RangeEnd: end, Limit: limit}, &s)
		return s, err
	}
	r, err := l.cli.Get(ctx, string(key), clientv3.WithRange(string(end)), clientv3.WithLimit(limit))
	if err != nil {
		return s, err
	}
	for _, kv := range r.Kvs {
		s.kvs, s.bytes, s.lastKey = s.kvs+1, s.bytes+int64(len(kv.Key)+len(kv.Value)), kv.Key
	}
	s.more = r.More
	return s, nil
}

// list reads every object under the prefix, in one range or in pages of
// pageSize, and returns the objects and their keys' and values' bytes.
func (l *lister) list(ctx context.Context, paged bool) (kvs, bytes int64, err error) {
	end := []byte(clientv3.GetPrefixRangeEnd(l.prefix))
	key := []byte(l.prefix)
	var limit int64
	if paged {
		limit = pageSize
	}
	for {
		s, err := l.get(ctx, key, end, limit)
		if err != nil {
			return kvs, bytes, fmt.Errorf("LIST of %s: %w", l.prefix, err)
		}
		kvs, bytes = kvs+s.kvs, bytes+s.bytes
		if !paged || !s.more || s.kvs == 0 {
			return kvs, bytes, nil
		}
		key = append(append([]byte(nil), s.lastKey...), 0)
	}
}

// listResult is k LISTs at once: what each returned and how long all took.
type listResult struct {
	Objects, Bytes int64 // of one LIST
	Wall           time.Duration
	Errs           []string // LISTs that failed (the member was killed, say)
}

// listAt sends k LISTs at once and waits for all; a failed LIST is
// recorded, not returned: a member killed under them is what the OOM
// check looks for.
func (l *lister) listAt(ctx context.Context, k int, paged bool) listResult {
	var res listResult
	var mu sync.Mutex
	var g errgroup.Group
	t0 := time.Now()
	for range k {
		g.Go(func() error {
			kvs, n, err := l.list(ctx, paged)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.Errs = append(res.Errs, err.Error())
			} else {
				res.Objects, res.Bytes = kvs, n
			}
			return nil
		})
	}
	_ = g.Wait()
	res.Wall = time.Since(t0)
	return res
}

// status is the memory lines of a /proc/PID/status, in bytes.
type status struct{ RSS, Anon, File int64 }

func readStatus(pid int) (status, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return status{}, err
	}
	return parseStatus(b)
}

// parseStatus reads VmRSS, RssAnon and RssFile of a /proc/PID/status.
func parseStatus(b []byte) (status, error) {
	var s status
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		var into *int64
		switch f[0] {
		case "VmRSS:":
			into, found = &s.RSS, true
		case "RssAnon:":
			into = &s.Anon
		case "RssFile:":
			into = &s.File
		default:
			continue
		}
		var kb int64
		if _, err := fmt.Sscanf(f[1], "%d", &kb); err != nil {
			return s, fmt.Errorf("%s %q: %w", f[0], f[1], err)
		}
		*into = kb << 10
	}
	if !found {
		return s, errors.New("no VmRSS in the status file")
	}
	return s, nil
}

// sampler reads a process's memory every sampleEvery and keeps the peak
// of its VmRSS (with its anonymous and file parts then) and of its
// anonymous memory, and, with a cgroup, the cgroup's charged memory.
type sampler struct {
	stop, done chan struct{}
	mu         sync.Mutex
	peak       status // at the VmRSS peak
	peakAnon   int64
	peakCgroup int64
	samples    int
}

func sample(pid int, cg *memCgroup) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			st, err := readStatus(pid)
			var used int64
			if cg != nil {
				used, _ = cg.usage()
			}
			s.mu.Lock()
			if err == nil {
				s.samples++
				if st.RSS > s.peak.RSS {
					s.peak = st
				}
				s.peakAnon = max(s.peakAnon, st.Anon)
			}
			s.peakCgroup = max(s.peakCgroup, used)
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// end takes a last sample after the responses and stops the sampler.
func (s *sampler) end() {
	time.Sleep(2 * sampleEvery)
	close(s.stop)
	<-s.done
}
