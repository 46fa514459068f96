// Package testutil holds what the tests of several packages share:
// comparing output with golden files (rewritten under -update), writing
// the seed corpora of fuzz targets, a self-signed CA with a server
// certificate and an exporter-toolkit web config (NewWebTLS), waiting on
// a condition with a deadline (WaitFor), and skipping a test whose
// prerequisite is missing, or failing it under CI=true (Missing). Its
// subpackage fusedelay is a FUSE filesystem with slow syncs; zoo is the
// storage zoo tests and benches share (block throttle caps, FUSE models,
// a latency tail, a burst bucket, a competing writer).
package testutil
