// Command goalloc is the zoo's Go neighbour (zoo.GoAlloc): a process
// that allocates and collects as kube-apiserver does beside etcd on a
// control-plane node. It keeps a live heap of pointer-bearing objects
// (kube-apiserver's watch cache and decoded objects) and allocates
// short-lived objects of a few KiB at a steady rate from one goroutine
// per CPU (its requests' garbage), one in -keep-every of them replacing
// a live one, so that its garbage collector marks the whole live heap
// over and over, on every CPU (its dedicated mark workers and the
// allocating goroutines' assists).
//
// It prints "ready HEAP_BYTES" once the live heap is built, then once a
// second "stats GC_CYCLES GC_CPU_SECONDS TOTAL_CPU_SECONDS HEAP_BYTES
// ALLOCATED_BYTES" (runtime/metrics), and exits when its stdin is closed
// or at SIGTERM. Its memory is bounded: the live heap, plus what the
// collector lets grow between two cycles (GOGC), plus one tick's
// allocations per goroutine.
//
// zoo builds it from its own source (embedded) into a temporary
// directory; by hand: go build ./internal/testutil/zoo/goalloc.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// chunk is the unit objects are made of, 64 bytes with a pointer: a live
// heap of 128 MiB holds two million of them for the collector to mark, as
// kube-apiserver's heap of small structs, strings and maps does.
type chunk struct {
	next *chunk
	data [56]byte
}

// object is one allocation: size bytes in chunks, reached through a
// slice of pointers, as a decoded object's fields are.
type object struct {
	chunks []*chunk
}

func newObject(size int, r *rand.Rand) *object {
	o := &object{chunks: make([]*chunk, max(1, size/int(unsafe.Sizeof(chunk{}))))}
	var prev *chunk
	for i := range o.chunks {
		c := &chunk{next: prev}
		c.data[0], c.data[len(c.data)-1] = byte(r.Uint32()), byte(i)
		o.chunks[i], prev = c, c
	}
	return o
}

// spec is what the flags ask for.
type spec struct {
	live, rate       int64 // bytes; bytes a second
	minObj, maxObj   int   // bytes
	keepEvery, procs int
}

// tick is how often each goroutine allocates its share of the rate.
const tick = 10 * time.Millisecond

func main() {
	var s spec
	var liveMiB, rateMiB, minKiB, maxKiB int
	flag.IntVar(&liveMiB, "live-mib", 128, "live heap kept, MiB")
	flag.IntVar(&rateMiB, "alloc-mib-per-sec", 320, "short-lived objects allocated, MiB a second (all goroutines together)")
	flag.IntVar(&minKiB, "min-kib", 1, "smallest short-lived object, KiB")
	flag.IntVar(&maxKiB, "max-kib", 8, "largest short-lived object, KiB")
	flag.IntVar(&s.keepEvery, "keep-every", 16, "one in this many short-lived objects replaces a live one")
	flag.Parse()
	s.live, s.rate, s.minObj, s.maxObj = int64(liveMiB)<<20, int64(rateMiB)<<20, minKiB<<10, maxKiB<<10
	s.procs = runtime.GOMAXPROCS(0)
	if s.live <= 0 || s.rate <= 0 || s.minObj <= 0 || s.maxObj < s.minObj || s.keepEvery < 1 {
		fmt.Fprintln(os.Stderr, "goalloc: -live-mib, -alloc-mib-per-sec, -min-kib and -keep-every must be positive, -max-kib at least -min-kib")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	// The parent closes stdin to stop it, and a parent that died closes
	// it too: nothing is left behind.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	if err := run(ctx, s, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "goalloc:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, s spec, out io.Writer) error {
	w := bufio.NewWriter(out)
	shards := make([][]*object, s.procs)
	mean := (s.minObj + s.maxObj) / 2
	per := int(s.live / int64(mean) / int64(s.procs))
	for i := range shards {
		r := rand.New(rand.NewPCG(uint64(i), 1))
		shards[i] = make([]*object, max(1, per))
		for j := range shards[i] {
			shards[i][j] = newObject(s.minObj+r.IntN(s.maxObj-s.minObj+1), r)
		}
	}
	runtime.GC()
	fmt.Fprintf(w, "ready %d\n", sample().heap)
	if err := w.Flush(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for i := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			allocate(ctx, s, shards[i], uint64(i))
		}()
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case <-t.C:
		}
		m := sample()
		fmt.Fprintf(w, "stats %d %.3f %.3f %d %d\n", m.cycles, m.gcCPU, m.totalCPU, m.heap, m.allocated)
		if err := w.Flush(); err != nil {
			return err // the parent is gone: main exits, the goroutines with it
		}
	}
}

// sink keeps each goroutine's latest short-lived object reachable until
// the next, so that the compiler cannot keep it off the heap.
var sink [256]*object

// allocate makes s.rate/s.procs bytes of short-lived objects a second,
// paced each tick; ticks it falls behind on (no CPU) are dropped, as a
// server sheds what it cannot serve, so that it never runs ahead.
func allocate(ctx context.Context, s spec, live []*object, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 2))
	perTick := s.rate / int64(s.procs) / int64(time.Second/tick)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for done := int64(0); done < perTick; {
			size := s.minObj + r.IntN(s.maxObj-s.minObj+1)
			o := newObject(size, r)
			if r.IntN(s.keepEvery) == 0 {
				live[r.IntN(len(live))] = o
			} else {
				sink[seed%uint64(len(sink))] = o
			}
			done += int64(size)
		}
	}
}

// stats are the figures printed each second.
type stats struct {
	cycles          uint64
	gcCPU, totalCPU float64
	heap, allocated uint64
}

func sample() stats {
	s := []metrics.Sample{
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/cpu/classes/total:cpu-seconds"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/allocs:bytes"},
	}
	metrics.Read(s)
	u := func(i int) uint64 {
		if s[i].Value.Kind() == metrics.KindUint64 {
			return s[i].Value.Uint64()
		}
		return 0
	}
	f := func(i int) float64 {
		if s[i].Value.Kind() == metrics.KindFloat64 {
			return s[i].Value.Float64()
		}
		return 0
	}
	return stats{cycles: u(0), gcCPU: f(1), totalCPU: f(2), heap: u(3), allocated: u(4)}
}
