package bench

import (
	"benchserve/internal/version"
	"benchserve/metrics"
	"benchserve/report"
	"benchserve/serverctl"
)

// Summarize turns an execution of p into its result: the reference's
// figures, the schedule-anchored ones and the client's self-check, with
// everything the output echoes.
func Summarize(p *Plan, e *Execution) *report.Result {
	cfg, recs := p.Config, e.Records
	spec := p.Client.Spec()
	var accept *float64
	if spec.SGLang {
		accept = serverctl.AcceptLength(e.ServerInfo)
	}
	sum := metrics.Compute(recs, e.Duration, p.Tok, metrics.Options{ChunkLens: spec.ChunkLens, AcceptLength: accept, CacheReport: cfg.CacheReport})
	check := metrics.Check(recs, e.Client, metrics.Shape{
		Duration: e.Duration, Rate: cfg.RequestRate, Closed: p.Closed(),
		Slots: len(p.Slots), LastSlot: p.Slots[len(p.Slots)-1].At.Seconds(),
	}, sum.TotalOutput)
	res := &report.Result{
		Run: report.Run{
			Backend:           cfg.Backend,
			Embedding:         spec.Embedding,
			DatasetName:       cfg.DatasetName,
			RequestRate:       cfg.RequestRate,
			Trace:             cfg.UseTraceTimestamps,
			MaxConcurrency:    cfg.MaxConcurrency,
			Tag:               cfg.Tag,
			SharegptOutputLen: cfg.SharegptOutputLen,
			RandomInputLen:    cfg.RandomInputLen,
			RandomOutputLen:   cfg.RandomOutputLen,
			RandomRangeRatio:  cfg.RandomRangeRatio,
			ServerInfo:        e.ServerInfo,
			CacheReport:       cfg.CacheReport,
			OutputDetails:     cfg.OutputDetails,
		},
		Summary: sum, Check: check, Records: recs, Start: e.Start, Version: version.String(),
	}
	if e.Stopped {
		res.Stop = &report.Stop{NotSent: e.NotSent, Cancelled: e.Cancelled}
	}
	return res
}
