package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"benchserve/record"
)

// soakRecords are n seeded records: most succeed with lognormal
// latencies and gaps, some fail, some are cancelled, spread over 2 URLs.
func soakRecords(n int, seed uint64) []record.Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	recs := make([]record.Record, n)
	for i := range recs {
		r := &recs[i]
		r.Sent, r.URL = true, i%2
		r.Intended = float64(i) * 0.01
		r.Start = r.Intended + rng.Float64()*0.002
		r.SendDelay = rng.Float64() * 1e-4
		r.Chunks = 5
		switch rng.IntN(20) {
		case 0:
			r.Error, r.ErrorKind = "500 boom", record.KindHTTP5xx
			continue
		case 1:
			r.Error, r.ErrorKind = "cancelled on purpose", record.KindCancelled
			continue
		}
		r.Success = true
		r.TTFT = math.Exp(rng.NormFloat64()*0.5 - 3)
		var gs []float64
		t := r.TTFT
		for range 1 + rng.IntN(30) {
			g := math.Exp(rng.NormFloat64()*0.3 - 4.5)
			gs = append(gs, g)
			t += g
		}
		r.Gaps = gaps(gs...)
		r.Latency = t
		r.End = r.Start + t
		r.OutputLen = len(gs) + 1
		r.InputLen, r.InputTextLen = 100+i%7, 100+i%7
		r.Text = "a b c"
		r.KernelTimed = true
	}
	return recs
}

// within reports whether got is within SketchError of want (with a
// little room for the linear interpolation between two ranks).
func within(got, want float64) bool {
	return math.Abs(got-want) <= 2*SketchError*math.Abs(want)+1e-9
}

func TestFoldMatchesComputeWithinTheSketchError(t *testing.T) {
	recs := soakRecords(20000, 7)
	const dur = 200.0
	slo := SLO{TTFT: ptr(60)}
	opt := Options{Percentiles: []float64{50, 99.9}, CacheReport: true}
	f := NewFold(words{}, opt, slo, 2)
	for i := range recs {
		f.Add(&recs[i])
	}
	want := Compute(recs, dur, words{}, opt)
	got := f.Summary(dur)
	if got.Completed != want.Completed || got.Failed != want.Failed || got.Cancelled != want.Cancelled ||
		got.TotalInput != want.TotalInput || got.TotalOutput != want.TotalOutput ||
		got.TotalOutputRetokenized != want.TotalOutputRetokenized {
		t.Fatalf("counts differ: fold %+v\ncompute %+v", got, want)
	}
	if got.RequestThroughput != want.RequestThroughput || got.OutputThroughput != want.OutputThroughput {
		t.Errorf("throughput: fold %v %v, compute %v %v", got.RequestThroughput, got.OutputThroughput, want.RequestThroughput, want.OutputThroughput)
	}
	for _, m := range []string{"ttft", "tpot", "itl", "e2el"} {
		g, w := got.ByName(m), want.ByName(m)
		if math.Abs(g.Mean-w.Mean) > 1e-9*w.Mean || math.Abs(g.Std-w.Std) > 1e-6*w.Std {
			t.Errorf("%s mean/std: fold %v/%v, exact %v/%v", m, g.Mean, g.Std, w.Mean, w.Std)
		}
		for _, p := range [][2]float64{{g.Median, w.Median}, {g.P90, w.P90}, {g.P99, w.P99}, {g.More[1], w.More[1]}} {
			if !within(p[0], p[1]) {
				t.Errorf("%s percentile: fold %v, exact %v (beyond %v)", m, p[0], p[1], SketchError)
			}
		}
	}
	if got.ITL.Max != want.ITL.Max {
		t.Errorf("ITL max: fold %v, exact %v", got.ITL.Max, want.ITL.Max)
	}
	gp, wp := f.Goodput(dur), ComputeGoodput(recs, slo, dur)
	if *gp != wp {
		t.Errorf("goodput: fold %+v, exact %+v", *gp, wp)
	}
	for u, w := range PerURL(recs, 2, dur) {
		g := f.PerURL(dur)[u]
		if g.Completed != w.Completed || g.Failed != w.Failed || g.OutputTokens != w.OutputTokens || !within(g.TTFT.P99, w.TTFT.P99) {
			t.Errorf("URL %d: fold %+v, exact %+v", u, g, w)
		}
	}
	sh := Shape{Duration: dur, Rate: 100, Slots: len(recs), LastSlot: recs[len(recs)-1].Intended}
	c := f.Check(ClientStats{}, sh, want.TotalOutput, 7)
	e := Check(recs, ClientStats{}, sh, want.TotalOutput)
	if c.OK != e.OK || c.Achieved != e.Achieved || c.Chunks != e.Chunks || c.KernelTimed != e.KernelTimed || c.MaxInflight != 7 {
		t.Errorf("check: fold %+v\nexact %+v", c, e)
	}
	if !within(c.Anchored.TTFT.P99, e.Anchored.TTFT.P99) || !within(c.Anchored.Lag.Median, e.Anchored.Lag.Median) {
		t.Errorf("anchored: fold %+v, exact %+v", *c.Anchored, *e.Anchored)
	}
	errs := f.Errors()
	if len(errs) != 1 || errs[0].Kind != record.KindHTTP5xx || errs[0].N != want.Failed {
		t.Errorf("errors = %+v, want one http_5xx ×%d", errs, want.Failed)
	}
}

// A Fold's memory does not grow with the records: the sketches have
// their bins after the first thousand records, and the rest add counts.
func TestFoldHoldsFixedMemory(t *testing.T) {
	f := NewFold(nil, Options{}, SLO{}, 1)
	recs := soakRecords(60000, 3)
	for i := range recs {
		recs[i].Start, recs[i].Intended = 0, 0 // one second's bucket: only the sketches could grow
	}
	span := func(d *Dist) int {
		st := d.sk.GetPositiveValueStore()
		lo, _ := st.MinIndex()
		hi, _ := st.MaxIndex()
		return hi - lo + 1
	}
	bins := func() int { return span(f.ttft) + span(f.itl) }
	for i := range 30000 {
		f.Add(&recs[i])
	}
	mid := bins()
	for i := 30000; i < len(recs); i++ {
		f.Add(&recs[i])
	}
	if end := bins(); end > mid+mid/10 {
		t.Errorf("sketch bins grew from %d to %d over the second half", mid, end)
	}
	if end := bins(); end > 2*sketchBins {
		t.Errorf("sketch bins %d exceed the bound %d", end, 2*sketchBins)
	}
}

func TestFoldBoundsErrorTexts(t *testing.T) {
	f := NewFold(nil, Options{}, SLO{}, 1)
	for i := range maxErrorTexts + 50 {
		r := record.Record{Sent: true, Error: "e" + string(rune('a'+i%26)) + string(rune(i)), ErrorKind: record.KindHTTP5xx}
		f.Add(&r)
	}
	errs := f.Errors()
	total := 0
	for _, e := range errs {
		total += e.N
	}
	if len(errs) != maxErrorTexts+1 || errs[len(errs)-1].Text != "" || total != maxErrorTexts+50 {
		t.Errorf("%d entries, last %+v, total %d; want %d texts then one by kind, total %d", len(errs), errs[len(errs)-1], total, maxErrorTexts, maxErrorTexts+50)
	}
}

// The per-turn figures of a fold are ComputePerTurn's: counts and means
// exact, percentiles within the sketch's error.
func TestFoldPerTurn(t *testing.T) {
	recs := soakRecords(6000, 11)
	for i := range recs {
		r := &recs[i]
		r.Round, r.Session, r.Turn = true, i/4, i%4
		r.PlannedDelay = 0.5
		r.Intended = r.Start - 0.001*float64(i%3)
		r.CachedTokens = 10 * r.Turn
	}
	f := NewFold(nil, Options{}, SLO{}, 1)
	for i := range recs {
		f.Add(&recs[i])
	}
	got, want := f.PerTurn(true), ComputePerTurn(recs, true)
	if len(got.Turns) != 4 || len(want.Turns) != 4 || got.Gaps != want.Gaps {
		t.Fatalf("fold %d turns %d gaps, exact %d turns %d gaps", len(got.Turns), got.Gaps, len(want.Turns), want.Gaps)
	}
	for k := range got.Turns {
		g, w := got.Turns[k], want.Turns[k]
		if g.Completed != w.Completed || g.Failed != w.Failed || g.InputTokens != w.InputTokens || g.CachedTokens != w.CachedTokens ||
			!within(g.TTFT.P99, w.TTFT.P99) || !within(g.E2E.Median, w.E2E.Median) {
			t.Errorf("turn %d: fold %+v, exact %+v", k, g, w)
		}
	}
	if !within(got.Lag.P99, want.Lag.P99) || !within(got.Between.Median, want.Between.Median) {
		t.Errorf("between/lag: fold %+v %+v, exact %+v %+v", got.Between, got.Lag, want.Between, want.Lag)
	}
}

// The per-session figures of a fold, given each session's records
// together, are ComputePerSession's.
func TestFoldPerSession(t *testing.T) {
	recs := soakRecords(6000, 13)
	for i := range recs {
		r := &recs[i]
		r.Round, r.Session, r.Turn, r.SessionTurns = true, i/5, i%5, 5
		r.PlannedDelay = 0.2
	}
	f := NewFold(nil, Options{}, SLO{}, 1)
	for s := 0; s < len(recs); s += 5 {
		for i := s; i < s+5; i++ {
			f.Add(&recs[i])
		}
		f.AddSession(recs[s : s+5])
	}
	got, want := f.PerSession(), ComputePerSession(recs)
	if got.Started != want.Started || got.Completed != want.Completed || got.Truncated != want.Truncated ||
		got.TurnsMean != want.TurnsMean || !slices.Equal(got.ByTurns, want.ByTurns) || got.Gaps != want.Gaps {
		t.Fatalf("fold %+v\nexact %+v", got, want)
	}
	if want.Completed == 0 || want.Truncated == 0 {
		t.Fatalf("the records should have both completed and truncated sessions: %+v", want)
	}
	if !within(got.Duration.P99, want.Duration.P99) || !within(got.ArrivalLag.Median, want.ArrivalLag.Median) || !within(got.Lag.P99, want.Lag.P99) {
		t.Errorf("fold %+v\nexact %+v", got, want)
	}
}
