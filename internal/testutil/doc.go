// Package testutil holds what the tests of several packages share: writing
// the seed corpora of fuzz targets (fusedelay, a FUSE filesystem with slow
// syncs, is its subpackage).
package testutil
