// Package tune measures what an etcd setting is worth: it runs the same
// load against a fresh embedded etcd under every combination of the
// settings given with `--vary NAME=v1,v2,...`, each combination several
// times in alternating order, and tells which differences between the
// combinations are larger than the spread over the rounds.
//
// The package has four jobs, one file each:
//
//   - settings.go: the settings --vary knows, as data (name, how a value is
//     parsed, the Options or Load field it sets, the limit etcd puts on it
//     and where etcd says so);
//   - rules.go and matrix.go: etcd's rules that span settings (election
//     timeout at least 5 x the heartbeat interval), the cartesian product of
//     the values and the alternating order of the runs;
//   - noise.go and summary.go: median and spread over rounds per
//     combination, and the non-overlap rule for "larger than the noise";
//   - tune.go, text.go and save.go: running the plan through a caller's
//     RunFunc (the command line's embedded-etcd run), the text table, and
//     one saved result per run.
//
// docs/tune.md explains the alternation, the noise rule and etcd's rules
// with their sources.
package tune
