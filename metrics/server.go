package metrics

import (
	"math"
	"sort"
	"strings"
	"time"
)

// Kind is a server metric's Prometheus type.
type Kind int

// The kinds the server view tells apart (untyped reads as a gauge).
const (
	Gauge Kind = iota
	Counter
	Histogram
	SummaryKind
)

// Bucket is a histogram bucket: its upper bound and cumulative count.
type Bucket struct{ Upper, Count float64 }

// Sample is one series of one scrape of a server's /metrics. Key is the
// metric's name, with its labels ({a="x",b="y"}, sorted) when the family
// has several series.
type Sample struct {
	Key, Name string
	Kind      Kind
	Value     float64 // counter or gauge
	Count     float64 // histogram, summary
	Sum       float64
	Buckets   []Bucket // histogram, ascending, +Inf last
	Labels    map[string]string
}

// Snapshot is one scrape.
type Snapshot struct {
	At      time.Time
	Samples map[string]Sample
}

// ServerSeries is one series over the measured run.
type ServerSeries struct {
	Key, Name string
	Kind      Kind
	// Counter: Delta over the run; Reset: the counter went down between
	// two scrapes (a restart): the delta adds what was counted after it
	// rather than subtracting.
	Delta float64
	Reset bool
	// Gauge: over every scrape of the run.
	Mean, Max, Last float64
	// Histogram (and summary): the deltas of count and sum; P50 and P99
	// from the bucket deltas, as Prometheus' histogram_quantile.
	Count, Sum, P50, P99 float64
	Labels               map[string]string
}

// ServerView is a server's metrics over a run.
type ServerView struct {
	Series []ServerSeries // sorted by key
	byKey  map[string]int
	// Scrapes read and Failed reads.
	Scrapes, Failed int
}

// ServerSummary turns the scrapes of a run (the first before it, the
// last after it) into per-series figures.
func ServerSummary(snaps []Snapshot, failed int) ServerView {
	v := ServerView{Scrapes: len(snaps), Failed: failed, byKey: map[string]int{}}
	if len(snaps) == 0 {
		return v
	}
	keys := map[string]bool{}
	for _, s := range snaps {
		for k := range s.Samples {
			keys[k] = true
		}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		var seen []Sample
		for _, s := range snaps {
			if x, ok := s.Samples[k]; ok {
				seen = append(seen, x)
			}
		}
		last := seen[len(seen)-1]
		e := ServerSeries{Key: k, Name: last.Name, Kind: last.Kind, Labels: last.Labels}
		switch last.Kind {
		case Counter:
			// A series absent from the first scrape began during the run,
			// from 0.
			prev := 0.0
			if _, ok := snaps[0].Samples[k]; ok {
				prev = seen[0].Value
				seen = seen[1:]
			}
			for _, x := range seen {
				if x.Value < prev {
					e.Reset = true
					e.Delta += x.Value
				} else {
					e.Delta += x.Value - prev
				}
				prev = x.Value
			}
		case Gauge:
			e.Max = math.Inf(-1)
			for _, x := range seen {
				e.Mean += x.Value
				e.Max = math.Max(e.Max, x.Value)
			}
			e.Mean /= float64(len(seen))
			e.Last = last.Value
		default:
			first := Sample{}
			if x, ok := snaps[0].Samples[k]; ok {
				first = x
			}
			if last.Count < first.Count {
				e.Reset, first = true, Sample{}
			}
			e.Count, e.Sum = last.Count-first.Count, last.Sum-first.Sum
			if last.Kind == Histogram {
				d := make([]Bucket, len(last.Buckets))
				for i, b := range last.Buckets {
					d[i] = Bucket{b.Upper, b.Count - bucketAt(first.Buckets, b.Upper)}
				}
				e.P50, e.P99 = bucketQuantile(0.5, d), bucketQuantile(0.99, d)
			}
		}
		v.byKey[k] = len(v.Series)
		v.Series = append(v.Series, e)
	}
	return v
}

func bucketAt(bs []Bucket, upper float64) float64 {
	for _, b := range bs {
		if b.Upper == upper {
			return b.Count
		}
	}
	return 0
}

// bucketQuantile is Prometheus' histogram_quantile over cumulative
// buckets: linear within the bucket the rank falls in, from its lower
// bound (0 for the first); a rank in the +Inf bucket gives the highest
// finite bound. NaN when the histogram is empty.
func bucketQuantile(q float64, bs []Bucket) float64 {
	if len(bs) == 0 || bs[len(bs)-1].Count <= 0 {
		return math.NaN()
	}
	total := bs[len(bs)-1].Count
	rank := q * total
	for i, b := range bs {
		if b.Count < rank {
			continue
		}
		if math.IsInf(b.Upper, 1) {
			if i == 0 {
				return math.NaN()
			}
			return bs[i-1].Upper
		}
		lo, below := 0.0, 0.0
		if i > 0 {
			lo, below = bs[i-1].Upper, bs[i-1].Count
		}
		if b.Count == below {
			return b.Upper
		}
		return lo + (b.Upper-lo)*(rank-below)/(b.Count-below)
	}
	return bs[len(bs)-1].Upper
}

// Get is the series with key k.
func (v *ServerView) Get(k string) (ServerSeries, bool) {
	i, ok := v.byKey[k]
	if !ok {
		return ServerSeries{}, false
	}
	return v.Series[i], true
}

// First is the first series (by key) of any of names: the bare name, or
// the first labelled series of it; several series of one name (a
// counter per model) are summed for counters. A name may select by one
// label, name{label="value"} (Triton's nv_trt_llm_request_metrics
// {request_type="active"}): then only the series with that label value.
func (v *ServerView) First(names ...string) (ServerSeries, bool) {
	for _, n := range names {
		if s, ok := v.Get(n); ok {
			return s, true
		}
		base, label, value := selector(n)
		var sum ServerSeries
		found := false
		for _, s := range v.Series {
			if s.Name != base || label != "" && s.Labels[label] != value {
				continue
			}
			if !found {
				sum, found = s, true
				continue
			}
			if s.Kind == Counter {
				sum.Delta += s.Delta
				sum.Reset = sum.Reset || s.Reset
			}
		}
		if found {
			return sum, true
		}
	}
	return ServerSeries{}, false
}

// selector splits name{label="value"} into its parts; a bare name has no
// label.
func selector(n string) (name, label, value string) {
	name, sel, ok := strings.Cut(n, "{")
	if !ok {
		return n, "", ""
	}
	label, value, _ = strings.Cut(strings.TrimSuffix(sel, "}"), "=")
	return name, label, strings.Trim(value, `"`)
}

// Total is what a series counted over the run: a counter's delta, a
// histogram's or summary's sum (TGI counts tokens in histograms), a
// gauge's last value.
func (s ServerSeries) Total() float64 {
	switch s.Kind {
	case Counter:
		return s.Delta
	case Gauge:
		return s.Last
	}
	return s.Sum
}

// Known reports whether any series has one of names (selectors count by
// their bare name).
func (v *ServerView) Known(names []string) bool {
	for _, n := range names {
		base, _, _ := selector(n)
		for _, s := range v.Series {
			if s.Name == base {
				return true
			}
		}
	}
	return false
}
