package cmp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"
)

// ErrNoJSON is returned when a tool's output holds no JSON object.
var ErrNoJSON = errors.New("cmp: no JSON object in the output")

// FirstJSON returns b from its first '{': fio may print warnings such as
// "fio: ..." on stdout before its report.
func FirstJSON(b []byte) ([]byte, error) {
	i := bytes.IndexByte(b, '{')
	if i < 0 {
		return nil, ErrNoJSON
	}
	return b[i:], nil
}

// DecodeFirst decodes the first JSON value of b into v, ignoring anything
// before its first '{' and after it.
func DecodeFirst(b []byte, v any) error {
	b, err := FirstJSON(b)
	if err != nil {
		return err
	}
	return json.NewDecoder(bytes.NewReader(b)).Decode(v)
}

// RawJSON returns the first JSON value in b, for the --json file, or nil.
func RawJSON(b []byte) json.RawMessage {
	var raw json.RawMessage
	if DecodeFirst(b, &raw) != nil {
		return nil
	}
	return raw
}

// WriteJSON writes v, indented, to path.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the --json file: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing --json %s: %w", path, err)
	}
	return nil
}

// SaveJSON is deferred by a run that writes a --json file: it records the
// run's error *err in *errField, writes v to path, and reports a write
// failure through *err unless that already holds one. An empty path
// writes nothing.
func SaveJSON(path string, v any, errField *string, err *error) {
	if path == "" {
		return
	}
	if *err != nil {
		*errField = (*err).Error()
	}
	if werr := WriteJSON(path, v); werr != nil && *err == nil {
		*err = werr
	}
}

// JSONFloat is a float64 that encodes NaN and infinities (no ratio) as
// JSON null, which encoding/json refuses to do for a plain float64.
type JSONFloat float64

// MarshalJSON implements json.Marshaler.
func (f JSONFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 64), nil
}

// JSONFile is the layout of the --json file of a paired comparison
// (Comparison) whose job parameters are a P.
type JSONFile[P any] struct {
	Started   time.Time `json:"started_at"`
	Dir       string    `json:"dir"`
	Params    P         `json:"params"`
	Fio       string    `json:"fio_version"`
	Etcdbench string    `json:"etcdbench"`
	Runs      []RawRun  `json:"runs"`
	Summary   []Row     `json:"summary,omitempty"`
	Error     string    `json:"error,omitempty"`
}
