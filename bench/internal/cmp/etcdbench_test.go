package cmp

import (
	"strings"
	"testing"
	"time"
)

func TestEtcdbenchWorkload(t *testing.T) {
	doc := `progress...{"schema":"etcdbench.result/v1","workloads":[{"name":"wal"},{"name":"mixed","ops":5,
		"figures":[{"name":"read_iops","value":4.5}],"process":{"user_ns":2,"system_ns":3}}]}`
	w, err := EtcdbenchWorkload([]byte(doc), "mixed")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := FigureOf(w, "read_iops"); err != nil || v != 4.5 {
		t.Errorf("FigureOf = %v, %v", v, err)
	}
	if _, err := FigureOf(w, "write_iops"); err == nil || !strings.Contains(err.Error(), `"write_iops"`) {
		t.Errorf("missing figure: err = %v", err)
	}
	if c := SelfCPU(w); c != 5*time.Nanosecond {
		t.Errorf("SelfCPU = %v, want 5ns", c)
	}
	for name, in := range map[string]string{
		"no such workload": `{"schema":"etcdbench.result/v1","workloads":[]}`,
		"not etcdbench":    `{"jobs":[]}`,
		"no JSON":          `error: disk full`,
	} {
		if _, err := EtcdbenchWorkload([]byte(in), "mixed"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
