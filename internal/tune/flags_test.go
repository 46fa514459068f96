package tune

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// parsed registers EmbeddedFlags on a flag set and parses args.
func parsed(t *testing.T, rows bool, args ...string) *EmbeddedFlags {
	t.Helper()
	f := &EmbeddedFlags{Rows: rows}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

// A list of round trips gives members apart by each, in its order, with
// the other settings on every one; a command without rows refuses it in
// one line; a bad entry is named.
func TestPeerRTTList(t *testing.T) {
	f := parsed(t, true, "--members", "3", "--peer-rtt", "0, 2ms,50ms", "--heartbeat-interval", "200")
	each, err := f.Apart()
	if err != nil || len(each) != 3 {
		t.Fatalf("Apart: %v, %v", each, err)
	}
	if err == nil {
		for i, want := range []time.Duration{0, 2 * time.Millisecond, 50 * time.Millisecond} {
			if each[i].PeerRTT != want || each[i].Members != 3 || each[i].HeartbeatInterval != 200*time.Millisecond {
				t.Errorf("row %d: %+v, want %v apart, 3 members, heartbeat 200ms", i, each[i], want)
			}
		}
	}
	// A jitter over one row's round trip is refused, as for one.
	if _, err := parsed(t, true, "--members", "3", "--peer-rtt", "0,2ms", "--peer-jitter", "1ms").Apart(); err == nil || !strings.Contains(err.Error(), "at most the round trip") {
		t.Errorf("jitter over a row's round trip: %v", err)
	}
	if o, err := f.Options(); err != nil || o.PeerRTT != 0 {
		t.Errorf("Options with rows: %+v, %v; want the first row", o, err)
	}
	if _, err := parsed(t, false, "--members", "3", "--peer-rtt", "2ms,50ms").Options(); err == nil || !strings.Contains(err.Error(), "a row each in capacity and etcd capacity") {
		t.Errorf("a list on a command without rows: %v", err)
	}
	if _, err := parsed(t, true, "--members", "3", "--peer-rtt", "2ms,far").Apart(); err == nil || !strings.Contains(err.Error(), `--peer-rtt "far"`) {
		t.Errorf("a bad entry: %v", err)
	}
	if each, err := parsed(t, true, "--members", "3").Apart(); each != nil || err != nil {
		t.Errorf("no --peer-rtt: %v, %v; want nothing apart", each, err)
	}
	var a ApartFlags
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	a.Register(fs)
	if err := fs.Parse([]string{"--members", "3"}); err != nil {
		t.Fatal(err)
	}
	if each, err := a.Each(); err != nil || len(each) != 1 || each[0].Members != 3 || each[0].PeerRTT != 0 {
		t.Errorf("capacity --members 3: %v, %v; want one row with no round trip", each, err)
	}
}

// mN=D puts member N that far from the others in every row; a bad one is
// named.
func TestPeerRTTFarMember(t *testing.T) {
	each, err := parsed(t, true, "--members", "3", "--peer-rtt", "0,2ms,m3=40ms").Apart()
	if err != nil || len(each) != 2 {
		t.Fatalf("Apart: %v, %v; want two rows", each, err)
	}
	for _, o := range each {
		if len(o.MemberRTT) != 3 || o.MemberRTT[2] != 40*time.Millisecond || o.MemberRTT[0] != 0 {
			t.Errorf("row %v apart: member round trips %v, want m3 40ms", o.PeerRTT, o.MemberRTT)
		}
	}
	if each, err := parsed(t, true, "--members", "3", "--peer-rtt", "m2=30ms").Apart(); err != nil || len(each) != 1 || each[0].PeerRTT != 0 || each[0].MemberRTT[1] != 30*time.Millisecond {
		t.Errorf("m2=30ms alone: %v, %v; want one row, the others not apart", each, err)
	}
	for _, bad := range []string{"m4=10ms", "x=10ms", "m1=far"} {
		if _, err := parsed(t, true, "--members", "3", "--peer-rtt", bad).Apart(); err == nil {
			t.Errorf("--peer-rtt %s: no error", bad)
		}
	}
	if _, err := parsed(t, true, "--peer-rtt", "m3=40ms").Apart(); err == nil || !strings.Contains(err.Error(), "give 3 members") {
		t.Errorf("m3=40ms with one member: %v", err)
	}
}

// --pre-vote=false turns pre-vote off; unset, etcd's default (on) holds.
func TestPreVoteFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		off  bool
	}{{nil, false}, {[]string{"--pre-vote"}, false}, {[]string{"--pre-vote=false"}, true}} {
		o, err := parsed(t, false, c.args...).Options()
		if err != nil || o.NoPreVote != c.off {
			t.Errorf("%v: NoPreVote %v, %v; want %v", c.args, o.NoPreVote, err, c.off)
		}
	}
}
