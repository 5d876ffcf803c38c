package metrics

import (
	"math"
	"strings"
	"testing"
	"time"

	"benchserve/record"
)

func msec(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// Six requests against ttft:100 tpot:20 itl:50, a run of 2 s. By hand:
//
//	0: ttft 80 ms, latency 80+4×15 = 140 ms, 5 tokens, gaps 15 → tpot 15: good
//	1: ttft 120 ms → TTFT over: not good
//	2: ttft 50, 1 token, latency 50 → tpot 0 (vLLM): good
//	3: ttft 60, 3 tokens, gaps 10 and 60 → tpot (130−60)/2 = 35: over (and a 60 ms stall)
//	4: failed: not good, though its times are small
//	5: ttft 90, 3 tokens, gaps 18, 18: tpot 18: good
//
// Good: 0, 2, 5 → 3 of 6: attainment 0.5, goodput 1.5 req/s, tokens
// 5+1+3 = 9 → 4.5 tok/s.
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
	}
	slo, err := ParseGoodput([]string{"ttft:100", "tpot:20", "itl:50"})
	if err != nil {
		t.Fatal(err)
	}
	g := ComputeGoodput(recs, slo, 2)
	if g.Good != 3 || g.Total != 6 || g.Attainment != 0.5 || g.RequestGoodput != 1.5 || g.TokenGoodput != 4.5 {
		t.Errorf("got %+v, want 3 of 6, 0.5, 1.5 req/s, 4.5 tok/s", g)
	}
	// Request 3 fails on TPOT alone, and on its 60 ms gap alone.
	only := func(items ...string) SLO {
		s, err := ParseGoodput(items)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if only("tpot:40").Good(&recs[3]) != true || only("tpot:30").Good(&recs[3]) != false {
		t.Error("request 3: tpot 35 must pass 40 and fail 30")
	}
	if only("itl:60").Good(&recs[3]) != true || only("itl:59").Good(&recs[3]) != false {
		t.Error("request 3: its longest gap is 60 ms")
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
	if g := ComputeGoodput(recs, SLO{}, 0); g.Good != 5 || g.RequestGoodput != 0 {
		t.Errorf("no bounds: %+v", g)
	}
	if g := ComputeGoodput(nil, slo, 1); g.Attainment != 0 || g.Total != 0 {
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
	for p, want := range map[float64]string{99: "p99_ttft_ms", 99.9: "p99.9_ttft_ms", 50: "p50_ttft_ms", 0.1: "p0.1_ttft_ms", 99.99: "p99.99_ttft_ms"} {
		if got := PercentileKey(p, "ttft"); got != want {
			t.Errorf("PercentileKey(%v) = %s, want %s", p, got, want)
		}
	}
}

// Chosen percentiles by hand, NumPy-linear: over 10, 20, 30, 40 ms the
// virtual index of p is 3p/100: p50 → 1.5 → 25; p99.9 → 2.997 → 39.97;
// p0 → 10. ITL over gaps 1, 2, 3, 4, 5 ms (two requests): p50 → 3,
// p99.9 → index 3.996 → 4.996.
func TestChosenPercentiles(t *testing.T) {
	recs := []record.Record{
		{Success: true, TTFT: 0.010, Latency: 0.020, OutputLen: 2, Gaps: record.GapsOf(msec(1), msec(2))},
		{Success: true, TTFT: 0.020, Latency: 0.030, OutputLen: 2, Gaps: record.GapsOf(msec(3))},
		{Success: true, TTFT: 0.030, Latency: 0.040, OutputLen: 2, Gaps: record.GapsOf(msec(4), msec(5))},
		{Success: true, TTFT: 0.040, Latency: 0.050, OutputLen: 2},
		{Success: false, TTFT: 9},
	}
	s := Compute(recs, 1, nil, Options{Percentiles: []float64{50, 99.9, 0}})
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	ttft := s.Chosen["ttft"]
	if len(ttft) != 3 || !near(ttft[0], 25) || !near(ttft[1], 39.97) || !near(ttft[2], 10) {
		t.Errorf("ttft %v, want [25 39.97 10]", ttft)
	}
	itl := s.Chosen["itl"]
	if len(itl) != 3 || !near(itl[0], 3) || !near(itl[1], 4.996) || !near(itl[2], 1) {
		t.Errorf("itl %v, want [3 4.996 1]", itl)
	}
	// The reference's percentiles are the same computation.
	if e := s.Chosen["e2el"]; !near(e[0], s.E2E.Median) {
		t.Errorf("e2el p50 %v, median %v", e[0], s.E2E.Median)
	}
	if Compute(recs, 1, nil, Options{}).Chosen != nil {
		t.Error("Chosen without --metric-percentiles")
	}
	if z := Compute(nil, 1, nil, Options{Percentiles: []float64{50}}).Chosen["ttft"]; len(z) != 1 || z[0] != 0 {
		t.Errorf("no records: %v", z)
	}
}
