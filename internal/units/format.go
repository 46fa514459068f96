package units

import (
	"fmt"
	"time"
)

// FormatDuration formats a latency with a precision that suits its size.
func FormatDuration(d time.Duration) string {
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

// FormatValue formats a figure or a verdict's value in its unit, as the
// result model names units ("s", "ops/s", "ratio", "B/s", "x", "ops", "B",
// "count"): seconds as FormatDuration, a ratio as a percentage. The text
// and HTML reports, tune's table and check's evidence all print values
// with it, so that one value reads the same everywhere.
func FormatValue(v float64, unit string) string {
	switch unit {
	case "s":
		return FormatDuration(FromSeconds(v))
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
