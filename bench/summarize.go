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
	sum := metrics.Compute(recs, e.Duration, p.Tok, metrics.Options{ChunkLens: spec.ChunkLens, AcceptLength: accept, CacheReport: cfg.CacheReport, Percentiles: g.pcts})
	rate := cfg.RequestRate
	if r := p.traffic.ramp; r != nil {
		rate = r.MeanRate(r.Over)
	}
	check := metrics.Check(recs, e.Client, metrics.Shape{
		Duration: e.Duration, Rate: rate, Closed: p.Closed(),
		Slots: len(p.Slots), LastSlot: p.Slots[len(p.Slots)-1].At.Seconds(),
	}, sum.TotalOutput)
	if p.cyclic {
		check.Planned = math.Inf(1)
	}
	run := runOf(cfg, spec, g, e.ServerInfo)
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
	ld := p.traffic.report(cfg)
	ld.NotSent, ld.RoundsNotSent = e.NotSentAtEnd, e.RoundsNotSent
	if r := p.traffic.ramp; r != nil {
		run.RateLabel = fmt.Sprintf("%s %s-%s", r.Strategy, fmtFloat(r.Start), fmtFloat(r.End))
	}
	res := &report.Result{
		Run: run, Summary: sum, Check: check, Records: recs, Start: e.Start, Version: version.String(), Load: ld,
		Server: e.Server, ServerNote: e.ServerNote, Provenance: e.Provenance,
	}
	if shown := p.shownURLs(); shown != nil {
		for i, f := range metrics.PerURL(recs, len(shown), e.Duration) {
			res.PerURL = append(res.PerURL, report.URLShare{URL: shown[i], URLFigures: f})
		}
	}
	res.PerTurn = metrics.ComputePerTurn(recs, cfg.CacheReport)
	res.PerSession = metrics.ComputePerSession(recs)
	if e.Cancelled == 0 { // the server counted the cut requests' tokens too
		p.warnServerTokens(e.Server, sum.TotalOutput)
	}
	if r := cfg.SteadyStateRatio; r != nil {
		st := metrics.ComputeSteady(recs, *r, p.Tok)
		res.Steady = &st
	}
	if e.Stopped {
		res.Stop = &report.Stop{NotSent: e.NotSent, Cancelled: e.Cancelled}
	}
	res.Gate(g.thresholds)
	return res
}
