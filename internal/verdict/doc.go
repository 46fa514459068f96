// Package verdict turns measured figures into PASS, WARN or FAIL judgements
// against thresholds that are data: each one carries its value, its unit and
// the source it comes from, and can be overridden from the command line
// (thresholds disagree in the wild, e.g. 10 ms vs 20 ms for the WAL p99).
package verdict
