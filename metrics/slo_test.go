package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"benchserve/record"
)

func msec(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// sameStats is a == b for Stats, which hold a slice (More).
func sameStats(a, b Stats) bool {
	return a.Mean == b.Mean && a.Median == b.Median && a.Std == b.Std && a.P90 == b.P90 &&
		a.P95 == b.P95 && a.P99 == b.P99 && a.Max == b.Max && slices.Equal(a.More, b.More)
}

// Eight requests against ttft:100 tpot:20 itl:50, a run of 2 s. By hand
// (latency = ttft + the gaps; tpot = (latency − ttft)/(tokens − 1) = the
// gaps' sum over tokens − 1):
//
//	0: ttft 80, 5 tokens, gaps 15×4 → latency 140, tpot 15, longest gap 15: good
//	1: ttft 120, 2 tokens, gap 10 → TTFT over: not good
//	2: ttft 50, 1 token, no gap → tpot 0 (vLLM), no gap to judge: good
//	3: ttft 60, 3 tokens, gaps 10, 60 → tpot 70/2 = 35 over (and a 60 ms stall): not good
//	4: failed: not good, though its times are small (its 2 tokens are not counted)
//	5: ttft 90, 3 tokens, gaps 18, 18 → tpot 18, longest 18: good
//	6: ttft 40, 5 tokens, gaps 2, 2, 2, 55 → tpot 61/4 = 15.25 within, but a
//	   55 ms stall over itl 50: not good (on ITL alone)
//	7: failed, nothing measured: not good
//
// Good: 0, 2, 5 → 3 of 8: attainment 0.375, goodput 3/2 = 1.5 req/s,
// tokens 5+1+3 = 9 → 4.5 tok/s. Without the itl bound request 6 is good
// too: 4 of 8, 2 req/s, 14 tokens → 7 tok/s.
func TestGoodputByHand(t *testing.T) {
	rec := func(ok bool, ttft float64, out int, gaps ...float64) record.Record {
		r := record.Record{Success: ok, TTFT: ttft / 1000, OutputLen: out, Latency: ttft / 1000}
		for _, g := range gaps {
			r.Gaps.Append(msec(g))
			r.Latency += g / 1000
		}
		return r
	}
	recs := []record.Record{
		rec(true, 80, 5, 15, 15, 15, 15),
		rec(true, 120, 2, 10),
		rec(true, 50, 1),
		rec(true, 60, 3, 10, 60),
		rec(false, 1, 2, 1),
		rec(true, 90, 3, 18, 18),
		rec(true, 40, 5, 2, 2, 2, 55),
		{},
	}
	only := func(items ...string) SLO {
		t.Helper()
		s, err := ParseGoodput(items)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	slo := only("ttft:100", "tpot:20", "itl:50")
	wantGood := []bool{true, false, true, false, false, true, false, false}
	for i := range recs {
		if got := slo.Good(&recs[i]); got != wantGood[i] {
			t.Errorf("request %d: Good = %v, want %v", i, got, wantGood[i])
		}
	}
	g := ComputeGoodput(recs, slo, 2)
	if want := (Goodput{Good: 3, Total: 8, RequestGoodput: 1.5, TokenGoodput: 4.5, Attainment: 0.375}); g != want {
		t.Errorf("got %+v, want %+v", g, want)
	}
	g = ComputeGoodput(recs, only("ttft:100", "tpot:20"), 2)
	if want := (Goodput{Good: 4, Total: 8, RequestGoodput: 2, TokenGoodput: 7, Attainment: 0.5}); g != want {
		t.Errorf("without itl: got %+v, want %+v", g, want)
	}
	// Request 3 fails on TPOT alone, and on its 60 ms gap alone.
	if only("tpot:40").Good(&recs[3]) != true || only("tpot:30").Good(&recs[3]) != false {
		t.Error("request 3: tpot 35 must pass 40 and fail 30")
	}
	if only("itl:60").Good(&recs[3]) != true || only("itl:59").Good(&recs[3]) != false {
		t.Error("request 3: its longest gap is 60 ms")
	}
	// Request 2 (one token) passes any tpot bound, even 0, and any itl bound.
	if !only("tpot:0", "itl:0").Good(&recs[2]) {
		t.Error("request 2: one token has tpot 0 and no gaps")
	}
	// A bound is inclusive (125 ms and 0.125 s are exact in binary).
	at := record.Record{Success: true, TTFT: 0.125, Latency: 0.125, OutputLen: 1}
	if !only("ttft:125").Good(&at) || only("ttft:124.999").Good(&at) {
		t.Error("ttft 125 ms against a bound of 125 must pass, of 124.999 fail")
	}
	if only("e2el:140.0001").Good(&recs[0]) != true || only("e2el:139.999").Good(&recs[0]) != false {
		t.Error("request 0: latency 140 ms")
	}
	// No bound: every success is good.
	if g := ComputeGoodput(recs, SLO{}, 0); g.Good != 6 || g.RequestGoodput != 0 || g.TokenGoodput != 0 {
		t.Errorf("no bounds: %+v", g)
	}
	if g := ComputeGoodput(nil, slo, 1); g != (Goodput{}) {
		t.Errorf("no records: %+v", g)
	}
}

func TestParseGoodput(t *testing.T) {
	s, err := ParseGoodput([]string{"ttft:50", "e2el:1000", "ttft:70"})
	if err != nil || *s.TTFT != 70 || *s.E2E != 1000 || s.TPOT != nil || s.ITL != nil || s.Empty() {
		t.Errorf("got %+v, %v", s, err)
	}
	for item, want := range map[string]string{
		"ttft=50":  `--goodput: "ttft=50": expected KEY:VALUE pairs`,
		"ttft:a":   `--goodput: "ttft:a": expected KEY:VALUE pairs`,
		"ttft:1:2": `--goodput: "ttft:1:2": expected KEY:VALUE pairs`,
		"foo:5":    `--goodput: unknown metric "foo" in "foo:5" (use ttft, tpot, itl or e2el)`,
		"ttft:-1":  `--goodput: "ttft:-1": the bound must be a number >= 0`,
		"ttft:inf": `--goodput: "ttft:inf": the bound must be a number >= 0`,
	} {
		_, err := ParseGoodput([]string{item})
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %s", item, err, want)
		}
	}
}

func TestParsePercentiles(t *testing.T) {
	names, ps, err := ParsePercentiles("", "")
	if err != nil || strings.Join(names, ",") != "ttft,tpot,itl" || len(ps) != 1 || ps[0] != 99 {
		t.Errorf("defaults: %v %v %v", names, ps, err)
	}
	names, ps, err = ParsePercentiles("e2el, ttft,e2el", "50,99.9,50")
	if err != nil || strings.Join(names, ",") != "e2el,ttft" || len(ps) != 2 || ps[1] != 99.9 {
		t.Errorf("got %v %v %v", names, ps, err)
	}
	if _, _, err := ParsePercentiles("ttft,lat", ""); err == nil || !strings.Contains(err.Error(), `--percentile-metrics: unknown metric "lat"`) {
		t.Errorf("bad metric: %v", err)
	}
	for _, p := range []string{"101", "-1", "x", "nan"} {
		if _, _, err := ParsePercentiles("", p); err == nil || !strings.HasPrefix(err.Error(), "--metric-percentiles: ") {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, c := range []struct {
		p          float64
		name, want string
	}{
		{99, "ttft", "p99_ttft_ms"},
		{99.9, "ttft", "p99.9_ttft_ms"},
		{50, "itl", "p50_itl_ms"},
		{0.1, "e2el", "p0.1_e2el_ms"},
		{99.99, "tpot", "p99.99_tpot_ms"},
		{0, "ttft", "p0_ttft_ms"},
		{100, "ttft", "p100_ttft_ms"},
		{12.5, "itl", "p12.5_itl_ms"},
	} {
		if got := PercentileKey(c.p, c.name); got != c.want {
			t.Errorf("PercentileKey(%v, %s) = %s, want %s", c.p, c.name, got, c.want)
		}
	}
}

// Chosen percentiles by hand, NumPy-linear (np.percentile: virtual index
// (n−1)·p/100, then a + (b−a)·fraction). Four successes with TTFT 10, 20,
// 30, 40 ms and 3 tokens each, latency ttft + 2·tpot for tpot 5, 10, 15,
// 20 ms, so E2E 20, 40, 60, 80 ms; index 3p/100:
//
//	p50 → 1.5:     TTFT 25, TPOT 12.5, E2E 50
//	p99.9 → 2.997: TTFT 30+0.997·10 = 39.97, TPOT 15+0.997·5 = 19.985, E2E 60+0.997·20 = 79.94
//	p0 → 0:        TTFT 10, TPOT 5, E2E 20
//	p25 → 0.75:    TTFT 17.5, TPOT 8.75, E2E 35
//
// ITL over the gaps 1, 2, 3, 4, 5 ms (three of the requests), index
// 4p/100: p50 → 2 → 3; p99.9 → 3.996 → 4.996; p0 → 1; p25 → 1 → 2. The
// failure's gap (9 s) and times are left out.
func TestChosenPercentiles(t *testing.T) {
	ps := []float64{50, 99.9, 0, 25}
	recs := []record.Record{
		{Success: true, TTFT: 0.010, Latency: 0.020, OutputLen: 3, Gaps: record.GapsOf(msec(1), msec(2))},
		{Success: true, TTFT: 0.020, Latency: 0.040, OutputLen: 3, Gaps: record.GapsOf(msec(3))},
		{Success: true, TTFT: 0.030, Latency: 0.060, OutputLen: 3, Gaps: record.GapsOf(msec(4), msec(5))},
		{Success: true, TTFT: 0.040, Latency: 0.080, OutputLen: 3},
		{Success: false, TTFT: 9, Latency: 9, OutputLen: 3, Gaps: record.GapsOf(9 * time.Second)},
	}
	s := Compute(recs, 1, nil, Options{Percentiles: ps})
	near := func(got, want []float64) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-9 {
				return false
			}
		}
		return true
	}
	for _, c := range []struct {
		name      string
		got, want []float64
	}{
		{"ttft", s.TTFT.More, []float64{25, 39.97, 10, 17.5}},
		{"tpot", s.TPOT.More, []float64{12.5, 19.985, 5, 8.75}},
		{"e2el", s.E2E.More, []float64{50, 79.94, 20, 35}},
		{"itl", s.ITL.More, []float64{3, 4.996, 1, 2}},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s: More = %v, want %v", c.name, c.got, c.want)
		}
		if by := s.ByName(c.name).More; !slices.Equal(by, c.got) {
			t.Errorf("%s: ByName = %v, More = %v", c.name, by, c.got)
		}
	}
	// Whole gaps are exact: 1, 2, 3, 4, 5 ms are whole nanoseconds.
	if s.ITL.More[0] != 3 || s.ITL.More[2] != 1 || s.ITL.More[3] != 2 {
		t.Errorf("itl p50, p0, p25 = %v, want 3, 1, 2 exactly", s.ITL.More)
	}
	// The reference's figures are the same computation: p50 of an even
	// count is the median, and More leaves them and Max as they were.
	if plain := Compute(recs, 1, nil, Options{}); !sameStats(s.ITL, Stats{Mean: plain.ITL.Mean, Median: plain.ITL.Median,
		Std: plain.ITL.Std, P90: plain.ITL.P90, P95: plain.ITL.P95, P99: plain.ITL.P99, Max: plain.ITL.Max, More: s.ITL.More}) ||
		plain.ITL.More != nil || plain.TTFT.More != nil || plain.TPOT.More != nil || plain.E2E.More != nil {
		t.Errorf("More changed the rest, or came without percentiles: %+v vs %+v", s.ITL, plain.ITL)
	}
	if s.E2E.Max != 0 || s.TTFT.Max != 0 || s.TPOT.Max != 0 || s.ITL.Max != 5 {
		t.Errorf("Max: E2E %v TTFT %v TPOT %v ITL %v, want 0 0 0 5", s.E2E.Max, s.TTFT.Max, s.TPOT.Max, s.ITL.Max)
	}
	// No values: zeros, one per percentile.
	z := Compute(nil, 1, nil, Options{Percentiles: ps})
	for _, st := range []Stats{z.E2E, z.TTFT, z.TPOT, z.ITL} {
		if !slices.Equal(st.More, []float64{0, 0, 0, 0}) {
			t.Errorf("no records: More = %v", st.More)
		}
	}
}

// The retokenized ITL (§5.1) gets the chosen percentiles of its own list.
// One request with chunks of 1, 2 and 1 words ending gaps of 10, 60 and 50
// ms: retokenized 10, 30, 30, 50 ms, index 3p/100: p50 → 1.5 → 30, p99.9 →
// 2.997 → 30+0.997·20 = 49.94, p0 → 10, p25 → 0.75 → 10+0.75·20 = 25. The
// plain gaps 10, 50, 60 (index 2p/100) give p50 50, p99.9 → 1.998 → 59.98,
// p0 10, p25 → 0.5 → 30.
func TestChosenPercentilesRetokenizedITL(t *testing.T) {
	ps := []float64{50, 99.9, 0, 25}
	chunks := []string{"a ", "b c ", "d"}
	r := record.Record{Success: true, TTFT: 0.1, Latency: 0.22, OutputLen: 5, Text: "hi " + strings.Join(chunks, ""),
		Gaps: record.GapsOf(msec(10), msec(60), msec(50))}
	for _, c := range chunks {
		r.ChunkLens = append(r.ChunkLens, int32(len(c)))
	}
	recs := []record.Record{r}
	near := func(got, want []float64) bool {
		for i := range want {
			if len(got) != len(want) || math.Abs(got[i]-want[i]) > 1e-9 {
				return false
			}
		}
		return true
	}
	s := Compute(recs, 1, words{}, Options{ChunkLens: true, AcceptLength: ptr(2), Percentiles: ps})
	if want := []float64{30, 49.94, 10, 25}; !near(s.ITL.More, want) {
		t.Errorf("retokenized: More = %v, want %v", s.ITL.More, want)
	}
	s = Compute(recs, 1, words{}, Options{ChunkLens: true, Percentiles: ps})
	if want := []float64{50, 59.98, 10, 30}; !near(s.ITL.More, want) {
		t.Errorf("plain: More = %v, want %v", s.ITL.More, want)
	}
}

// More at 90, 95 and 99 is bit for bit P90, P95 and P99, for every metric
// and for many gaps (the ranks selected by radix).
func TestChosenPercentilesMatchBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]record.Record, 300)
	for i := range recs {
		r := &recs[i]
		r.Success = i%7 != 3
		r.TTFT = rng.Float64()
		r.OutputLen = 1 + rng.IntN(40)
		r.Latency = r.TTFT
		for range r.OutputLen - 1 {
			d := time.Duration(rng.ExpFloat64() * 3e7)
			if rng.IntN(500) == 0 {
				d += 5 * time.Second // past the radix's 32 bits
			}
			r.Gaps.Append(d)
			r.Latency += d.Seconds()
		}
	}
	s := Compute(recs, 1, nil, Options{Percentiles: []float64{99, 90, 95}})
	for name, st := range map[string]Stats{"e2el": s.E2E, "ttft": s.TTFT, "tpot": s.TPOT, "itl": s.ITL} {
		if !slices.Equal(st.More, []float64{st.P99, st.P90, st.P95}) {
			t.Errorf("%s: More %v, P99 P90 P95 %v %v %v", name, st.More, st.P99, st.P90, st.P95)
		}
	}
}

// Per-token ITL by hand: gaps of 30 ms (3 tokens) and 20 ms (2 tokens)
// are 10, 10, 10, 10, 10 ms; a record without counts is left out.
func TestPerTokenITL(t *testing.T) {
	recs := []record.Record{
		{Success: true, Gaps: record.GapsOf(msec(30), msec(20)), ChunkTokens: []int32{3, 2}},
		{Success: true, Gaps: record.GapsOf(msec(99))},
		{Success: false, Gaps: record.GapsOf(msec(5)), ChunkTokens: []int32{1}},
	}
	pt := ComputePerTokenITL(recs)
	if pt == nil || pt.Requests != 1 || math.Abs(pt.Stats.Mean-10) > 1e-9 || math.Abs(pt.Stats.P99-10) > 1e-9 {
		t.Errorf("per-token ITL %+v", pt)
	}
	if ComputePerTokenITL(recs[1:2]) != nil {
		t.Error("per-token ITL without counts")
	}
	// Reasoning: TTFO over the replies with content, the no-content count.
	rs := ComputeReasoning([]record.Record{
		{Success: true, TTFO: 0.05, ReasoningTokens: 3, ContentTokens: 7},
		{Success: true, TTFO: 0, ReasoningTokens: 10, ContentTokens: 0},
		{Success: false, TTFO: 9},
	})
	if rs.NoContent != 1 || rs.WithReasoning != 2 || rs.TotalReasoning != 13 || rs.TotalContent != 7 || rs.TTFO.Mean != 50 {
		t.Errorf("reasoning %+v", rs)
	}
}
