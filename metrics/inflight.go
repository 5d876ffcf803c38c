package metrics

import (
	"slices"

	"benchserve/record"
)

// MaxInflight is the largest number of requests in flight at one instant:
// a request is in flight from its Start to its End, failures included.
// Unlike the reference's peak concurrency, which counts every request
// alive at some time during a one-second bucket (up to twice the
// --max-concurrency cap for requests shorter than a second), this never
// exceeds the cap. Requests never sent do not count.
func MaxInflight(recs []record.Record) int {
	type event struct {
		t     float64
		delta int
	}
	ev := make([]event, 0, 2*len(recs))
	for i := range recs {
		r := &recs[i]
		if r.Sent {
			ev = append(ev, event{r.Start, 1}, event{max(r.End, r.Start), -1})
		}
	}
	// At one instant an end comes before a start: a slot handed from one
	// request to the next is not two in flight.
	slices.SortFunc(ev, func(a, b event) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return a.delta - b.delta
	})
	n, peak := 0, 0
	for _, e := range ev {
		n += e.delta
		peak = max(peak, n)
	}
	return peak
}
