// Package testutil holds what the tests of several packages share:
// comparing output with golden files (rewritten under -update), writing
// the seed corpora of fuzz targets and waiting on a condition with a
// deadline (WaitFor). Its subpackage fusedelay is a FUSE filesystem with
// slow syncs.
package testutil
