package serverctl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"benchserve/metrics"
)

func mustParse(t *testing.T, text string) Scrape {
	t.Helper()
	fams, err := ParseMetrics([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return Scrape{Fams: fams}
}

// llm-d-inference-sim's real /metrics (shared/fixtures/wire) parses, with
// vLLM's colon names, and a run over it (the same text before and after)
// has no deltas; its gauges and histograms read as they are written.
func TestParseRealExposition(t *testing.T) {
	body, err := os.ReadFile("testdata/metrics/llm-d-inference-sim.txt")
	if err != nil {
		t.Fatal(err)
	}
	s := mustParse(t, string(body))
	if len(s.Fams) != 20 {
		t.Errorf("%d families, want the fixture's 20", len(s.Fams))
	}
	v := metrics.ServerSummary(Snapshots([]Scrape{s, s}), 0)
	g, ok := v.First("vllm:generation_tokens_total")
	if !ok || g.Kind != metrics.Counter || g.Delta != 0 {
		t.Errorf("generation tokens %+v", g)
	}
	e, ok := v.First("vllm:e2e_request_latency_seconds")
	if !ok || e.Kind != metrics.Histogram || e.Count != 0 {
		t.Errorf("e2e histogram %+v", e)
	}
	// Several series of one family are told apart by their labels.
	if _, ok := v.Get(`vllm:request_success_total{finish_reason="length",model_name="fake-model"}`); !ok {
		var keys []string
		for _, s := range v.Series {
			keys = append(keys, s.Key)
		}
		t.Errorf("no labelled key for request_success_total; keys: %v", keys)
	}
}

// Deltas by hand: a counter that went 100 → 130 → 5 (a restart) → 25
// counted 30 + 5 + 20 = 55 and is flagged, not 25 − 100 = −75; a gauge's
// mean, max and last; a histogram's delta, with its quantiles from the
// bucket deltas (Prometheus' interpolation).
func TestServerDeltas(t *testing.T) {
	scrape := func(c float64, g float64, b1, b2, b3 int) Scrape {
		return mustParse(t, strings.NewReplacer("C", ftoa(c), "G", ftoa(g), "B1", itoa(b1), "B2", itoa(b2), "B3", itoa(b3)).Replace(`# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{model_name="m"} C
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} G
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.1"} B1
vllm:time_to_first_token_seconds_bucket{le="0.2"} B2
vllm:time_to_first_token_seconds_bucket{le="+Inf"} B3
vllm:time_to_first_token_seconds_sum 1
vllm:time_to_first_token_seconds_count B3
`))
	}
	v := metrics.ServerSummary(Snapshots([]Scrape{scrape(100, 0, 10, 10, 10), scrape(130, 4, 10, 10, 10), scrape(5, 8, 10, 10, 10), scrape(25, 2, 20, 110, 110)}), 1)
	c, _ := v.Get("vllm:generation_tokens_total")
	if c.Delta != 55 || !c.Reset {
		t.Errorf("counter delta %v reset %v, want 55 and a reset", c.Delta, c.Reset)
	}
	g, _ := v.Get("vllm:num_requests_running")
	if g.Mean != 3.5 || g.Max != 8 || g.Last != 2 {
		t.Errorf("gauge %+v, want mean 3.5, max 8, last 2", g)
	}
	// The run added 100 observations: 10 up to 0.1 s, 90 in (0.1, 0.2].
	// p50: rank 50, in the second bucket, 40 of its 90: 0.1 + 0.1 × 40/90.
	h, _ := v.Get("vllm:time_to_first_token_seconds")
	if h.Count != 100 || math.Abs(h.P50-(0.1+0.1*40/90)) > 1e-12 || math.Abs(h.P99-(0.1+0.1*89/90)) > 1e-12 {
		t.Errorf("histogram %+v", h)
	}
	if v.Scrapes != 4 || v.Failed != 1 {
		t.Errorf("scrapes %d failed %d", v.Scrapes, v.Failed)
	}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
func itoa(i int) string     { return strconv.Itoa(i) }

// roundTrip is a server in memory: f answers each request.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func answer(code int, body string) *http.Response {
	return &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), Header: http.Header{},
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}
}

// A scrape that fails during the run is a warning, printed once, and the
// run's view keeps the reads that worked. In a synctest bubble, every
// 30 ms: the first read at 0, the interval reads at 30, 60 (both
// answered 503), 90 and 120, then Stop's at 140: 2 failed, 4 kept.
func TestScraperFailureIsAWarning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reads []time.Duration
		start := time.Now()
		c := &Server{Base: "http://server.test", HTTP: &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			reads = append(reads, time.Since(start))
			if k := len(reads); k != 2 && k != 3 {
				return answer(200, "# TYPE x counter\nx "+itoa(k)+"\n"), nil
			}
			return answer(503, "busy"), nil
		})}}
		var warn bytes.Buffer
		sc, why := c.StartScraper(context.Background(), c.Base+"/metrics", 30*time.Millisecond, &warn)
		if sc == nil {
			t.Fatal(why)
		}
		time.Sleep(140 * time.Millisecond)
		scrapes, failed := sc.Stop(context.Background())
		if failed != 2 || strings.Count(warn.String(), "warning") != 1 || !strings.Contains(warn.String(), "status 503") {
			t.Errorf("%d failed, warnings:\n%s", failed, warn.String())
		}
		ms := time.Millisecond
		if want := []time.Duration{0, 30 * ms, 60 * ms, 90 * ms, 120 * ms, 140 * ms}; !slices.Equal(reads, want) {
			t.Errorf("reads at %v, want %v", reads, want)
		}
		var kept []time.Duration
		for _, s := range scrapes {
			kept = append(kept, s.At.Sub(start))
		}
		if want := []time.Duration{0, 90 * ms, 120 * ms, 140 * ms}; !slices.Equal(kept, want) {
			t.Errorf("scrapes kept at %v, want %v", kept, want)
		}
		v := metrics.ServerSummary(Snapshots(scrapes), failed)
		if x, _ := v.Get("x"); x.Delta != 5 {
			t.Errorf("delta %v over reads 1 to 6", x.Delta)
		}
		// No /metrics: no scraper, and why.
		none := &Server{Base: c.Base, HTTP: &http.Client{Transport: roundTrip(func(*http.Request) (*http.Response, error) { return answer(404, ""), nil })}}
		if sc, why := none.StartScraper(context.Background(), none.Base+"/metrics", time.Second, &warn); sc != nil || !strings.Contains(why, "status 404") {
			t.Errorf("scraper %v, why %q", sc, why)
		}
	})
}

// /metrics behind a key (401, 403) is "protected", with what to do; a 404
// is "not exposed".
func TestScraperProtected(t *testing.T) {
	for _, code := range []int{401, 403} {
		srv := statusServer(t, code)
		c := &Server{Base: srv.URL, Auth: http.Header{}, HTTP: srv.Client()}
		sc, why := c.StartScraper(context.Background(), srv.URL+"/metrics", time.Second, io.Discard)
		want := fmt.Sprintf("protected: GET %s/metrics answered %d %s; set OPENAI_API_KEY or API_KEY to a key it accepts", srv.URL, code, http.StatusText(code))
		if sc != nil || !strings.HasPrefix(why, want) || !strings.Contains(why, "--server-metrics-url") {
			t.Errorf("%d: why %q", code, why)
		}
	}
	srv := statusServer(t, 404)
	c := &Server{Base: srv.URL, HTTP: srv.Client()}
	if _, why := c.StartScraper(context.Background(), srv.URL+"/metrics", time.Second, io.Discard); why != "not exposed: GET "+srv.URL+"/metrics: status 404" {
		t.Errorf("404: why %q", why)
	}
}

// Keep halves the interval reads by tick once there are more than asked
// for: the before and after reads stay, the rest stay evenly spaced, and
// two scrapers fed the same ticks keep the same ones.
func TestScraperKeepThinsByTick(t *testing.T) {
	s := &Scraper{}
	s.scrapes = append(s.scrapes, Scrape{Tick: 0})
	s.Keep(8)
	for k := 1; k <= 100; k++ {
		s.mu.Lock()
		s.scrapes = append(s.scrapes, Scrape{Tick: k})
		s.thin()
		s.mu.Unlock()
	}
	s.scrapes = append(s.scrapes, Scrape{Tick: AfterTick})
	var ticks []int
	for _, sc := range s.scrapes {
		ticks = append(ticks, sc.Tick)
	}
	// 100 reads into at most 8: every 16th (level 4), then the last.
	want := []int{0, 16, 32, 48, 64, 80, 96, AfterTick}
	if !slices.Equal(ticks, want) {
		t.Errorf("kept ticks %v, want %v", ticks, want)
	}
}

// A keep below the reads that always stay (before and after) is not
// met, and thinning stops instead of shifting past the word.
func TestScraperKeepBelowTheFixedReads(t *testing.T) {
	s := &Scraper{}
	s.scrapes = []Scrape{{Tick: 0}, {Tick: AfterTick}, {Tick: 4}}
	s.Keep(1)
	if len(s.scrapes) != 2 || s.level != 61 {
		t.Errorf("%d reads kept at level %d, want the 2 fixed ones at level 61", len(s.scrapes), s.level)
	}
}
