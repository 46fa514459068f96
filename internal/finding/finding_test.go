package finding

import "testing"

func TestKinds(t *testing.T) {
	seen := map[Kind]bool{}
	for _, i := range Kinds {
		if i.Kind == "" || i.Name == "" || seen[i.Kind] || !i.Kind.Known() {
			t.Errorf("kind %+v: want a unique, known kind with a name", i)
		}
		seen[i.Kind] = true
	}
	if k := Kind("new"); k.Known() || k.Info().Name != "new" || k.Info().Rank != 100 {
		t.Errorf("an unknown kind: %+v", k.Info())
	}
	if Disk.Info().Name != "slow disk" || Disk.Info().Advice == "" {
		t.Errorf("disk: %+v", Disk.Info())
	}
}

func TestFacts(t *testing.T) {
	f := Finding{Kind: CPU, Facts: []Fact{{Name: "host_cpu_busy", Value: 0.97, Unit: "ratio", Limit: 0.9}}}
	g := f.With("rate", 200, "puts/s", 0)
	if len(f.Facts) != 1 || len(g.Facts) != 2 {
		t.Fatalf("With changed the original (%d facts) or did not add (%d)", len(f.Facts), len(g.Facts))
	}
	if x, ok := g.Fact("host_cpu_busy"); !ok || x.Value != 0.97 || x.Limit != 0.9 {
		t.Errorf("fact %+v %v", x, ok)
	}
	if _, ok := g.Fact("missing"); ok {
		t.Error("a fact that is not there")
	}
}
