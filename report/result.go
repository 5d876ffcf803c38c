package report

import (
	"fmt"
	"io"
	"time"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
	"benchserve/record"
)

// Result is everything a run's output shows: the reference's console
// block and result line, and our sections and keys after them.
type Result struct {
	// Run is the flags the reference echoes and the server's /server_info;
	// its Extra is filled in by Line.
	Run     Run
	Summary metrics.Summary
	Check   metrics.SelfCheck
	// Records are the run's, in dispatch order (those that finished, when
	// it was interrupted).
	Records []record.Record
	// Start is the benchmark's start on the wall clock; Version the
	// client's.
	Start   time.Time
	Version string
	// Stop is set when an interrupt ended the run.
	Stop *Stop
}

// Stop is what an interrupt left out of a run.
type Stop struct{ NotSent, Cancelled int }

// Print writes the console output after the run: the interrupt's note,
// the throughput charts (plot), the reference's block and our sections.
func (res *Result) Print(w io.Writer, plot bool) error {
	if st := res.Stop; st != nil {
		if _, err := fmt.Fprintf(w, "Interrupted: %d requests were not sent and %d were cancelled in flight; the figures below cover the %d that finished.\n",
			st.NotSent, st.Cancelled, len(res.Records)); err != nil {
			return err
		}
	}
	if plot {
		if err := Plot(w, res.Summary); err != nil {
			return err
		}
	}
	if err := Console(w, res.Run, res.Summary); err != nil {
		return err
	}
	titled, order := checkRows(&res.Check, res.Run.embedding())
	if top := commonErrors(res.Records, 3); len(top) > 0 {
		const title = "Most common errors"
		titled[title] = top
		order = append([]string{title}, order...)
	}
	return Section(w, titled, order)
}

// Line is the result line: the reference's keys, then ours.
func (res *Result) Line() []byte {
	run := res.Run
	run.Extra = res.extra()
	return Line(run, res.Summary, res.Records)
}

// extra is our keys, in the order they are written: the self-check's, the
// failures by kind, the start, the version, the per-request ids and send
// times (--output-details), the interrupt's counts.
func (res *Result) extra() *pyjson.Object {
	recs := res.Records
	o := checkKeys(&res.Check, res.Summary.Failed)
	o.Set("errors_by_kind", errorKinds(recs))
	// The run's start on the wall clock, to line records up with server
	// logs (each record's send time is an offset from it).
	o.Set("benchmark_start_unix", pyjson.Float(float64(res.Start.UnixNano())/1e9))
	o.Set("client_version", pyjson.String(res.Version))
	if res.Run.OutputDetails {
		ids := make([]string, len(recs))
		serverIDs := make([]string, len(recs))
		starts := make([]float64, len(recs))
		own := false
		for i := range recs {
			ids[i], serverIDs[i], starts[i] = recs[i].ID, recs[i].ServerID, recs[i].Start
			own = own || recs[i].ServerID != ""
		}
		o.Set("request_ids", pyjson.Strings(ids))
		if own {
			o.Set("server_request_ids", pyjson.Strings(serverIDs))
		}
		o.Set("send_times", floats(starts))
	}
	if st := res.Stop; st != nil {
		o.Set("interrupted", pyjson.Bool(true))
		o.Set("not_sent", pyjson.Int(st.NotSent))
		o.Set("cancelled_in_flight", pyjson.Int(st.Cancelled))
	}
	return o
}

func floats(v []float64) []byte {
	b := []byte{'['}
	for i, f := range v {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = pyjson.AppendFloat(b, f)
	}
	return append(b, ']')
}

// errorKinds counts the failed records by kind, as a JSON object in the
// order the kinds first appear.
func errorKinds(recs []record.Record) []byte {
	o := &pyjson.Object{}
	counts := map[string]int{}
	var order []string
	for i := range recs {
		if recs[i].Success {
			continue
		}
		k := recs[i].ErrorKind
		if k == "" {
			k = record.KindOther
		}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	for _, k := range order {
		o.Set(k, pyjson.Int(counts[k]))
	}
	return o.Bytes()
}
