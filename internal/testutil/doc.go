// Package testutil holds what the tests of several packages share:
// comparing output with golden files (rewritten under -update) and
// writing the seed corpora of fuzz targets. Its subpackage fusedelay is a
// FUSE filesystem with slow syncs; zoo is the storage zoo tests and
// benches share (block throttle caps, FUSE models, a latency tail, a
// burst bucket, a competing writer).
package testutil
