package livemetrics

import (
	"benchserve/metrics"
	"benchserve/record"

	"github.com/prometheus/client_golang/prometheus"
)

// Bucket bounds in seconds, for LLM serving: a few milliseconds to minutes
// for TTFT, a millisecond to seconds between tokens, a tenth of a second
// to half an hour end to end. Each histogram is native too (factor 1.1:
// within about 5%) for a Prometheus that scrapes those.
var (
	ttftBuckets = []float64{0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 7.5, 10, 20, 40, 80, 160}
	itlBuckets  = []float64{0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 2.5, 5, 10}
	e2eBuckets  = []float64{0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 7.5, 10, 15, 20, 30, 45, 60, 90, 120, 240, 480, 960, 1920}
)

// Outcomes are the values of benchserve_requests_total's outcome label.
var Outcomes = []string{"completed", "failed", "cancelled", "interrupted"}

// series are a run's collectors.
type series struct {
	ttft, itl, tpot, e2e prometheus.Histogram
	requests, errors     *prometheus.CounterVec
	input, output        prometheus.Counter
	inFlight             prometheus.Gauge
	reg                  prometheus.Registerer

	// slo, once --goodput is given, judges each record; good and
	// goodTokens count those that met it.
	slo              *metrics.SLO
	good, goodTokens prometheus.Counter
}

func histogram(name, help string, buckets []float64) prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: name, Help: help, Buckets: buckets,
		NativeHistogramBucketFactor: 1.1, NativeHistogramMaxBucketNumber: 160,
	})
}

func newSeries(reg prometheus.Registerer, maxLag func() float64) *series {
	s := &series{
		reg:  reg,
		ttft: histogram("benchserve_ttft_seconds", "Time to first token of each completed request, seconds.", ttftBuckets),
		itl:  histogram("benchserve_itl_seconds", "Gaps between the content chunks of completed requests, seconds.", itlBuckets),
		tpot: histogram("benchserve_tpot_seconds", "Time per output token after the first, of each completed request with 2 or more, seconds.", itlBuckets),
		e2e:  histogram("benchserve_e2e_seconds", "End-to-end latency of each completed request, seconds.", e2eBuckets),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "benchserve_requests_total",
			Help: "Requests ended, by outcome: completed, failed, cancelled (on purpose, --request-cancellation-rate) or interrupted (cut by the interrupt)."}, []string{"outcome"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "benchserve_request_errors_total",
			Help: "Failed requests by error kind (the record file's error_kind)."}, []string{"kind"}),
		input: prometheus.NewCounter(prometheus.CounterOpts{Name: "benchserve_input_tokens_total",
			Help: "Input tokens of completed requests (the result's total_input_tokens)."}),
		output: prometheus.NewCounter(prometheus.CounterOpts{Name: "benchserve_output_tokens_total",
			Help: "Output tokens of completed requests (the result's total_output_tokens)."}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "benchserve_requests_in_flight",
			Help: "Requests sent whose reply has not ended."}),
	}
	lag := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "benchserve_send_lag_seconds",
		Help: "The longest lag of the pacer (how late it released a request it was free to send) over the last 10 seconds."}, maxLag)
	for _, c := range []prometheus.Collector{s.ttft, s.itl, s.tpot, s.e2e, s.requests, s.errors, s.input, s.output, s.inFlight, lag} {
		reg.MustRegister(c)
	}
	for _, o := range Outcomes {
		s.requests.WithLabelValues(o)
	}
	return s
}

// countGoodput adds the goodput counters, judged by slo.
func (s *series) countGoodput(slo metrics.SLO) {
	s.slo = &slo
	s.good = prometheus.NewCounter(prometheus.CounterOpts{Name: "benchserve_good_requests_total",
		Help: "Completed requests that met every --goodput bound (rate(): the result's request_goodput)."})
	s.goodTokens = prometheus.NewCounter(prometheus.CounterOpts{Name: "benchserve_good_output_tokens_total",
		Help: "Output tokens of the requests that met every --goodput bound."})
	s.reg.MustRegister(s.good, s.goodTokens)
}

// ended counts rec as the result counts it: latencies and tokens of the
// completed requests only, a failure's kind.
func (s *series) ended(rec *record.Record) {
	s.inFlight.Dec()
	if !rec.Sent {
		return
	}
	switch {
	case rec.Success:
		s.requests.WithLabelValues("completed").Inc()
	case rec.ErrorKind == record.KindInterrupted:
		s.requests.WithLabelValues("interrupted").Inc()
		return
	case rec.Cancelled():
		s.requests.WithLabelValues("cancelled").Inc()
		return
	default:
		s.requests.WithLabelValues("failed").Inc()
		kind := rec.ErrorKind
		if kind == "" {
			kind = record.KindOther
		}
		s.errors.WithLabelValues(kind).Inc()
		return
	}
	s.input.Add(float64(rec.InputLen))
	s.output.Add(float64(rec.OutputLen))
	s.ttft.Observe(rec.TTFT)
	s.e2e.Observe(rec.Latency)
	if rec.OutputLen > 1 {
		s.tpot.Observe((rec.Latency - rec.TTFT) / float64(rec.OutputLen-1))
	}
	for _, d := range rec.Gaps.All() {
		s.itl.Observe(d.Seconds())
	}
	if s.slo != nil && s.slo.Good(rec) {
		s.good.Inc()
		s.goodTokens.Add(float64(rec.OutputLen))
	}
}
