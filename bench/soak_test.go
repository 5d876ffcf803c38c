package bench

import (
	"context"
	"testing"
	"time"

	"benchserve/metrics"
)

// A soak keeps no record: dispatch hands back none, every request is in
// the fold, and those the end of the duration left unsent are counted as
// a run that keeps its records counts them. The peak in flight is the
// concurrency limit.
func TestSoakFoldsAndKeepsNoRecords(t *testing.T) {
	bubble(t, func(t *testing.T) {
		srv := &memServer{hold: 20 * time.Millisecond}
		r := memRunner(t, srv, 500, 8, every(500, time.Millisecond))
		r.fold = metrics.NewFold(nil, metrics.Options{}, metrics.SLO{}, 1)
		r.measuring = true
		start := time.Now()
		ph := phase{slots: r.Slots, check: &selfCheck{sketch: metrics.NewDist()}, until: start.Add(300 * time.Millisecond)}
		recs, _, unsent := r.dispatch(context.Background(), context.Background(), ph, start)
		if len(recs) != 0 {
			t.Fatalf("dispatch kept %d records in a soak", len(recs))
		}
		sent := len(srv.arrivals())
		folded := r.fold.Records()
		notSent := int(r.soak.notSent.Load())
		if sent < 100 || notSent+unsent == 0 {
			t.Fatalf("%d sent, %d+%d not: the duration should cut the plan after about 300 requests", sent, notSent, unsent)
		}
		if folded != sent || folded+notSent+unsent != 500 {
			t.Errorf("folded %d, server saw %d, not sent %d + %d unsent; want folded = seen and all 500 accounted for", folded, sent, notSent, unsent)
		}
		if s := r.fold.Summary(0.3); s.Completed != sent {
			t.Errorf("%d completed in the fold, %d sent", s.Completed, sent)
		}
		if p := r.soak.peak.Load(); p != 8 {
			t.Errorf("peak in flight %d, want the limit 8", p)
		}
		if n := r.soak.inflight.Load(); n != 0 {
			t.Errorf("%d still counted in flight after the run", n)
		}
	})
}

// What a soak cannot give is refused before any network call, naming
// the flag and why; a --duration past 30 minutes is a soak.
func TestCheckSoak(t *testing.T) {
	long, short := 1801.0, 600.0
	ratio := 0.9
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Soak: true, OutputDetails: true}, "--output-details: --soak keeps no per-request figures in memory; --record-file writes every request's"},
		{Config{Duration: &long, OutputDetails: true}, "--output-details: --duration over 30 minutes, a soak keeps no per-request figures in memory; --record-file writes every request's"},
		{Config{Soak: true, SteadyStateRatio: &ratio}, "--steady-state-concurrency-ratio: --soak keeps no records in memory; write them with --record-file and run benchserve report RESULT.jsonl --records RECORDS.jsonl --steady-state-concurrency-ratio R"},
		{Config{Duration: &short, OutputDetails: true}, ""},
		{Config{Soak: true}, ""},
	} {
		cfg := c.cfg
		ld, err := parseLoad(&cfg)
		if err == nil {
			err = checkSoak(&cfg, ld)
		}
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%+v: %q, want %q", c.cfg, got, c.want)
		}
	}
}
