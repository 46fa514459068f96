// Package report renders a result.Result for people (Text) and for
// programs (JSON). Every reporter is a plain function from a result to an
// io.Writer, so a saved result can be rendered again in any format.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/units"
)

// JSON writes r as indented JSON following result.SchemaID.
func JSON(w io.Writer, r *result.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("report: writing JSON: %w", err)
	}
	return nil
}

// Duration formats a latency with a precision that suits its size.
func Duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= 10*time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d >= 10*time.Microsecond:
		return d.Round(time.Microsecond).String()
	}
	return d.Round(10 * time.Nanosecond).String()
}

// value formats a verdict figure in its unit.
func value(v float64, unit string) string {
	switch unit {
	case "s":
		return Duration(units.FromSeconds(v))
	case "ops/s":
		return fmt.Sprintf("%.0f/s", v)
	case "ratio":
		return fmt.Sprintf("%.0f %%", 100*v)
	case "B/s":
		return fmt.Sprintf("%.1f MB/s", v/1e6)
	case "x":
		return fmt.Sprintf("%.2fx", v)
	case "ops", "B", "count":
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g %s", v, unit)
}
