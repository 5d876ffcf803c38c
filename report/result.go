package report

import (
	"fmt"
	"io"
	"strconv"
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
	// Load is how the run was driven beyond the reference's flags.
	Load Load
	// Thresholds are the --threshold outcomes (Gate sets them).
	Thresholds []Outcome
	// Server is the server's view of the run (its /metrics), nil when
	// not read; ServerNote says why. Provenance is what defines the
	// server and the client.
	Server     *metrics.ServerView
	ServerNote string
	Provenance *pyjson.Object
	// Shards are a merged run's shards (benchserve merge), nil otherwise;
	// PlannedRequests is how many requests its plan sends (0: not known).
	Shards          []Shard
	PlannedRequests int
	// Tail holds keys a caller adds after all others (a sweep's point).
	Tail *pyjson.Object
	// Steady is the steady state (--steady-state-concurrency-ratio), nil
	// when not asked for.
	Steady *metrics.Steady
	// PerURL is each server's share of a run of several --base-url (nil
	// with one).
	PerURL []URLShare
	// PerTurn is a multi-turn run's figures per turn index (nil for a
	// run without conversations).
	PerTurn *metrics.PerTurn
	// PerSession is its figures per conversation (nil likewise).
	PerSession *metrics.PerSession
	// Consistency is --consistency-probes' outcome (nil without it).
	Consistency *metrics.Consistency
	// Errors and Total replace Records' failures and count in a soak,
	// which keeps no records.
	Errors []metrics.ErrorCount
	Total  int
}

// total is how many requests the figures cover.
func (res *Result) total() int {
	if res.Records == nil && res.Total > 0 {
		return res.Total
	}
	return len(res.Records)
}

// errorCounts are the failures by kind and text, in first-seen order
// (one per failed record when the records are kept).
func (res *Result) errorCounts() []metrics.ErrorCount {
	if res.Records == nil {
		return res.Errors
	}
	return ErrorCounts(res.Records)
}

// ErrorCounts lists recs' failures, one entry per failed record, but for
// those cancelled on purpose.
func ErrorCounts(recs []record.Record) []metrics.ErrorCount {
	var out []metrics.ErrorCount
	for i := range recs {
		r := &recs[i]
		if r.Success || !r.Sent || r.Cancelled() {
			continue
		}
		kind := r.ErrorKind
		if kind == "" {
			kind = record.KindOther
		}
		out = append(out, metrics.ErrorCount{Kind: kind, Text: r.Error, N: 1})
	}
	return out
}

// Load is how a run was driven beyond the reference's flags: by time,
// on a ramp. The zero Load is a run of the reference's kind.
type Load struct {
	// Duration is --duration in seconds (0: a run by count); NotSent
	// counts the planned requests the end of the duration left unsent.
	Duration float64
	NotSent  int
	// RoundsNotSent counts the conversation rounds not sent because a
	// round before them failed.
	RoundsNotSent int
	// WarmupDuration is --warmup-duration in seconds.
	WarmupDuration float64
	// Ramp is the request-rate ramp ("" none): its strategy, start and
	// end rates and its length in seconds.
	Ramp                string
	RampStart, RampEnd  float64
	RampOver            float64
	ConcurrencyRampOver float64 // --concurrency-ramp-duration, seconds
	// SavedPlan is --save-plan's file ("": none); Replay the plan the run
	// sent (--replay-plan; nil: none).
	SavedPlan string
	Replay    *Replay
}

// Gate checks ts against the result's numeric keys and keeps the
// outcomes, which the console and the line then show.
func (res *Result) Gate(ts []Threshold) {
	if len(ts) == 0 {
		return
	}
	res.Thresholds = Evaluate(ts, res.Line())
}

// ThresholdKeys are the numeric keys a result like res writes, for
// checking --threshold expressions before the run: keys that may be null
// in some runs (accept_length, the schedule-anchored figures) count.
func ThresholdKeys(res Result) []string {
	zero, one := 0.0, 1
	res.Summary.AcceptLength = &zero
	res.Check.Anchored = &metrics.Anchored{}
	res.Run.MaxConcurrency, res.Run.SharegptOutputLen = &one, &one
	res.Thresholds = nil
	keys, _ := NumericKeys(res.Line())
	return keys
}

// Stop is what an interrupt left out of a run.
type Stop struct{ NotSent, Cancelled int }

// Print writes the console output after the run: the interrupt's note,
// the throughput charts (plot), the reference's block and our sections.
func (res *Result) Print(w io.Writer, plot bool) error {
	if st := res.Stop; st != nil {
		if _, err := fmt.Fprintf(w, "Interrupted: %d requests were not sent and %d were cancelled in flight; the figures below cover the %d that finished.\n",
			st.NotSent, st.Cancelled, res.total()); err != nil {
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
	if e := res.Run.Sketch; e > 0 {
		if _, err := fmt.Fprintf(w, "Soak: the percentiles above and below (median, P90-P99, --metric-percentiles, schedule lag) are from sketches, each within %g%% of the value at its rank; counts, totals, throughputs, means, std and maxima are exact. The per-token ITL, reasoning and steady-state figures need every record and are left out; for the steady state: benchserve report RESULT.jsonl --records RECORDS.jsonl --steady-state-concurrency-ratio R.\n", e*100); err != nil {
			return err
		}
	}
	if res.Steady != nil {
		if err := SteadyBlock(w, res.Steady); err != nil {
			return err
		}
	}
	titled, order := checkRows(&res.Check, res.Run.embedding())
	if top := commonErrors(res.errorCounts(), 3); len(top) > 0 {
		const title = "Most common errors"
		titled[title] = top
		order = append([]string{title}, order...)
	}
	if r := res.Run.Reasoning; r != nil {
		const title = "Reasoning and content"
		titled[title] = reasoningRows(r)
		order = append(order, title)
	}
	if pt := res.Run.PerToken; pt != nil {
		const title = "Per-token ITL"
		titled[title] = []Row{
			{"Requests with per-chunk counts:", strconv.Itoa(pt.Requests)},
			{"Mean ITL per token (ms):", F(pt.Stats.Mean)},
			{"Median ITL per token (ms):", F(pt.Stats.Median)},
			{"P99 ITL per token (ms):", F(pt.Stats.P99)},
		}
		order = append(order, title)
	}
	if res.Steady != nil {
		titled[steadyTitle] = steadyRows(res.Steady)
		order = append(order, steadyTitle)
	}
	if len(res.PerURL) > 0 {
		const title = "Per URL"
		titled[title] = perURLRows(res.PerURL)
		order = append(order, title)
	}
	if res.PerTurn != nil {
		titled[perTurnTitle] = perTurnRows(res.PerTurn)
		order = append(order, perTurnTitle)
	}
	if res.PerSession != nil {
		titled[perSessionTitle] = perSessionRows(res.PerSession)
		order = append(order, perSessionTitle)
	}
	if c := res.Consistency; c != nil {
		titled[consistencyTitle] = consistencyRows(c)
		order = append(order, consistencyTitle)
	}
	if res.Server != nil || res.ServerNote != "" {
		const title = "Server view"
		titled[title] = serverRows(res.Server, res.ServerNote, res.withProbes())
		order = append(order, title)
	}
	if rows := res.Load.rows(); len(rows) > 0 {
		const title = "Load"
		titled[title] = rows
		order = append(order, title)
	}
	if len(res.Thresholds) > 0 {
		const title = "Thresholds"
		titled[title] = thresholdRows(res.Thresholds)
		order = append(order, title)
	}
	return Section(w, titled, order)
}

// withProbes is the summary with the tokens of the consistency probes
// sent during the run, for the comparison with the server's counts.
func (res *Result) withProbes() metrics.Summary {
	s := res.Summary
	if c := res.Consistency; c != nil {
		s.TotalInput += c.LoadInput
		s.TotalOutput += c.LoadOutput
	}
	return s
}

// ServerComparedOutput is the output tokens the server's count is
// compared with: the run's and its probes'.
func (res *Result) ServerComparedOutput() int { return res.withProbes().TotalOutput }

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
	o := &pyjson.Object{}
	res.chosenKeys(o)
	if g := res.Run.Goodput; g != nil {
		goodputKeys(o, g, res.Run.GoodputSLO)
	}
	checkKeys(o, &res.Check, res.Summary.Failed, res.total())
	if e := res.Run.Sketch; e > 0 {
		o.Set("percentiles_from", pyjson.String("sketch"))
		o.Set("sketch_relative_error", pyjson.Float(e))
	}
	// Cancelled on purpose (--request-cancellation-rate): in neither
	// completed nor failed, nor in errors_by_kind.
	o.Set("cancelled_requests", pyjson.Int(res.Summary.Cancelled))
	o.Set("errors_by_kind", errorKinds(res.errorCounts()))
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
	res.Load.keys(o)
	if r := res.Run.Reasoning; r != nil {
		reasoningKeys(o, r)
	}
	if pt := res.Run.PerToken; pt != nil {
		setStats(o, "itl_per_token", pt.Stats, true)
		o.Set("itl_per_token_requests", pyjson.Int(pt.Requests))
	}
	if res.Steady != nil {
		steadyKeys(o, res.Steady)
	}
	if len(res.PerURL) > 0 {
		o.Set("per_url", perURLKey(res.PerURL))
	}
	if res.PerTurn != nil {
		o.Set("per_turn", perTurnKey(res.PerTurn))
	}
	if res.PerSession != nil {
		o.Set("per_session", perSessionKey(res.PerSession))
	}
	if c := res.Consistency; c != nil {
		consistencyKeys(o, c, res.Run.OutputDetails)
	}
	if res.Server != nil || res.ServerNote != "" {
		serverKeys(o, res.Server, res.ServerNote, res.withProbes())
	}
	if res.Provenance != nil {
		o.Set("provenance", res.Provenance.Bytes())
	}
	if len(res.Thresholds) > 0 {
		thresholdKeys(o, res.Thresholds)
	}
	if res.Shards != nil {
		shardKeys(o, res.Shards, len(res.Records), res.PlannedRequests)
	}
	if a := res.Summary.Audio; a != nil {
		audioKeys(o, a)
	}
	if res.Tail != nil {
		o.Update(res.Tail)
	}
	return o
}

// chosenKeys writes the --metric-percentiles keys of the chosen metrics
// that the reference's keys do not already hold, as vLLM names them:
// p99.9_ttft_ms, p50_itl_ms.
func (res *Result) chosenKeys(o *pyjson.Object) {
	for _, m := range res.Run.PercentileMetrics {
		vals := res.Summary.ByName(m).More
		for i, p := range res.Run.Percentiles {
			if i < len(vals) && (m == "e2el" || !inBlock(p)) {
				o.Set(metrics.PercentileKey(p, m), pyjson.Float(vals[i]))
			}
		}
	}
}

// goodputKeys are --goodput's figures: vLLM's request_goodput, ours
// after it, and the bounds they were measured against.
func goodputKeys(o *pyjson.Object, g *metrics.Goodput, slo metrics.SLO) {
	o.Set("request_goodput", pyjson.Float(g.RequestGoodput))
	o.Set("output_token_goodput", pyjson.Float(g.TokenGoodput))
	o.Set("slo_attainment", pyjson.Float(g.Attainment))
	o.Set("good_requests", pyjson.Int(g.Good))
	b := &pyjson.Object{}
	for _, kv := range []struct {
		k string
		v *float64
	}{{"ttft", slo.TTFT}, {"tpot", slo.TPOT}, {"itl", slo.ITL}, {"e2el", slo.E2E}} {
		if kv.v != nil {
			b.Set(kv.k, pyjson.Float(*kv.v))
		}
	}
	o.Set("goodput_slo_ms", b.Bytes())
}

// reasoningRows are the TTFO and the token split of chat-like replies.
func reasoningRows(r *metrics.Reasoning) []Row {
	return []Row{
		{"Mean TTFO (ms):", F(r.TTFO.Mean)},
		{"Median TTFO (ms):", F(r.TTFO.Median)},
		{"P99 TTFO (ms):", F(r.TTFO.P99)},
		{"Reasoning tokens:", strconv.Itoa(r.TotalReasoning)},
		{"Content tokens:", strconv.Itoa(r.TotalContent)},
		{"Requests with reasoning:", strconv.Itoa(r.WithReasoning)},
		{"Requests with no content:", strconv.Itoa(r.NoContent)},
	}
}

// reasoningKeys write the same: {mean,median,std,p90,p95,p99}_ttfo_ms
// and the counts.
func reasoningKeys(o *pyjson.Object, r *metrics.Reasoning) {
	setStats(o, "ttfo", r.TTFO, true)
	o.Set("total_reasoning_tokens", pyjson.Int(r.TotalReasoning))
	o.Set("total_content_tokens", pyjson.Int(r.TotalContent))
	o.Set("requests_with_reasoning", pyjson.Int(r.WithReasoning))
	o.Set("requests_without_content", pyjson.Int(r.NoContent))
}

// rows are the Load section's lines; none for a run of the reference's
// kind.
func (l Load) rows() []Row {
	var rows []Row
	if l.WarmupDuration > 0 {
		rows = append(rows, Row{"Warmup duration (s):", F(l.WarmupDuration)})
	}
	if l.Duration > 0 {
		rows = append(rows, Row{"Sending duration (s):", F(l.Duration)},
			Row{"Planned but not sent at its end:", strconv.Itoa(l.NotSent)})
	}
	if l.RoundsNotSent > 0 {
		rows = append(rows, Row{"Rounds not sent (a round before failed):", strconv.Itoa(l.RoundsNotSent)})
	}
	if l.Ramp != "" {
		rows = append(rows, Row{"Request rate ramp:", fmt.Sprintf("%s, %s to %s req/s over %s s", l.Ramp, F(l.RampStart), F(l.RampEnd), F(l.RampOver))})
	}
	if l.ConcurrencyRampOver > 0 {
		rows = append(rows, Row{"Concurrency ramp (s):", F(l.ConcurrencyRampOver)})
	}
	return append(rows, l.planRows()...)
}

// keys writes the same as JSONL keys.
func (l Load) keys(o *pyjson.Object) {
	if l.WarmupDuration > 0 {
		o.Set("warmup_duration_s", pyjson.Float(l.WarmupDuration))
	}
	if l.Duration > 0 {
		o.Set("run_mode", pyjson.String("duration"))
		o.Set("duration_limit_s", pyjson.Float(l.Duration))
		o.Set("not_sent_at_duration_end", pyjson.Int(l.NotSent))
	}
	if l.RoundsNotSent > 0 {
		o.Set("rounds_not_sent", pyjson.Int(l.RoundsNotSent))
	}
	if l.Ramp != "" {
		o.Set("ramp_up_strategy", pyjson.String(l.Ramp))
		o.Set("ramp_up_start_rps", pyjson.Float(l.RampStart))
		o.Set("ramp_up_end_rps", pyjson.Float(l.RampEnd))
		o.Set("ramp_up_duration_s", pyjson.Float(l.RampOver))
	}
	if l.ConcurrencyRampOver > 0 {
		o.Set("concurrency_ramp_duration_s", pyjson.Float(l.ConcurrencyRampOver))
	}
	l.planKeys(o)
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
func errorKinds(errs []metrics.ErrorCount) []byte {
	o := &pyjson.Object{}
	counts := map[string]int{}
	var order []string
	for _, e := range errs {
		if counts[e.Kind] == 0 {
			order = append(order, e.Kind)
		}
		counts[e.Kind] += e.N
	}
	for _, k := range order {
		o.Set(k, pyjson.Int(counts[k]))
	}
	return o.Bytes()
}
