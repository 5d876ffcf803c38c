package metrics

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"benchserve/record"
)

// words counts whitespace-separated words, standing in for a tokenizer.
type words struct{}

func (words) Count(text string) int { return len(strings.Fields(text)) }

var _ TokenCounter = words{}

func ptr(v float64) *float64 { return &v }

// gaps holds the gaps secs, given in seconds, to the nanosecond.
func gaps(secs ...float64) record.Gaps {
	var g record.Gaps
	for _, x := range secs {
		g.Append(time.Duration(math.Round(x * 1e9)))
	}
	return g
}

func TestComputeTotalsAndFailures(t *testing.T) {
	recs := []record.Record{
		{Success: true, Start: 0, Latency: 1.5, TTFT: 0.5, Gaps: gaps(0.25, 0.75),
			Text: "one two three", InputLen: 10, InputTextLen: 8, InputVisionLen: 2, OutputLen: 3},
		// A failure: its figures must count nowhere.
		{Success: false, Start: 0, Latency: 9, TTFT: 9, Gaps: gaps(9),
			Text: "x y", InputLen: 100, InputTextLen: 100, OutputLen: 50, Error: "500 Internal Server Error: boom"},
		// One output token: no TPOT. TTFT 0 (e.g. embeddings) still counts.
		{Success: true, Start: 0.5, Latency: 0.5, TTFT: 0, Text: "four",
			InputLen: 20, InputTextLen: 20, OutputLen: 1},
		// Zero output tokens: no TPOT either.
		{Success: true, Start: 1, Latency: 0.25, TTFT: 0.25, InputLen: 5, InputTextLen: 5},
	}
	const dur = 4.0
	s := Compute(recs, dur, words{}, Options{})

	if s.Completed != 3 || s.Failed != 1 {
		t.Errorf("completed, failed = %d, %d; want 3, 1", s.Completed, s.Failed)
	}
	if want := []int{3, 0, 1, 0}; !slices.Equal(s.OutputLens, want) {
		t.Errorf("OutputLens = %v, want %v", s.OutputLens, want)
	}
	if s.TotalInput != 35 || s.TotalInputText != 33 || s.TotalInputVision != 2 {
		t.Errorf("input totals = %d, %d, %d; want 35, 33, 2", s.TotalInput, s.TotalInputText, s.TotalInputVision)
	}
	if s.TotalOutput != 4 || s.TotalOutputRetokenized != 4 {
		t.Errorf("output totals = %d, %d; want 4, 4", s.TotalOutput, s.TotalOutputRetokenized)
	}
	if s.RequestThroughput != 3/dur || s.InputThroughput != 35/dur || s.OutputThroughput != 4/dur ||
		s.OutputThroughputRetokenized != 4/dur || s.TotalThroughput != 39/dur || s.TotalThroughputRetokenized != 39/dur {
		t.Errorf("throughputs = %v %v %v %v %v %v", s.RequestThroughput, s.InputThroughput, s.OutputThroughput,
			s.OutputThroughputRetokenized, s.TotalThroughput, s.TotalThroughputRetokenized)
	}
	if want := (1.5 + 0.5 + 0.25) / dur; s.Concurrency != want {
		t.Errorf("Concurrency = %v, want %v", s.Concurrency, want)
	}
	// TPOT only from the first record: (1.5-0.5)/(3-1) = 0.5 s.
	if want := (Stats{Mean: 500, Median: 500, P90: 500, P95: 500, P99: 500}); !sameStats(s.TPOT, want) {
		t.Errorf("TPOT = %+v, want %+v", s.TPOT, want)
	}
	wantTTFT := Describe([]float64{0.5, 0, 0.25})
	wantTTFT.Max = 0 // the reference has a max for ITL only
	if !sameStats(s.TTFT, wantTTFT) {
		t.Errorf("TTFT = %+v, want %+v", s.TTFT, wantTTFT)
	}
	if s.TTFT.Median != 250 {
		t.Errorf("TTFT median = %v, want 250", s.TTFT.Median)
	}
	wantE2E := Describe([]float64{1.5, 0.5, 0.25})
	wantE2E.Max = 0
	if !sameStats(s.E2E, wantE2E) {
		t.Errorf("E2E = %+v, want %+v", s.E2E, wantE2E)
	}
	if want := Describe([]float64{0.25, 0.75}); !sameStats(s.ITL, want) || s.ITL.Max != 750 {
		t.Errorf("ITL = %+v, want %+v", s.ITL, want)
	}
	if s.Duration != dur || s.Cache != nil || s.AcceptLength != nil {
		t.Errorf("Duration, Cache, AcceptLength = %v, %v, %v", s.Duration, s.Cache, s.AcceptLength)
	}
}

func TestComputeNoSuccess(t *testing.T) {
	recs := []record.Record{
		{Success: false, Start: 1, Latency: 2, OutputLen: 7, Error: "timeout"},
		{Success: false, Start: 2, Latency: 1, OutputLen: 7, Error: "timeout"},
	}
	s := Compute(recs, 3, words{}, Options{CacheReport: true})
	if s.Completed != 0 || s.Failed != 2 || !slices.Equal(s.OutputLens, []int{0, 0}) {
		t.Errorf("completed, failed, lens = %d, %d, %v", s.Completed, s.Failed, s.OutputLens)
	}
	if !sameStats(s.E2E, Stats{}) || !sameStats(s.TTFT, Stats{}) || !sameStats(s.TPOT, Stats{}) || !sameStats(s.ITL, Stats{}) {
		t.Errorf("stats not zero: %+v", s)
	}
	if s.Concurrency != 0 || s.MaxOutputTokensPerS != 0 || s.MaxConcurrentRequests != 0 || s.RequestThroughput != 0 {
		t.Errorf("rates not zero: %+v", s)
	}
	if s.Cache == nil || *s.Cache != (CacheReport{}) {
		t.Errorf("Cache = %+v, want zero report", s.Cache)
	}
	if s := Compute(nil, 1, words{}, Options{}); s.Completed != 0 || len(s.OutputLens) != 0 {
		t.Errorf("Compute(nil) = %+v", s)
	}
}

func TestComputeZeroDuration(t *testing.T) {
	recs := []record.Record{{Success: true, Latency: 1, TTFT: 0.5, OutputLen: 2, InputLen: 3}}
	s := Compute(recs, 0, words{}, Options{})
	if s.RequestThroughput != 0 || s.InputThroughput != 0 || s.TotalThroughput != 0 || s.Concurrency != 0 {
		t.Errorf("rates with dur 0 = %+v", s)
	}
	if s.E2E.Mean != 1000 {
		t.Errorf("E2E mean = %v, want 1000", s.E2E.Mean)
	}
}

func TestComputeNilTokenizer(t *testing.T) {
	recs := []record.Record{{Success: true, Latency: 1, Text: "a b c", OutputLen: 3, Gaps: gaps(0.5),
		ChunkLens: []int32{2}}}
	s := Compute(recs, 1, nil, Options{ChunkLens: true, AcceptLength: ptr(2)})
	if s.TotalOutputRetokenized != 0 || s.ITL.Mean != 500 {
		t.Errorf("retokenized, ITL mean = %d, %v; want 0, 500", s.TotalOutputRetokenized, s.ITL.Mean)
	}
}

// specRecord has a first chunk "hi " (TTFT), then chunks of 2, 3, 0 and 1
// words that ended gaps of 0.2, 0.3, 0.05 and 0.1 s.
func specRecord() record.Record {
	chunks := []string{"a b ", "c d e ", " ", "f"}
	r := record.Record{Success: true, Start: 0, TTFT: 0.1, Latency: 1, OutputLen: 7,
		Text: "hi " + strings.Join(chunks, ""), Gaps: gaps(0.2, 0.3, 0.05, 0.1)}
	for _, c := range chunks {
		r.ChunkLens = append(r.ChunkLens, int32(len(c)))
	}
	return r
}

func TestRetokenizedITL(t *testing.T) {
	// Gap k is spread over the n tokens of chunk k: 0.2/2 twice, 0.3/3
	// three times, the empty chunk skipped, 0.1/1 once.
	g1, g2, g4 := 0.2, 0.3, 0.1
	want := []float64{g1 / 2, g1 / 2, g2 / 3, g2 / 3, g2 / 3, g4}
	s := Compute([]record.Record{specRecord()}, 1, words{}, Options{ChunkLens: true, AcceptLength: ptr(2.5)})
	if w := Describe(want); !sameStats(s.ITL, w) {
		t.Errorf("ITL = %+v, want %+v", s.ITL, w)
	}
	if s.AcceptLength == nil || *s.AcceptLength != 2.5 {
		t.Errorf("AcceptLength = %v", s.AcceptLength)
	}
	// Not retokenized: a backend without chunk lengths, no accept length,
	// or zero.
	plain := Describe(specRecord().Gaps.Seconds())
	for _, opt := range []Options{
		{AcceptLength: ptr(2.5)},
		{ChunkLens: true},
		{ChunkLens: true, AcceptLength: ptr(0)},
	} {
		if s := Compute([]record.Record{specRecord()}, 1, words{}, opt); !sameStats(s.ITL, plain) {
			t.Errorf("%+v: ITL = %+v, want plain %+v", opt, s.ITL, plain)
		}
	}
	// Chunk lengths that do not fit keep the plain gaps rather than panic.
	bad := specRecord()
	bad.ChunkLens[0] = 1000
	if s := Compute([]record.Record{bad}, 1, words{}, Options{ChunkLens: true, AcceptLength: ptr(2)}); !sameStats(s.ITL, plain) {
		t.Errorf("oversized chunks: ITL = %+v, want plain %+v", s.ITL, plain)
	}
}

func TestRetokenizedITLKeepsPeaksOnRawGaps(t *testing.T) {
	// The peaks use the received gaps: 5 token times, all in bucket 0,
	// whatever the retokenized ITL list holds.
	s := Compute([]record.Record{specRecord()}, 1, words{}, Options{ChunkLens: true, AcceptLength: ptr(2)})
	if s.MaxOutputTokensPerS != 5 {
		t.Errorf("MaxOutputTokensPerS = %v, want 5", s.MaxOutputTokensPerS)
	}
}

func TestPeaks(t *testing.T) {
	recs := []record.Record{
		// Tokens at 10.5, 11.0, 11.25, 12.0 -> buckets 0, 1, 1, 2 (t0 = 10).
		// Runs 10..12 -> concurrency buckets 0, 1, 2 (the end bucket counts).
		{Success: true, Start: 10, TTFT: 0.5, Gaps: gaps(0.5, 0.25, 0.75), Latency: 2},
		// Tokens at 11.25, 11.5, 12.0 -> buckets 1, 1, 2; runs 11..12 -> 1, 2.
		{Success: true, Start: 11, TTFT: 0.25, Gaps: gaps(0.25, 0.5), Latency: 1},
		// Tokens at 10.0 (bucket 0) and 15.0 (bucket 5, out of range:
		// B = ceil(12-10)+1 = 3); runs 10..10.5 -> bucket 0.
		{Success: true, Start: 10, TTFT: 0, Gaps: gaps(5), Latency: 0.5},
		// A failure would add tokens and concurrency everywhere.
		{Success: false, Start: 9, TTFT: 0.5, Gaps: gaps(0.1, 0.1, 0.1, 0.1, 0.1, 0.1), Latency: 9},
	}
	// Tokens per bucket: [2, 4, 2]; concurrency per bucket: [2, 2, 2].
	s := Compute(recs, 3, words{}, Options{})
	if s.MaxOutputTokensPerS != 4 || s.MaxConcurrentRequests != 2 {
		t.Errorf("peaks = %v tok/s, %d requests; want 4, 2", s.MaxOutputTokensPerS, s.MaxConcurrentRequests)
	}
}

func TestPeakConcurrencyBuckets(t *testing.T) {
	// Three requests overlap only in bucket 1 (t0 = 0): [0, 1.0] covers
	// buckets 0 and 1, [1.5, 2.5] buckets 1 and 2, [1.9, 1.95] bucket 1.
	recs := []record.Record{
		{Success: true, Start: 0, Latency: 1},
		{Success: true, Start: 1.5, Latency: 1},
		{Success: true, Start: 1.9, Latency: 0.05},
	}
	s := Compute(recs, 3, words{}, Options{})
	if s.MaxConcurrentRequests != 3 {
		t.Errorf("MaxConcurrentRequests = %d, want 3", s.MaxConcurrentRequests)
	}
	// Each request has one token (start+ttft) in buckets 0, 1, 1.
	if s.MaxOutputTokensPerS != 2 {
		t.Errorf("MaxOutputTokensPerS = %v, want 2", s.MaxOutputTokensPerS)
	}
	// Moving the first request's end to 0.99 leaves bucket 1 to two of them.
	recs[0].Latency = 0.99
	if s := Compute(recs, 3, words{}, Options{}); s.MaxConcurrentRequests != 2 {
		t.Errorf("after shortening: MaxConcurrentRequests = %d, want 2", s.MaxConcurrentRequests)
	}
}

func TestCacheReport(t *testing.T) {
	recs := []record.Record{
		{Success: true, PromptLen: 100, CachedTokens: 60,
			CacheDetails: &record.CacheDetails{Device: 40, Host: 10, Storage: 10, StorageBackend: "hf3fs"}},
		{Success: true, PromptLen: 100, CachedTokens: 20,
			CacheDetails: &record.CacheDetails{Device: 20, StorageBackend: "ignored: no storage hits"}},
		{Success: true, PromptLen: 50, CachedTokens: 30,
			CacheDetails: &record.CacheDetails{Host: 25, Storage: 5, StorageBackend: "mooncake"}},
		{Success: true, PromptLen: 50}, // no details
		{Success: false, PromptLen: 1000, CachedTokens: 1000,
			CacheDetails: &record.CacheDetails{Device: 1000, Storage: 7, StorageBackend: "failed"}},
	}
	s := Compute(recs, 1, words{}, Options{CacheReport: true})
	want := CacheReport{TotalPromptTokens: 300, TotalCached: 110, HitRatePct: float64(110) / 300 * 100,
		HasDetails: true, Device: 60, Host: 35, Storage: 15, StorageBackend: "mooncake"}
	if s.Cache == nil || *s.Cache != want {
		t.Errorf("Cache = %+v, want %+v", s.Cache, want)
	}

	// Without details anywhere, and without prompt tokens.
	s = Compute([]record.Record{{Success: true, CachedTokens: 0}}, 1, words{}, Options{CacheReport: true})
	if s.Cache == nil || *s.Cache != (CacheReport{}) {
		t.Errorf("Cache = %+v, want zero report", s.Cache)
	}
	if s := Compute(recs, 1, words{}, Options{}); s.Cache != nil {
		t.Errorf("Cache without --cache-report = %+v, want nil", s.Cache)
	}
}

func TestComputeCopiesAcceptLength(t *testing.T) {
	a := 3.0
	s := Compute(nil, 1, words{}, Options{AcceptLength: &a})
	a = 4
	if s.AcceptLength == nil || *s.AcceptLength != 3 {
		t.Errorf("AcceptLength = %v, want 3", s.AcceptLength)
	}
}

// quarter is a cheap token counter for the benchmark: 4 bytes a token.
type quarter struct{}

func (quarter) Count(text string) int { return len(text) / 4 }

func BenchmarkCompute(b *testing.B) {
	const nrec, nitl = 10_000, 256
	text := strings.Repeat("word ", nitl)
	recs := make([]record.Record, nrec)
	for i := range recs {
		var itl record.Gaps
		for k := range nitl {
			itl.Append(10*time.Millisecond + time.Duration((i*7+k*13)%97)*100*time.Microsecond)
		}
		recs[i] = record.Record{Seq: i, Success: i%50 != 0, Start: float64(i) * 0.01, TTFT: 0.2,
			Latency: 0.2 + 2.56, Gaps: itl, Text: text, InputLen: 512, OutputLen: nitl + 1}
	}
	b.ReportAllocs()
	for b.Loop() {
		Compute(recs, 120, quarter{}, Options{})
	}
}
