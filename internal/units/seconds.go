package units

import "time"

// FromSeconds converts a number of seconds, as the result model and the
// thresholds keep latencies, to a Duration (truncated to the nanosecond).
func FromSeconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
