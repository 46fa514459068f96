// Package cmp holds what the bench/ comparisons of etcdbench with fio
// share: the flags every one takes (--dir, --rounds, --etcdbench, --fio,
// --json) and their exit codes, building etcdbench, running a tool as a
// child and reading its CPU time from rusage, a tracer's own CPU (its
// process and its BPF programs), laying out test files, the
// medians of per-round ratios and the targets they are held to, and the
// tables that print them.
//
// A comparison runs both tools several times in alternating order on the
// same directory and summarizes each metric as the median of the per-round
// ratios etcdbench/fio, which cancels slow drift of the disk better than a
// ratio of medians would. Comparisons that pair several runs per round
// (one etcdbench engine against two fio engines, say) describe them as
// Steps, Pairs and Metrics, and run as a Comparison. Every comparison's
// main function is Main.
package cmp
