// Package search is how a bench finds the truth it holds etcdbench to: the
// highest put rate a real etcd passes within etcd's limits. It holds the
// rates a search tries (a geometric ladder, a bisection to a resolution,
// the vote on an answer that passed at its limit, as etcdbench's own
// sweeps do: internal/capacity/sweep), the limits a step is judged by,
// and the histogram figures of a step read from a member's /metrics.
//
// bench/capacity-vs-etcd and bench/cluster-vs-etcd search the same way, so
// that their truths differ in what they measure, not in how they pick
// the rates.
package search
