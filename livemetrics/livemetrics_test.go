package livemetrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"benchserve/metrics"
	"benchserve/record"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads h's /metrics in the text format, as Prometheus would.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rw := httptest.NewRecorder()
	h.ServeHTTP(rw, httptest.NewRequest("GET", "/metrics", nil))
	if rw.Code != 200 {
		t.Fatalf("GET /metrics: %d %s", rw.Code, rw.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rw.Body)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, rw.Body)
	}
	return fams
}

// value is the counter or gauge of name whose labels include want.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no %s", name)
	}
next:
	for _, m := range f.Metric {
		for i := 0; i < len(want); i += 2 {
			if label(m, want[i]) != want[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		}
	}
	t.Fatalf("no %s%q", name, want)
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func withGaps(r record.Record, gaps ...time.Duration) record.Record {
	for _, g := range gaps {
		r.Gaps.Append(g)
	}
	return r
}

// Each record counts as the result counts it: latencies and tokens of the
// completed requests, failures by kind, the cancelled and the interrupted
// apart, goodput by the SLO; every series has the run's labels.
func TestSeriesCountAsTheResult(t *testing.T) {
	s := New()
	bound := 200.0 // ms
	s.Begin("vllm", "m/1", &metrics.SLO{TTFT: &bound})
	recs := []record.Record{
		withGaps(record.Record{Sent: true, Success: true, TTFT: 0.1, Latency: 0.5, InputLen: 10, OutputLen: 5}, 100*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond),
		{Sent: true, Success: true, TTFT: 0.3, Latency: 0.3, InputLen: 7, OutputLen: 1},
		{Sent: true, ErrorKind: record.KindHTTP5xx, Error: "500"},
		{Sent: true, ErrorKind: record.KindHTTP5xx, Error: "500"},
		{Sent: true, Error: "boom"},
		{Sent: true, ErrorKind: record.KindCancelled},
		{Sent: true, ErrorKind: record.KindInterrupted},
		{Sent: false},
	}
	for range recs {
		s.Sending()
	}
	s.Sending() // one still in flight
	for i := range recs {
		s.Ended(&recs[i])
	}
	f := scrape(t, s.Handler())
	for name, want := range map[string]float64{
		"benchserve_input_tokens_total":       17,
		"benchserve_output_tokens_total":      6,
		"benchserve_requests_in_flight":       1,
		"benchserve_good_requests_total":      1,
		"benchserve_good_output_tokens_total": 5,
	} {
		if got := value(t, f, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	for outcome, want := range map[string]float64{"completed": 2, "failed": 3, "cancelled": 1, "interrupted": 1} {
		if got := value(t, f, "benchserve_requests_total", "outcome", outcome); got != want {
			t.Errorf("requests{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
	for kind, want := range map[string]float64{"http_5xx": 2, "other": 1} {
		if got := value(t, f, "benchserve_request_errors_total", "kind", kind); got != want {
			t.Errorf("errors{kind=%q} = %v, want %v", kind, got, want)
		}
	}
	for name, want := range map[string]struct {
		n   uint64
		sum float64
	}{
		"benchserve_ttft_seconds": {2, 0.4},
		"benchserve_e2e_seconds":  {2, 0.8},
		"benchserve_tpot_seconds": {1, 0.1},
		"benchserve_itl_seconds":  {4, 0.4},
	} {
		h := f[name].Metric[0].Histogram
		if h.GetSampleCount() != want.n || abs(h.GetSampleSum()-want.sum) > 1e-9 {
			t.Errorf("%s: count %d sum %v, want %d and %v", name, h.GetSampleCount(), h.GetSampleSum(), want.n, want.sum)
		}
	}
	for name, fam := range f {
		for _, m := range fam.Metric {
			if label(m, "backend") != "vllm" || label(m, "model") != "m/1" || label(m, "run_id") != s.RunID() || len(s.RunID()) != 8 {
				t.Errorf("%s: labels %v", name, m.Label)
			}
		}
	}
}

func abs(x float64) float64 { return max(x, -x) }

// Before the run begins there is nothing to serve; a sweep's later points
// add to the first one's series, and goodput is only there with an SLO.
func TestSeriesLifetime(t *testing.T) {
	s := New()
	if f := scrape(t, s.Handler()); len(f) != 0 {
		t.Fatalf("before Begin: %v", f)
	}
	s.Sending() // not counted: no run yet
	s.Begin("sglang", "m", nil)
	rec := record.Record{Sent: true, Success: true, TTFT: 0.01, Latency: 0.02, OutputLen: 1}
	s.Sending()
	s.Ended(&rec)
	s.Begin("sglang", "m", nil)
	s.Sending()
	s.Ended(&rec)
	f := scrape(t, s.Handler())
	if got := value(t, f, "benchserve_requests_total", "outcome", "completed"); got != 2 {
		t.Errorf("completed over two points = %v", got)
	}
	if got := value(t, f, "benchserve_requests_in_flight"); got != 0 {
		t.Errorf("in flight = %v", got)
	}
	if f["benchserve_good_requests_total"] != nil {
		t.Error("goodput without --goodput")
	}
	for _, o := range Outcomes {
		value(t, f, "benchserve_requests_total", "outcome", o) // every outcome is there from the start
	}
}

// The lag gauge is the worst lag of the last 10 whole seconds.
func TestLagWindow(t *testing.T) {
	var w lagWindow
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	if got := w.worst(t0); got != 0 {
		t.Fatalf("empty: %v", got)
	}
	w.add(at(0.2), 0.5)
	w.add(at(0.9), 0.1)
	w.add(at(3), 0.2)
	for _, c := range []struct {
		now  float64
		want float64
	}{{0.5, 0.5}, {9.9, 0.5}, {10, 0.2}, {12.9, 0.2}, {13, 0}, {100, 0}} {
		if got := w.worst(at(c.now)); got != c.want {
			t.Errorf("at %v s: %v, want %v", c.now, got, c.want)
		}
	}
	// A slot reused ten seconds on forgets its old second.
	w.add(at(10.5), 0.05)
	if got := w.worst(at(10.6)); got != 0.2 {
		t.Errorf("after reuse: %v, want 0.2", got)
	}
	w.add(at(13.1), 0.01)
	if got := w.worst(at(13.2)); got != 0.05 {
		t.Errorf("after reuse: %v, want 0.05", got)
	}
}

// The gauge reads the server's clock; OpenMetrics is served when asked.
func TestLagGaugeAndOpenMetrics(t *testing.T) {
	s := New()
	now := time.Unix(2000, 0)
	s.now = func() time.Time { return now }
	s.Begin("vllm", "m", nil)
	s.Lag(0.25)
	if got := value(t, scrape(t, s.Handler()), "benchserve_send_lag_seconds"); got != 0.25 {
		t.Errorf("lag = %v", got)
	}
	now = now.Add(11 * time.Second)
	if got := value(t, scrape(t, s.Handler()), "benchserve_send_lag_seconds"); got != 0 {
		t.Errorf("lag 11 s on = %v", got)
	}
	rw := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	s.Handler().ServeHTTP(rw, req)
	if ct := rw.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") || !strings.HasSuffix(rw.Body.String(), "# EOF\n") {
		t.Errorf("OpenMetrics: %s\n%s", ct, rw.Body)
	}
}

// Listen serves on a free port and Close stops it; a taken address is
// the listener's error.
func TestListen(t *testing.T) {
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Begin("vllm", "m", nil)
	resp, err := http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET %s: %d", s.URL(), resp.StatusCode)
	}
	if _, err := Listen(strings.TrimSuffix(strings.TrimPrefix(s.URL(), "http://"), "/metrics")); err == nil {
		t.Error("a taken address: no error")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(s.URL()); err == nil {
		t.Error("served after Close")
	}
}
