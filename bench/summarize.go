package bench

import (
	"fmt"
	"math"

	"benchserve/internal/version"
	"benchserve/metrics"
	"benchserve/report"
	"benchserve/serverctl"
)

// Summarize turns an execution of p into its result: the reference's
// figures, the schedule-anchored ones, the client's self-check, goodput
// and the chosen percentiles, and the thresholds' outcomes, with
// everything the output echoes.
func Summarize(p *Plan, e *Execution) *report.Result {
	cfg, recs, g := p.Config, e.Records, p.gates
	spec := p.Client.Spec()
	var accept *float64
	if spec.SGLang {
		accept = serverctl.AcceptLength(e.ServerInfo)
	}
	rate := cfg.RequestRate
	if r := p.traffic.ramp; r != nil {
		rate = r.MeanRate(r.Over)
	}
	shape := metrics.Shape{
		Duration: e.Duration, Rate: rate, Closed: p.Closed(),
		Slots: len(p.Slots), LastSlot: p.Slots[len(p.Slots)-1].At.Seconds(),
	}
	run := runOf(cfg, spec, g, e.ServerInfo)
	if e.Fold != nil {
		return p.summarizeSoak(e, run, shape, accept)
	}
	sum := metrics.Compute(recs, e.Duration, p.Tok, p.metricOptions(accept))
	check := metrics.Check(recs, e.Client, shape, sum.TotalOutput)
	if p.cyclic {
		check.Planned = math.Inf(1)
	}
	if !g.slo.Empty() {
		gp := metrics.ComputeGoodput(recs, g.slo, e.Duration)
		run.Goodput = &gp
	}
	run.PerToken = metrics.ComputePerTokenITL(recs)
	if n := ignoredContinuousUsage(cfg, run.PerToken, recs); n != "" {
		fmt.Fprintln(p.Env.Stderr, n)
	}
	if spec.Chat {
		rs := metrics.ComputeReasoning(recs)
		run.Reasoning = &rs
		if rs.NoContent > 0 {
			fmt.Fprintf(p.Env.Stderr, "benchserve: warning: %d of %d successful requests ended with no content tokens (only reasoning): a thinking budget may use up the output limit\n", rs.NoContent, rs.Successful)
		}
	}
	res := p.result(e, run, sum, check)
	res.Records = recs
	if shown := p.shownURLs(); shown != nil {
		for i, f := range metrics.PerURL(recs, len(shown), e.Duration) {
			res.PerURL = append(res.PerURL, report.URLShare{URL: shown[i], URLFigures: f})
		}
	}
	res.PerTurn = metrics.ComputePerTurn(recs, cfg.CacheReport)
	res.PerSession = metrics.ComputePerSession(recs)
	if r := cfg.SteadyStateRatio; r != nil {
		st := metrics.ComputeSteady(recs, *r, p.Tok)
		res.Steady = &st
	}
	return p.finish(e, res)
}

// result is what a run's result holds whichever way its figures came.
func (p *Plan) result(e *Execution, run report.Run, sum metrics.Summary, check metrics.SelfCheck) *report.Result {
	ld := p.traffic.report(p.Config)
	ld.NotSent, ld.RoundsNotSent = e.NotSentAtEnd, e.RoundsNotSent
	p.planReport(&ld)
	if r := p.traffic.ramp; r != nil {
		run.RateLabel = fmt.Sprintf("%s %s-%s", r.Strategy, fmtFloat(r.Start), fmtFloat(r.End))
	}
	return &report.Result{
		Run: run, Summary: sum, Check: check, Start: e.Start, Version: version.String(), Load: ld,
		Server: e.Server, ServerNote: e.ServerNote, Provenance: e.Provenance, Consistency: e.Consistency,
	}
}

// finish adds the interrupt's counts and the thresholds' outcomes.
func (p *Plan) finish(e *Execution, res *report.Result) *report.Result {
	if e.Cancelled == 0 { // the server counted the cut requests' tokens too
		p.warnServerTokens(e.Server, res.ServerComparedOutput())
	}
	if e.Stopped {
		res.Stop = &report.Stop{NotSent: e.NotSent, Cancelled: e.Cancelled}
	}
	res.Gate(p.gates.thresholds)
	return res
}

// summarizeSoak is Summarize for a soak, from the fold: the same figures,
// percentiles within the sketch's error; what needs every record (per
// token, reasoning, the steady state) is left to benchserve report
// --records.
func (p *Plan) summarizeSoak(e *Execution, run report.Run, shape metrics.Shape, accept *float64) *report.Result {
	f := e.Fold
	sum := f.Summary(e.Duration)
	if accept != nil {
		a := *accept
		sum.AcceptLength = &a
	}
	check := f.Check(e.Client, shape, sum.TotalOutput, e.MaxInflight)
	if p.cyclic {
		check.Planned = math.Inf(1)
	}
	run.Goodput = f.Goodput(e.Duration)
	run.Sketch = metrics.SketchError
	res := p.result(e, run, sum, check)
	res.Errors, res.Total = f.Errors(), f.Records()
	res.PerTurn, res.PerSession = f.PerTurn(p.Config.CacheReport), f.PerSession()
	if shown := p.shownURLs(); shown != nil {
		for i, u := range f.PerURL(e.Duration) {
			res.PerURL = append(res.PerURL, report.URLShare{URL: shown[i], URLFigures: u})
		}
	}
	return p.finish(e, res)
}

// metricOptions are the figures' options for this plan; accept is the
// server's speculative accept length (nil: none).
func (p *Plan) metricOptions(accept *float64) metrics.Options {
	cfg, spec := p.Config, p.Client.Spec()
	return metrics.Options{ChunkLens: spec.ChunkLens, AcceptLength: accept, CacheReport: cfg.CacheReport, Percentiles: p.gates.pcts}
}
