// Package layers has no code: its test keeps etcdbench's package graph
// flowing one way, from the command line down to the facts, as
// docs/architecture.md draws it. A package may import only packages of a
// lower layer.
package layers
