package metrics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"benchserve/record"
)

// ABPair is one pair of an A/B plan: slots 2k and 2k+1, one sent to each
// side. Both records must be the pair's (a pair missing a side is left out
// by the caller).
type ABPair struct{ A, B *record.Record }

// ABOptions are what ComputeAB needs besides the pairs.
type ABOptions struct {
	// Seed fixes the resampling, so that a result is repeatable.
	Seed uint64
	// Resamples is the bootstrap's count (0: ABResamples); Block the
	// pairs per block (0: ABBlock of the pairs).
	Resamples, Block int
	// Goodput, when set, adds request goodput (req/s) to the figures.
	Goodput *SLO
}

// ABResamples is the bootstrap's default count of resamples.
const ABResamples = 2000

// ABConfidence is the family-wise confidence of the intervals.
const ABConfidence = 0.95

// The verdicts of a figure.
const (
	ABBetter  = "B better"
	ABWorse   = "B worse"
	ABSame    = "no difference beyond noise"
	ABTooFew  = "too few requests"
	abMinReqs = 2 * minBeyondAB
	// minBeyondAB is how many requests must lie beyond a percentile on
	// each side before its difference gets an interval: the resampled P99
	// of 100 requests is one of its top two, and says nothing.
	minBeyondAB = 5
)

// ABFigure is one figure of an A/B comparison: each side's value (over
// the pairs), B − A, and its interval.
type ABFigure struct {
	Key   string
	Label string
	// Lower: lower is better (latencies); else higher is (throughput).
	Lower bool
	A, B  float64
	// Diff is B − A; Pct is it relative to A, in percent (NaN when A is 0).
	Diff, Pct float64
	// Low, High bound B − A; PctLow, PctHigh are the same bounds relative
	// to A. NaN when TooFew says why there is no interval.
	Low, High       float64
	PctLow, PctHigh float64
	Verdict         string
	TooFew          string
}

// AB is the paired comparison of an A/B run.
type AB struct {
	Pairs, Block, Resamples int
	// Tail is the share of each figure's resampled differences left out
	// at either end of its interval (0.025 for one figure alone; less, so
	// that all the intervals hold together).
	Tail    float64
	Figures []ABFigure
}

// ABBlock is the pairs per bootstrap block for n pairs: the square root,
// longer than the cube root a moving-block bootstrap of a mean would take,
// because a server's noise comes in episodes (a stall, a burst of long
// prompts) that span many consecutive pairs, and a block must hold one
// for the resamples to vary as much as runs do.
func ABBlock(n int) int {
	return max(1, int(math.Round(math.Sqrt(float64(n)))))
}

// abStats are the latencies, each as mean, median and P99.
var abStats = []struct{ key, label string }{
	{"ttft", "TTFT"}, {"itl", "ITL"}, {"tpot", "TPOT"}, {"e2e_latency", "E2E latency"},
}

// ComputeAB compares B with A over pairs, each side's figures computed as
// the result line's are (over the pairs' successful requests), the
// throughputs over dur[side] seconds (each side's last response, from
// the common start). The interval of each B − A comes from a moving-block
// bootstrap over the pairs: every resample draws blocks of Block
// consecutive pairs with replacement, and both sides of a drawn pair
// together. The intervals are simultaneous percentile intervals: each
// leaves out the same share Tail of its figure's resampled differences at
// either end, Tail chosen so that in 95% of the resamples every figure
// lies inside its interval; so all of them hold together with 95%
// confidence, and a dozen figures do not yield a chance "difference" in
// one comparison of two. In a resample a side's duration is its latest
// response end among the pairs drawn.
func ComputeAB(pairs []ABPair, dur [2]float64, opt ABOptions) AB {
	n := len(pairs)
	out := AB{Pairs: n, Block: opt.Block, Resamples: opt.Resamples}
	if out.Block <= 0 {
		out.Block = ABBlock(n)
	}
	out.Block = min(out.Block, max(n, 1))
	if out.Resamples <= 0 {
		out.Resamples = ABResamples
	}
	var sides [2]abSide
	for s := range sides {
		sides[s] = newABSide(pairs, s, opt.Goodput)
	}
	figs := abFigures(opt.Goodput != nil)
	ones := make([]int32, n)
	for i := range ones {
		ones[i] = 1
	}
	var point [2][]float64
	for s := range sides {
		point[s] = sides[s].figures(ones, dur[s], nil)
	}
	for i := range figs {
		f := &figs[i]
		f.A, f.B = point[0][i], point[1][i]
		f.Diff = f.B - f.A
		f.Pct = pct100(f.Diff, f.A)
		f.Low, f.High, f.PctLow, f.PctHigh = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		f.TooFew = sides[0].tooFew("A", f.Key)
		if f.TooFew == "" {
			f.TooFew = sides[1].tooFew("B", f.Key)
		}
		if f.TooFew != "" {
			f.Verdict = ABTooFew
		}
	}
	if n == 0 {
		return out
	}
	// diffs[f][r] is figure f's B − A in resample r.
	diffs := make([][]float64, len(figs))
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	counts := make([]int32, n)
	var scratch []int
	for range out.Resamples {
		drawBlocks(rng, counts, out.Block)
		a := sides[0].figures(counts, resampledDur(pairs, counts, 0, dur[0]), &scratch)
		b := sides[1].figures(counts, resampledDur(pairs, counts, 1, dur[1]), &scratch)
		for i := range figs {
			diffs[i] = append(diffs[i], b[i]-a[i])
		}
	}
	k := simultaneous(figs, diffs)
	out.Tail = float64(k) / float64(out.Resamples)
	for i := range figs {
		f := &figs[i]
		if f.TooFew != "" {
			continue
		}
		d := diffs[i] // sorted by simultaneous
		f.Low, f.High = d[k], d[len(d)-1-k]
		f.PctLow, f.PctHigh = pct100(f.Low, f.A), pct100(f.High, f.A)
		f.Verdict = abVerdict(f.Low, f.High, f.Lower)
	}
	out.Figures = figs
	return out
}

// abFigures are the figures compared, in order, with their keys as the
// result line names them.
func abFigures(goodput bool) []ABFigure {
	var figs []ABFigure
	for _, st := range abStats {
		for _, s := range []struct{ key, label string }{{"mean", "Mean"}, {"median", "Median"}, {"p99", "P99"}} {
			figs = append(figs, ABFigure{Key: s.key + "_" + st.key + "_ms", Label: s.label + " " + st.label + " (ms)", Lower: true})
		}
	}
	figs = append(figs, ABFigure{Key: "output_throughput", Label: "Output token throughput (tok/s)"})
	if goodput {
		figs = append(figs, ABFigure{Key: "request_goodput", Label: "Request goodput (req/s)"})
	}
	return figs
}

// abVerdict reads an interval of B − A.
func abVerdict(low, high float64, lower bool) string {
	switch {
	case low > 0 && lower, high < 0 && !lower:
		return ABWorse
	case high < 0 && lower, low > 0 && !lower:
		return ABBetter
	}
	return ABSame
}

// simultaneous sorts each figure's resampled differences and returns k,
// the resamples cut from each end of every figure's distribution, such
// that in at least ABConfidence of the resamples every figure lies
// within its own [k-th, (R−1−k)-th]: the largest such k, so that the
// intervals hold together. Figures without an interval take no part.
// Percentile intervals, rather than ± standard errors, keep a
// difference that rests on one cluster of requests (drawn in some
// resamples, not in others) from looking certain.
func simultaneous(figs []ABFigure, diffs [][]float64) int {
	var parts []int
	for i := range figs {
		if figs[i].TooFew == "" && len(diffs[i]) > 0 {
			parts = append(parts, i)
		}
	}
	if len(parts) == 0 {
		return 0
	}
	R := len(diffs[parts[0]])
	// rank[f][r]: resample r's rank within figure f's sorted differences
	// (NaN last, never inside an interval).
	rank := make([][]int32, len(parts))
	for j, f := range parts {
		order := make([]int32, R)
		for r := range order {
			order[r] = int32(r)
		}
		d := diffs[f]
		slices.SortStableFunc(order, func(a, b int32) int { return cmpNaNLast(d[a], d[b]) })
		rank[j] = make([]int32, R)
		for pos, r := range order {
			rank[j][r] = int32(pos)
		}
		slices.SortFunc(d, cmpNaNLast)
	}
	covered := func(k int) bool {
		in := 0
		for r := range R {
			ok := true
			for j, f := range parts {
				x, p := diffs[f], int(rank[j][r])
				// Ties count as inside: a value equal to a bound is in.
				if v := x[p]; math.IsNaN(v) || v < x[k] || v > x[R-1-k] {
					ok = false
					break
				}
			}
			if ok {
				in++
			}
		}
		return float64(in) >= ABConfidence*float64(R)
	}
	lo, hi := 0, (R-1)/2 // covered(0) holds unless NaNs; find the largest k covered
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if covered(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// cmpNaNLast orders floats with NaN after every number.
func cmpNaNLast(a, b float64) int {
	switch an, bn := math.IsNaN(a), math.IsNaN(b); {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// drawBlocks fills counts with how often each pair is drawn: blocks of
// block consecutive pairs, their starts uniform, until n pairs are drawn
// (the last block cut short).
func drawBlocks(rng *rand.Rand, counts []int32, block int) {
	n := len(counts)
	clear(counts)
	starts := n - block + 1
	for drawn := 0; drawn < n; {
		s := rng.IntN(starts)
		for k := s; k < s+block && drawn < n; k++ {
			counts[k]++
			drawn++
		}
	}
}

// resampledDur is a side's duration in a resample: the latest end of its
// drawn requests, capped by the run's (never longer than measured).
func resampledDur(pairs []ABPair, counts []int32, side int, dur float64) float64 {
	d := 0.0
	for k, c := range counts {
		if c == 0 {
			continue
		}
		r := pairs[k].A
		if side == 1 {
			r = pairs[k].B
		}
		if r.Sent {
			d = max(d, r.End)
		}
	}
	if d <= 0 || d > dur {
		return dur
	}
	return d
}

// abSample is one side's values of a latency, in ms, sorted, with the pair
// each came from.
type abSample struct {
	v     []float64
	owner []int32
	reqs  int // successful requests that gave values
}

// abSide is one side's samples and per-pair counts.
type abSide struct {
	lat  [4]abSample // ttft, itl, tpot, e2e
	out  []float64   // output tokens of each pair's successful request
	good []float64   // 1 for a request meeting the goodput SLO
}

func newABSide(pairs []ABPair, side int, slo *SLO) abSide {
	type val struct {
		v float64
		o int32
	}
	var vals [4][]val
	var reqs [4]int
	sd := abSide{out: make([]float64, len(pairs))}
	if slo != nil {
		sd.good = make([]float64, len(pairs))
	}
	for k := range pairs {
		r := pairs[k].A
		if side == 1 {
			r = pairs[k].B
		}
		if slo != nil && slo.Good(r) {
			sd.good[k] = 1
		}
		if !r.Success {
			continue
		}
		o := int32(k)
		sd.out[k] = float64(r.OutputLen)
		vals[0] = append(vals[0], val{r.TTFT * 1000, o})
		reqs[0]++
		if g := r.Gaps.Seconds(); len(g) > 0 {
			for _, x := range g {
				vals[1] = append(vals[1], val{x * 1000, o})
			}
			reqs[1]++
		}
		if r.OutputLen > 1 {
			vals[2] = append(vals[2], val{(r.Latency - r.TTFT) / float64(r.OutputLen-1) * 1000, o})
			reqs[2]++
		}
		vals[3] = append(vals[3], val{r.Latency * 1000, o})
		reqs[3]++
	}
	for i := range vals {
		sort.SliceStable(vals[i], func(a, b int) bool { return vals[i][a].v < vals[i][b].v })
		s := abSample{v: make([]float64, len(vals[i])), owner: make([]int32, len(vals[i])), reqs: reqs[i]}
		for j, x := range vals[i] {
			s.v[j], s.owner[j] = x.v, x.o
		}
		sd.lat[i] = s
	}
	return sd
}

// figures are the side's figures (abFigures' order) when pair k counts
// counts[k] times, over dur seconds; scratch is reused between calls.
func (sd *abSide) figures(counts []int32, dur float64, scratch *[]int) []float64 {
	var cum []int
	if scratch != nil {
		cum = *scratch
	}
	var out []float64
	for i := range sd.lat {
		var m, q, p float64
		m, q, p, cum = sd.lat[i].weighted(counts, cum)
		out = append(out, m, q, p)
	}
	if scratch != nil {
		*scratch = cum
	}
	out = append(out, perSecond(sd.out, counts, dur))
	if sd.good != nil {
		out = append(out, perSecond(sd.good, counts, dur))
	}
	return out
}

// perSecond is Σ counts[k]·x[k] / dur.
func perSecond(x []float64, counts []int32, dur float64) float64 {
	if !(dur > 0) {
		return math.NaN()
	}
	t := 0.0
	for k, c := range counts {
		t += float64(c) * x[k]
	}
	return t / dur
}

// weighted is the mean, median and P99 (NumPy's, as the result line's)
// of s with each pair's values counted counts[pair] times; cum is scratch.
func (s *abSample) weighted(counts []int32, cum []int) (mean, median, p99 float64, _ []int) {
	if cap(cum) < len(s.v) {
		cum = make([]int, len(s.v))
	}
	cum = cum[:len(s.v)]
	sum, w := 0.0, 0
	for i, x := range s.v {
		c := int(counts[s.owner[i]])
		sum += x * float64(c)
		w += c
		cum[i] = w
	}
	if w == 0 {
		return math.NaN(), math.NaN(), math.NaN(), cum
	}
	at := func(k int) float64 { return s.v[sort.SearchInts(cum, k+1)] }
	return sum / float64(w), Median(w, at), Percentile(w, 99, at), cum
}

// tooFew is why this side cannot resolve figure key ("" when it can): a
// mean, median or throughput needs abMinReqs requests, a P99 minBeyondAB
// requests beyond it (for ITL: gaps at or above it from that many).
func (sd *abSide) tooFew(side, key string) string {
	idx := -1
	for i, st := range abStats {
		if key == "mean_"+st.key+"_ms" || key == "median_"+st.key+"_ms" || key == "p99_"+st.key+"_ms" {
			idx = i
		}
	}
	if idx < 0 { // a throughput
		n := 0
		for _, x := range sd.out {
			if x > 0 {
				n++
			}
		}
		if n < abMinReqs {
			return fmt.Sprintf("%s has %d successful requests, %s needs %d", side, n, key, abMinReqs)
		}
		return ""
	}
	s := &sd.lat[idx]
	if key[:4] != "p99_" {
		if s.reqs < abMinReqs {
			return fmt.Sprintf("%s has %d requests with a value, %s needs %d", side, s.reqs, key, abMinReqs)
		}
		return ""
	}
	if len(s.v) == 0 {
		return fmt.Sprintf("%s has no values", side)
	}
	// The requests whose values lie at or above the P99.
	at := func(k int) float64 { return s.v[k] }
	p := Percentile(len(s.v), 99, at)
	seen := map[int32]bool{}
	for i := len(s.v) - 1; i >= 0 && s.v[i] >= p; i-- {
		seen[s.owner[i]] = true
	}
	if len(seen) < minBeyondAB {
		need := int(math.Ceil(minBeyondAB/0.01 - 1e-9))
		return fmt.Sprintf("%s's values at or above its P99 come from %d of its requests, a P99 needs %d (about %d requests a side)", side, len(seen), minBeyondAB, need)
	}
	return ""
}

func pct100(d, a float64) float64 {
	if a == 0 || math.IsNaN(a) {
		return math.NaN()
	}
	return 100 * d / math.Abs(a)
}

// ABKeys are the keys of the figures an A/B comparison has, in order
// (request_goodput with --goodput only).
func ABKeys(goodput bool) []string {
	var keys []string
	for _, f := range abFigures(goodput) {
		keys = append(keys, f.Key)
	}
	return keys
}
