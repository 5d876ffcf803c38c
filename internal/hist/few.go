package hist

import "time"

// Few counts durations into H's buckets for a caller that sees few
// distinct ones (one request's read delays, usually a handful of buckets):
// a few bytes per bucket used rather than H's 2.7 KiB, which one per
// stream in flight would cost at thousands of streams. Add it to an H with
// H.AddFew. The zero value is empty; a Few is not safe for concurrent use.
type Few struct {
	idx    []uint16
	n      []uint64
	count  uint64
	max    time.Duration
	maxSet bool
}

// Add counts d (negative counts as 0).
func (f *Few) Add(d time.Duration) {
	d = max(d, 0)
	i := uint16(index(uint64(d)))
	f.count++
	if !f.maxSet || d > f.max {
		f.max, f.maxSet = d, true
	}
	for k, j := range f.idx {
		if j == i {
			f.n[k]++
			return
		}
	}
	f.idx = append(f.idx, i)
	f.n = append(f.n, 1)
}

// Count is the number of values added.
func (f *Few) Count() uint64 { return f.count }

// Reset empties f, keeping its room.
func (f *Few) Reset() { *f = Few{idx: f.idx[:0], n: f.n[:0]} }

// AddFew adds f's counts to h.
func (h *H) AddFew(f *Few) {
	if f.count == 0 {
		return
	}
	for k, i := range f.idx {
		h.n[i] += f.n[k]
	}
	h.count += f.count
	if !h.maxSet || f.max > h.max {
		h.max, h.maxSet = f.max, true
	}
}
