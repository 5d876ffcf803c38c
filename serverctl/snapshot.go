package serverctl

import (
	"math"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"benchserve/metrics"
)

// Snapshots turns scrapes into the metrics package's plain samples. A
// series' key is its family's name, with its labels when the family had
// several series in any scrape (so a key is the same in every scrape).
func Snapshots(scrapes []Scrape) []metrics.Snapshot {
	many := map[string]bool{}
	for _, s := range scrapes {
		for name, f := range s.Fams {
			if len(f.GetMetric()) > 1 {
				many[name] = true
			}
		}
	}
	out := make([]metrics.Snapshot, len(scrapes))
	for i, s := range scrapes {
		snap := metrics.Snapshot{At: s.At, Samples: map[string]metrics.Sample{}}
		for name, f := range s.Fams {
			for _, m := range f.GetMetric() {
				x := sampleOf(name, f.GetType(), m)
				x.Key = name
				if many[name] {
					x.Key = name + labelText(m.GetLabel())
				}
				snap.Samples[x.Key] = x
			}
		}
		out[i] = snap
	}
	return out
}

func sampleOf(name string, t dto.MetricType, m *dto.Metric) metrics.Sample {
	x := metrics.Sample{Name: name, Labels: map[string]string{}}
	for _, l := range m.GetLabel() {
		x.Labels[l.GetName()] = l.GetValue()
	}
	switch t {
	case dto.MetricType_COUNTER:
		x.Kind, x.Value = metrics.Counter, m.GetCounter().GetValue()
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		h := m.GetHistogram()
		x.Kind, x.Count, x.Sum = metrics.Histogram, float64(h.GetSampleCount()), h.GetSampleSum()
		for _, b := range h.GetBucket() {
			x.Buckets = append(x.Buckets, metrics.Bucket{Upper: b.GetUpperBound(), Count: float64(b.GetCumulativeCount())})
		}
		sort.Slice(x.Buckets, func(a, b int) bool { return x.Buckets[a].Upper < x.Buckets[b].Upper })
		if n := len(x.Buckets); n == 0 || !math.IsInf(x.Buckets[n-1].Upper, 1) {
			x.Buckets = append(x.Buckets, metrics.Bucket{Upper: math.Inf(1), Count: x.Count})
		}
	case dto.MetricType_SUMMARY:
		s := m.GetSummary()
		x.Kind, x.Count, x.Sum = metrics.SummaryKind, float64(s.GetSampleCount()), s.GetSampleSum()
	case dto.MetricType_GAUGE:
		x.Kind, x.Value = metrics.Gauge, m.GetGauge().GetValue()
	default:
		x.Kind, x.Value = metrics.Gauge, m.GetUntyped().GetValue()
	}
	return x
}

// labelEscape escapes a label value; made once (building a Replacer is
// most of its cost), on first use.
var labelEscape = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// labelText is {a="x",b="y"}, labels sorted by name, values escaped as
// the exposition format escapes them.
func labelText(ls []*dto.LabelPair) string {
	pairs := make([]string, 0, len(ls))
	for _, l := range ls {
		v := labelEscape.Replace(l.GetValue())
		pairs = append(pairs, l.GetName()+`="`+v+`"`)
	}
	sort.Strings(pairs)
	return "{" + strings.Join(pairs, ",") + "}"
}
