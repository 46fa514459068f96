package layers

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// layerOf ranks every etcdbench package; an import must go to a lower
// rank. Higher layers use lower ones: the command line, then check (which
// answers "how much" through capacity), then the engines that run a
// command (tune, capacity over etcdrun; diagnose),
// then a run's phases (session), then the workloads and tools they drive,
// then the run lifecycle and the formats, then the model, then the facts
// and numbers everything shares.
var layerOf = map[string]int{
	"cmd/etcdbench": 11,

	"check": 10, "drill": 10,

	"tune": 9, "capacity": 9,

	"capacity/etcdside": 8, "diagnose/cluster": 8, "diagnose/data": 8,

	"etcdrun": 7, "diagnose": 7, "exporter": 7,

	"session": 6, "capacity/diskmodel": 6, "exporter/headroom": 6, "diagnose/data/cost": 6, "diagnose/data/memory": 6, "testutil/kubedata": 6,

	"disk": 5, "netcheck": 5, "capacity/volume": 5, "strace": 5, "trace": 5, "etcdload": 5, "etcdcluster": 5,

	"etcdproc": 4, "capacity/sweep": 4,

	"run": 3, "result/resulttest": 3, "testutil/hostetcd": 3, "report": 3, "walfile": 3, "fio": 3, "disk/uring": 3,

	"result": 2, "scratch": 2, "etcdload/metrics": 2,

	"verdict": 1, "sysinfo": 1, "testutil/zoo": 1, "testutil/zoo/goalloc": 0,

	"stats": 0, "units": 0, "peernet": 1, "finding": 0, "etcdload/observe": 4, "inproc": 0, "testutil": 0, "testutil/fusedelay": 1, "fusedelay": 0, "testutil/loopmount": 0, "layers": 0,
}

func short(path string) string {
	path = strings.TrimPrefix(path, "etcdbench/")
	return strings.TrimPrefix(path, "internal/")
}

func TestImportsFlowDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "etcdbench/cmd/...", "etcdbench/internal/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		from, ok := layerOf[short(p.ImportPath)]
		if !ok {
			t.Errorf("package %s has no layer: add it to layerOf and docs/architecture.md", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, "etcdbench/") {
				continue
			}
			to, ok := layerOf[short(imp)]
			if ok && to >= from {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must go down", short(p.ImportPath), from, short(imp), to)
			}
		}
	}
	if n < 20 {
		t.Fatalf("go list gave %d packages: the test is not looking at the tree", n)
	}
}
