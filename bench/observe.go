package bench

import (
	"benchserve/metrics"
	"benchserve/record"
)

// Observer watches a run's measured requests as they go (--metrics-addr):
// bench calls it and knows nothing of who serves what it is told (its
// methods take no type of bench's, so the server needs no import of it).
// The methods are called from the request goroutines at once and must
// not block.
type Observer interface {
	// Begin is called before each measured run starts (once per point of
	// a sweep); slo is --goodput's, nil without it.
	Begin(backend, model string, slo *metrics.SLO)
	// Sending: a request takes its slot and is handed to the client.
	Sending()
	// Ended: a request handed over is over and its record complete; a
	// record with Sent false never left (the run's gate had closed).
	Ended(*record.Record)
	// Lag is how late, in seconds, the pacer released a request.
	Lag(seconds float64)
}

// observing is the Observer of the measured run, nil when there is none
// or while the warmup runs.
func (r *runner) observing() Observer {
	if !r.measuring {
		return nil
	}
	return r.Env.Observer
}

// begin tells the Observer the measured run is starting.
func (r *runner) begin() {
	o := r.Env.Observer
	if o == nil {
		return
	}
	var slo *metrics.SLO
	if !r.gates.slo.Empty() {
		s := r.gates.slo
		slo = &s
	}
	o.Begin(r.Config.Backend, r.Model, slo)
}
