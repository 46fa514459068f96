// Package cluster is `etcdbench diagnose --endpoints`: one read-only
// report of a live cluster's health. Each endpoint gets a client of its
// own, so a frozen member stalls nobody else, and every call to it has
// the same deadline; the members are asked concurrently for their
// status, member list, alarms, a few hundred small reads of each
// consistency and the hash of their key space at a common revision,
// while their /metrics are scraped twice a window apart for
// internal/diagnose's rules. Rules of its own (as data, Rules) judge what
// the members say together - who answers, whether they agree, alarms,
// lag, slow reads - and the findings of both are ranked as one list, each
// naming the member by name and endpoint.
package cluster
