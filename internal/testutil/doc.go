// Package testutil holds what the tests of several packages share:
// comparing output with golden files (rewritten under -update), writing
// the seed corpora of fuzz targets, and a self-signed CA with a server
// certificate and an exporter-toolkit web config (NewWebTLS). Its
// subpackage fusedelay is a FUSE filesystem with slow syncs.
package testutil
