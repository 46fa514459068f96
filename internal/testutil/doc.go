// Package testutil holds what the tests of several packages share:
// comparing output with golden files (rewritten under -update) and
// writing the seed corpora of fuzz targets. Its subpackage fusedelay is a
// FUSE filesystem with slow syncs.
package testutil
