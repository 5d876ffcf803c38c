package bench

import "time"

// Load is what a sweep changes between the points of one prepared plan.
type Load struct {
	Rate           float64 // --request-rate (+Inf for a burst)
	MaxConcurrency *int    // --max-concurrency (nil: none)
	// Warmup keeps the plan's warmup; a sweep warms up before its first
	// point only.
	Warmup bool
}

// At is p for another load: the same rows, prompts and client, and the
// schedule drawn again from the random state the rows left, so a point's
// send times are those a separate run with the same seed would plan.
func (p *Plan) At(l Load) (*Plan, error) {
	cfg := *p.Config
	cfg.RequestRate, cfg.MaxConcurrency = l.Rate, l.MaxConcurrency
	q := *p
	q.Config = &cfg
	if !l.Warmup {
		cfg.WarmupRequests, cfg.WarmupDuration = 0, nil
		// The warmup and a common start are the first point's.
		q.traffic.warmup, q.traffic.startAt = 0, time.Time{}
	}
	q.Slots, q.warmupSlots, q.capSteps, q.cyclic, q.warmupCyclic = nil, nil, nil, false, false
	if _, err := parseLoad(&cfg); err != nil {
		return nil, err
	}
	py, np := p.py, p.np
	if err := q.plan(p.lora, &py, &np); err != nil {
		return nil, err
	}
	return &q, nil
}
