// Package stats holds the statistics behind every etcdbench verdict:
// latency histograms with bounded relative error, exact (Clopper-Pearson)
// binomial bounds, distribution-free confidence intervals for percentiles,
// a batch-means correction for autocorrelated samples, and the sequential
// stop rule that ends a run as soon as its verdict is decided.
//
// Nothing here does I/O or keeps global state; workloads feed it numbers.
package stats
