// Package livemetrics serves a run's own figures as Prometheus metrics
// while it lasts (--metrics-addr): latency histograms, request and token
// counters, requests in flight, the pacer's lag and goodput. It is the
// bench.Observer the command line hands a run; its registry is its own,
// never the process-wide default.
package livemetrics

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"benchserve/metrics"
	"benchserve/record"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server serves /metrics on its listener until Close.
type Server struct {
	ln    net.Listener
	http  *http.Server
	reg   *prometheus.Registry
	runID string

	mu  sync.Mutex
	set *series // nil until the first Begin
	lag lagWindow
	// now is the clock of the lag window (time.Now; tests set it).
	now func() time.Time
}

// Listen opens addr (HOST:PORT; port 0 picks a free one) and serves
// /metrics on it. Its error is the listener's: the address is taken, or
// not one of this machine's.
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := New()
	s.ln = ln
	mux := http.NewServeMux()
	mux.Handle("/metrics", s.Handler())
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.http.Serve(ln)
	return s, nil
}

// New is a Server with no listener: its Handler serves the metrics.
func New() *Server {
	return &Server{reg: prometheus.NewRegistry(), runID: newRunID(), now: time.Now}
}

// newRunID is 8 random hex digits: the run_id label, which tells apart
// the runs of one Prometheus series (two benchmarks of the same model).
func newRunID() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Handler serves the registry, in OpenMetrics when the scraper asks for
// it, else Prometheus' text format.
func (s *Server) Handler() http.Handler {
	return promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// URL is where the metrics are served.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/metrics" }

// RunID is the run_id label of every series.
func (s *Server) RunID() string { return s.runID }

// Close stops serving: a scrape under way gets a second to finish.
func (s *Server) Close() error {
	if s == nil || s.http == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.http.Close()
	}
	return err
}

// Begin labels the series with the run's backend and model, and creates
// them on the first call: a sweep's points add to the same series (one
// backend and model). With slo, goodput is counted too.
func (s *Server) Begin(backend, model string, slo *metrics.SLO) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == nil {
		labels := prometheus.Labels{"backend": backend, "model": model, "run_id": s.runID}
		s.set = newSeries(prometheus.WrapRegistererWith(labels, s.reg), s.maxLag)
	}
	if slo != nil && s.set.slo == nil {
		s.set.countGoodput(*slo)
	}
}

// Sending counts a request in flight.
func (s *Server) Sending() {
	if set := s.series(); set != nil {
		set.inFlight.Inc()
	}
}

// Ended takes a request's record once it is over.
func (s *Server) Ended(rec *record.Record) {
	if set := s.series(); set != nil {
		set.ended(rec)
	}
}

// Lag notes how late the pacer released a request.
func (s *Server) Lag(seconds float64) {
	s.mu.Lock()
	s.lag.add(s.now(), seconds)
	s.mu.Unlock()
}

func (s *Server) maxLag() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lag.worst(s.now())
}

func (s *Server) series() *series {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.set
}
