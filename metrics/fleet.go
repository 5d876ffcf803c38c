package metrics

import (
	"sort"
)

// SumSnapshots is the fleet's scrape from one scrape of each of its
// servers, taken at the same tick: each series summed over the servers
// that have it, as Prometheus' sum() by the series' labels. Counters and
// gauges add their values, histograms and summaries their counts and
// sums, histograms their cumulative buckets (by upper bound, over the
// union of the bounds). At is the latest of the scrapes' times.
func SumSnapshots(snaps []Snapshot) Snapshot {
	out := Snapshot{Samples: map[string]Sample{}}
	for _, s := range snaps {
		if s.At.After(out.At) {
			out.At = s.At
		}
	}
	keys := map[string][]Sample{}
	var order []string
	for _, s := range snaps {
		for k, x := range s.Samples {
			if _, ok := keys[k]; !ok {
				order = append(order, k)
			}
			keys[k] = append(keys[k], x)
		}
	}
	for _, k := range order {
		xs := keys[k]
		sum := xs[0]
		sum.Buckets = nil
		sum.Value, sum.Count, sum.Sum = 0, 0, 0
		for _, x := range xs {
			sum.Value += x.Value
			sum.Count += x.Count
			sum.Sum += x.Sum
		}
		if sum.Kind == Histogram {
			sum.Buckets = sumBuckets(xs)
		}
		out.Samples[k] = sum
	}
	return out
}

// sumBuckets adds cumulative buckets: at each bound of any of them, each
// histogram counts what its own buckets hold up to that bound.
func sumBuckets(xs []Sample) []Bucket {
	seen := map[float64]bool{}
	var uppers []float64
	for _, x := range xs {
		for _, b := range x.Buckets {
			if !seen[b.Upper] {
				seen[b.Upper] = true
				uppers = append(uppers, b.Upper)
			}
		}
	}
	sort.Float64s(uppers)
	out := make([]Bucket, len(uppers))
	for i, u := range uppers {
		out[i].Upper = u
		for _, x := range xs {
			out[i].Count += cumulativeAt(x.Buckets, u)
		}
	}
	return out
}

// cumulativeAt is the count of the highest bucket of bs (ascending) whose
// bound is at most upper: the observations known to be <= upper.
func cumulativeAt(bs []Bucket, upper float64) float64 {
	c := 0.0
	for _, b := range bs {
		if b.Upper > upper {
			break
		}
		c = b.Count
	}
	return c
}
