package etcdload

import (
	"strings"
	"testing"
)

func TestParamsOfAndSetFrom(t *testing.T) {
	kinds := []Kind{KindOf(OpRange), KindOf(OpMixed)}
	usage := map[string]string{}
	for _, p := range ParamsOf(kinds) {
		if _, dup := usage[p.Name]; dup {
			t.Errorf("%s listed twice", p.Name)
		}
		usage[p.Name] = p.Usage
	}
	if !strings.HasPrefix(usage["consistency"], "range and mixed: ") || !strings.HasPrefix(usage["read-ratio"], "mixed: ") {
		t.Errorf("usages %q, %q: want the kinds that take them first", usage["consistency"], usage["read-ratio"])
	}
	if strings.Contains(usage["clients"], ":") && strings.HasPrefix(usage["clients"], "range") {
		t.Errorf("common setting clients named kinds: %q", usage["clients"])
	}

	src := DefaultLoad(OpMixed)
	src.Clients, src.ReadRatio = 7, 0.25
	dst := DefaultLoad(OpMixed)
	if err := dst.SetFrom(&src, []string{"clients", "read-ratio"}); err != nil {
		t.Fatal(err)
	}
	if dst.Clients != 7 || dst.ReadRatio != 0.25 {
		t.Errorf("set clients %d, read-ratio %v; want 7, 0.25", dst.Clients, dst.ReadRatio)
	}
	put := DefaultLoad(OpPut)
	if err := put.SetFrom(&src, []string{"read-ratio"}); err == nil || !strings.Contains(err.Error(), "--read-ratio does not apply to --workload put") {
		t.Errorf("put given --read-ratio: %v", err)
	}
}
