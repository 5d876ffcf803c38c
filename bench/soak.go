package bench

import (
	"sync/atomic"
	"time"

	"benchserve/metrics"
	"benchserve/record"
)

// SoakAfter is the --duration past which a run is a soak without --soak:
// an hour of requests held for exact percentiles is gigabytes.
const SoakAfter = 30 * time.Minute

// soakScrapes bounds the /metrics reads a soak keeps (halved in
// resolution past it): a parsed read of an engine's /metrics holds tens
// of KB, so 32 of them (the last hour at about 2-minute resolution)
// keep the memory flat.
const soakScrapes = 32

// checkSoak checks the soak's flags before any network call: what needs
// every record in memory cannot run in one.
func checkSoak(cfg *Config, ld traffic) error {
	if !ld.soak {
		return nil
	}
	why := "--soak"
	if !cfg.Soak {
		why = "--duration over 30 minutes, a soak"
	}
	switch {
	case cfg.OutputDetails:
		return usage("--output-details: %s keeps no per-request figures in memory; --record-file writes every request's", why)
	case cfg.SteadyStateRatio != nil:
		return usage("--steady-state-concurrency-ratio: %s keeps no records in memory; write them with --record-file and run benchserve report RESULT.jsonl --records RECORDS.jsonl --steady-state-concurrency-ratio R", why)
	}
	return nil
}

// soakTally counts what a soak's dispatcher retired without folding, as
// Execute's filters count them in a run that keeps its records.
type soakTally struct {
	records, notSent, cancelled, rounds atomic.Int64
	// inflight and peak: requests in flight now and at most (the records
	// that would give MaxInflight are not kept).
	inflight, peak atomic.Int64
}

// retire folds recs, a plan position's records whose requests are over,
// and lets them go: nothing of them stays but the fold's figures.
func (r *runner) retire(recs []record.Record) {
	if r.fold == nil {
		return
	}
	t := &r.soak
	kept := 0
	for i := range recs {
		rec := &recs[i]
		t.records.Add(1)
		switch {
		case !rec.Sent && rec.Error != "":
			t.rounds.Add(1)
		case !rec.Sent:
			t.notSent.Add(1)
		case rec.ErrorKind == record.KindInterrupted:
			t.cancelled.Add(1)
		default:
			r.fold.Add(rec)
			recs[kept] = *rec
			kept++
		}
	}
	// A conversation's records come together, when it has ended: its
	// session's figures too.
	if kept > 0 && recs[0].Round {
		r.fold.AddSession(recs[:kept])
	}
}

// sending and sent count a soak's requests in flight and their peak.
func (t *soakTally) sending() {
	n := t.inflight.Add(1)
	for {
		p := t.peak.Load()
		if n <= p || t.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (t *soakTally) sent() { t.inflight.Add(-1) }

// newFold is the soak's fold for plan p, nil when p is no soak.
func newFold(p *Plan) *metrics.Fold {
	if !p.traffic.soak {
		return nil
	}
	return metrics.NewFold(p.Tok, p.metricOptions(nil), p.gates.slo, len(p.Clients))
}
