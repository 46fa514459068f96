package cmp

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestFirstJSON(t *testing.T) {
	var v struct{ A int }
	if err := DecodeFirst([]byte("fio: warning\n{\"A\":3}\ntrailing"), &v); err != nil || v.A != 3 {
		t.Errorf("DecodeFirst = %v, %+v", err, v)
	}
	if _, err := FirstJSON([]byte("no object")); !errors.Is(err, ErrNoJSON) {
		t.Errorf("err = %v, want ErrNoJSON", err)
	}
	if raw := RawJSON([]byte("x {\"a\": [1]} y")); string(raw) != `{"a": [1]}` {
		t.Errorf("RawJSON = %s", raw)
	}
	if raw := RawJSON([]byte("{broken")); raw != nil {
		t.Errorf("RawJSON of broken JSON = %s, want nil", raw)
	}
}

func TestJSONFloat(t *testing.T) {
	b, err := json.Marshal([]JSONFloat{1.5, JSONFloat(math.NaN()), JSONFloat(math.Inf(1))})
	if err != nil || string(b) != "[1.5,null,null]" {
		t.Errorf("Marshal = %s, %v", b, err)
	}
}

func TestSaveJSON(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.json")
	out := struct {
		Error string `json:"error"`
	}{}
	err := errors.New("fio failed")
	SaveJSON(p, &out, &out.Error, &err)
	b, rerr := os.ReadFile(p)
	if rerr != nil || string(b) != "{\n  \"error\": \"fio failed\"\n}\n" || err.Error() != "fio failed" {
		t.Errorf("file %q (%v), err %v", b, rerr, err)
	}
	var ok error
	SaveJSON(filepath.Join(p, "not-a-dir", "x.json"), &out, &out.Error, &ok)
	if ok == nil {
		t.Error("a failed write was not reported")
	}
	SaveJSON("", &out, &out.Error, &ok) // no --json: nothing to do
}
