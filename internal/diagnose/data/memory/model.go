package memory

import (
	"fmt"
	"math"

	"etcdbench/internal/units"
)

// Full is what one full unpaginated LIST of bytes (keys and values)
// adds to a member's resident memory at its peak.
func (p Probe) Full(bytes int64) int64 { return int64(p.PerByte * float64(bytes)) }

// Concurrent is what k full LISTs of bytes at once add at their peak.
func (p Probe) Concurrent(bytes int64, k int) int64 {
	if k <= 1 {
		return p.Full(bytes)
	}
	return max(p.Full(bytes), int64(float64(k)*p.PerByteConcurrent*float64(bytes)))
}

// Paged is what one paginated LIST (PageSize objects a page) of keys
// objects of bytes adds at its peak: a few pages' worth (each page's
// garbage waits for the collector), never more than a full LIST of it;
// a resource of one page is listed in one request, as a full LIST is.
func (p Probe) Paged(bytes, keys int64) int64 {
	if keys <= PageSize {
		return p.Full(bytes)
	}
	return min(p.Full(bytes), int64(p.PagedPerByte*float64(bytes*PageSize/keys)))
}

// Fits is how many full LISTs of bytes at once fit between a member's
// idle resident memory and its limit: 0 when one does not.
func (p Probe) Fits(bytes, idle, limit int64) int {
	room := limit - idle
	if bytes <= 0 {
		return math.MaxInt32
	}
	if room < p.Full(bytes) {
		return 0
	}
	per := p.PerByteConcurrent * float64(bytes)
	if per <= 0 {
		return math.MaxInt32
	}
	return max(1, int(float64(room)/per))
}

// From says what the predictions come from, in words.
func (p Probe) From() string {
	return fmt.Sprintf("a member of this etcd build (a process of its own) holding %d objects of %s (%s listed), each case on it freshly started, the median of %d: "+
		"one full LIST peaked %.2fx the listed bytes over its idle resident memory, %d at once %.2fx each, %d paginated ones (%d objects a page, %d pages) %.2fx a page each; probed in %s",
		p.Objects, units.FormatBytes(p.ObjectBytes), units.FormatBytes(p.ListedBytes), repeats, p.PerByte, Concurrent, p.PerByteConcurrent, Concurrent, probePage(p.Objects), (p.Objects+probePage(p.Objects)-1)/probePage(p.Objects), p.PagedPerByte, units.FormatDuration(p.Took))
}
