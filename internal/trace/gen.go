package trace

// The BPF object is generated from bpf/trace.c and committed, so that go
// build needs no clang. To regenerate (Debian: apt-get install clang llvm
// libbpf-dev):
//
//	go generate ./internal/trace
//
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang -target bpfel -type event bpf bpf/trace.c -- -O2 -g -Wall -I/usr/include/x86_64-linux-gnu
