package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"benchserve/record"
)

// TestDescribeGaps: the gaps' statistics, read from the records, equal
// those of the gathered list of seconds, bit for bit: sizes around the
// pairwise blocks, ties, gaps kept aside (negative, 4.29 s and over), and
// failed records, whose gaps count nowhere.
func TestDescribeGaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 2, 7, 8, 9, 127, 128, 129, 300, 1000, 4097, 250_000} {
		for _, kind := range []string{"spread", "ties", "odd"} {
			var recs []record.Record
			var all []float64
			n := 0
			for n < size {
				k := min(1+rng.IntN(300), size-n)
				var g record.Gaps
				ok := rng.IntN(10) != 0
				for range k {
					var d time.Duration
					switch kind {
					case "spread":
						d = time.Duration(rng.Int64N(int64(math.MaxUint32)))
					case "ties":
						d = time.Duration(rng.IntN(5)) * 10 * time.Millisecond
					default:
						d = time.Duration(rng.Int64N(1<<40) - 1<<38)
					}
					g.Append(d)
					if ok {
						all = append(all, d.Seconds())
					}
				}
				if ok {
					n += k
				}
				recs = append(recs, record.Record{Success: ok, Gaps: g})
			}
			got, want := describeGaps(recs, n), Describe(all)
			if !sameStats(got, want) {
				t.Errorf("%d %s: %+v, want %+v", size, kind, got, want)
			}
		}
	}
	if got := describeGaps(nil, 0); !sameStats(got, Stats{}) {
		t.Errorf("no gaps: %+v", got)
	}
}

// BenchmarkDescribeGaps reads 2.56 million gaps from 10,000 records.
func BenchmarkDescribeGaps(b *testing.B) {
	recs := make([]record.Record, 10_000)
	n := 0
	for i := range recs {
		var g record.Gaps
		for k := range 256 {
			g.Append(10*time.Millisecond + time.Duration((i*7+k*13)%9973)*time.Microsecond)
		}
		recs[i] = record.Record{Success: true, Gaps: g}
		n += g.Len()
	}
	b.ReportAllocs()
	for b.Loop() {
		describeGaps(recs, n)
	}
}
