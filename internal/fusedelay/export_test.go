package fusedelay

import "time"

// WaitAt is how long a sync would wait at now (for the tests).
func (f *FS) WaitAt(now time.Time) time.Duration { return f.wait(now) }
