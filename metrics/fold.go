package metrics

import (
	"sync"
	"time"

	"benchserve/record"
)

// Fold computes a run's figures from its records given one at a time as
// their requests end, in memory that does not grow with the run (--soak):
// counts, totals, means, standard deviations and maxima exactly; the
// percentiles from sketches (Dist, within SketchError). It is safe for
// concurrent use.
type Fold struct {
	mu  sync.Mutex
	tok TokenCounter
	opt Options
	slo *SLO

	s                    Summary
	e2e, ttft, tpot, itl *Dist
	aTTFT, aE2E, lag     *Dist
	sends                *Dist
	tokens, conc         []int // per second from the run's start; conc as a difference array
	tally                CheckTally
	goodN, goodTokens    int
	urls                 []urlFold
	errs                 []ErrorCount
	errAt                map[[2]string]int
	records              int
	cacheSums            CacheReport
	turns                []turnFold
	turnGaps             int
	between, turnLag     *Dist
	sessions             sessionFold
}

// sessionFold is the per-session figures' sums.
type sessionFold struct {
	started, completed, turns int
	byTurns                   []int
	duration, arrival         *Dist
}

// turnFold is one turn index's part of the per-turn figures.
type turnFold struct {
	completed, failed, input, hits int
	ttft, e2e                      *Dist
}

// maxErrorTexts bounds the distinct error texts a Fold keeps; later ones
// count under their kind only.
const maxErrorTexts = 256

type urlFold struct {
	completed, failed, tokens int
	ttft, e2e                 *Dist
}

// ErrorCount is how many failed requests had one kind and error text
// (Text "": the texts past a Fold's bound, counted by kind only).
type ErrorCount struct {
	Kind, Text string
	N          int
}

// NewFold folds the records of a run with k URLs (k > 1: per-URL figures
// too); slo, when not empty, is the goodput's.
func NewFold(tok TokenCounter, opt Options, slo SLO, k int) *Fold {
	f := &Fold{
		tok: tok, opt: opt,
		e2e: NewDist(), ttft: NewDist(), tpot: NewDist(), itl: NewDist(),
		aTTFT: NewDist(), aE2E: NewDist(), lag: NewDist(), sends: NewDist(),
		errAt: map[[2]string]int{}, between: NewDist(), turnLag: NewDist(),
		sessions: sessionFold{duration: NewDist(), arrival: NewDist()},
	}
	f.tally.Sources = map[record.OutputSource]int{}
	if !slo.Empty() {
		f.slo = &slo
	}
	if k > 1 {
		f.urls = make([]urlFold, k)
		for i := range f.urls {
			f.urls[i] = urlFold{ttft: NewDist(), e2e: NewDist()}
		}
	}
	return f
}

// Add folds one record of a request the run sent and kept (not cut by the
// interrupt).
func (f *Fold) Add(r *record.Record) {
	retok := 0
	if f.tok != nil && r.Success {
		if r.TextCounted {
			retok = r.TextTokens
		} else {
			retok = f.tok.Count(r.Text)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records++
	s := &f.s
	f.tally.Add(r)
	if r.Sent {
		f.lag.Add(r.Start - r.Intended)
	}
	if f.slo != nil && f.slo.Good(r) {
		f.goodN++
		f.goodTokens += r.OutputLen
	}
	f.addURL(r)
	f.addTurn(r)
	switch {
	case r.Success:
		s.Completed++
	case r.Cancelled():
		s.Cancelled++
		return
	default:
		s.Failed++
		f.addError(r)
		return
	}
	s.TotalOutput += r.OutputLen
	s.TotalOutputRetokenized += retok
	s.TotalInput += r.InputLen
	s.TotalInputText += r.InputTextLen
	s.TotalInputVision += r.InputVisionLen
	if r.OutputLen > 1 {
		f.tpot.Add((r.Latency - r.TTFT) / float64(r.OutputLen-1))
	}
	f.ttft.Add(r.TTFT)
	f.e2e.Add(r.Latency)
	wait := r.Start - r.Intended
	f.aTTFT.Add(wait + r.TTFT)
	f.aE2E.Add(wait + r.Latency)
	if r.SendDelay > 0 {
		f.sends.Add(r.SendDelay)
	}
	t := r.Start + r.TTFT
	f.tokenAt(t)
	for _, d := range r.Gaps.All() {
		f.itl.Add(d.Seconds())
		t += d.Seconds()
		f.tokenAt(t)
	}
	if first, last := int(r.Start), int(r.Start+r.Latency); first >= 0 && first <= last {
		f.grow(last + 2)
		f.conc[first]++
		f.conc[last+1]--
	}
	if f.opt.CacheReport {
		addCache(&f.cacheSums, r)
	}
}

func (f *Fold) tokenAt(t float64) {
	if t < 0 {
		return
	}
	b := int(t)
	f.grow(b + 1)
	f.tokens[b]++
}

// grow makes the per-second buckets n long.
func (f *Fold) grow(n int) {
	for len(f.tokens) < n {
		f.tokens = append(f.tokens, 0)
	}
	for len(f.conc) < n {
		f.conc = append(f.conc, 0)
	}
}

func (f *Fold) addURL(r *record.Record) {
	if r.URL < 0 || r.URL >= len(f.urls) || r.Cancelled() {
		return
	}
	u := &f.urls[r.URL]
	if !r.Success {
		u.failed++
		return
	}
	u.completed++
	u.tokens += r.OutputLen
	u.ttft.Add(r.TTFT)
	u.e2e.Add(r.Latency)
}

// addTurn is ComputePerTurn's step for one record.
func (f *Fold) addTurn(r *record.Record) {
	if !r.Round || r.Turn < 0 || !r.Sent {
		return
	}
	for len(f.turns) <= r.Turn {
		f.turns = append(f.turns, turnFold{ttft: NewDist(), e2e: NewDist()})
	}
	if r.Turn > 0 {
		f.turnGaps++
		f.between.Add(r.Start - (r.Intended - r.PlannedDelay))
		f.turnLag.Add(r.Start - r.Intended)
	}
	t := &f.turns[r.Turn]
	switch {
	case r.Cancelled():
	case !r.Success:
		t.failed++
	default:
		t.completed++
		t.ttft.Add(r.TTFT)
		t.e2e.Add(r.Latency)
		t.input += r.InputLen
		t.hits += r.CachedTokens
	}
}

// PerTurn is ComputePerTurn over the folded records (nil when none was
// a conversation's round).
func (f *Fold) PerTurn(cached bool) *PerTurn {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.turns == nil {
		return nil
	}
	pt := &PerTurn{Cached: cached, Gaps: f.turnGaps, Between: f.between.Stats(nil), Lag: f.turnLag.Stats(nil)}
	for k, t := range f.turns {
		tf := TurnFigures{Turn: k, Completed: t.completed, Failed: t.failed, TTFT: t.ttft.Stats(nil), E2E: t.e2e.Stats(nil)}
		tf.TTFT.Max, tf.E2E.Max = 0, 0
		if t.completed > 0 {
			tf.InputTokens = float64(t.input) / float64(t.completed)
			if cached {
				tf.CachedTokens = float64(t.hits) / float64(t.completed)
			}
		}
		pt.Turns = append(pt.Turns, tf)
	}
	return pt
}

// AddSession adds one conversation's per-session figures: recs are its
// rounds that were sent and kept, each already given to Add. It is
// ComputePerSession's step for one session.
func (f *Fold) AddSession(recs []record.Record) {
	var first *record.Record
	sent, ok, plan, end := 0, 0, 0, 0.0
	for i := range recs {
		r := &recs[i]
		if !r.Round || !r.Sent {
			continue
		}
		sent++
		plan = max(plan, r.SessionTurns)
		if r.Success {
			ok++
		}
		if first == nil || r.Turn < first.Turn {
			first = r
		}
		end = max(end, r.Start+r.Latency)
	}
	if first == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &f.sessions
	s.started++
	s.arrival.Add(first.Start - first.Intended)
	if ok == sent && sent >= plan {
		s.completed++
		s.duration.Add(end - first.Start)
	}
	for len(s.byTurns) <= ok {
		s.byTurns = append(s.byTurns, 0)
	}
	s.byTurns[ok]++
	s.turns += ok
}

// PerSession is ComputePerSession over the folded sessions (nil when
// none was folded).
func (f *Fold) PerSession() *PerSession {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &f.sessions
	if s.started == 0 {
		return nil
	}
	return &PerSession{
		Started: s.started, Completed: s.completed, Truncated: s.started - s.completed,
		Duration: s.duration.Stats(nil), TurnsMean: float64(s.turns) / float64(s.started),
		ByTurns: append([]int(nil), s.byTurns...), Gaps: f.turnGaps,
		Between: f.between.Stats(nil), Lag: f.turnLag.Stats(nil), ArrivalLag: s.arrival.Stats(nil),
	}
}

func (f *Fold) addError(r *record.Record) {
	kind := r.ErrorKind
	if kind == "" {
		kind = record.KindOther
	}
	key := [2]string{kind, r.Error}
	i, ok := f.errAt[key]
	if !ok {
		if len(f.errAt) >= maxErrorTexts {
			key[1] = ""
			if i, ok = f.errAt[key]; !ok {
				i = len(f.errs)
				f.errAt[key] = i
				f.errs = append(f.errs, ErrorCount{Kind: kind})
			}
		} else {
			i = len(f.errs)
			f.errAt[key] = i
			f.errs = append(f.errs, ErrorCount{Kind: kind, Text: r.Error})
		}
	}
	f.errs[i].N++
}

// Records is how many records were folded.
func (f *Fold) Records() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.records
}

// Errors are the failures by kind and text, in first-seen order.
func (f *Fold) Errors() []ErrorCount {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ErrorCount(nil), f.errs...)
}

// Summary is Compute's Summary for a run of dur seconds, with its
// percentiles from the sketches. Its one-second buckets count from the
// run's start (the reference's from the first successful request's).
func (f *Fold) Summary(dur float64) Summary {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.s
	s.Duration = dur
	if a := f.opt.AcceptLength; a != nil {
		v := *a
		s.AcceptLength = &v
	}
	if dur > 0 {
		s.setRates(dur)
		s.Concurrency = f.e2e.Sum() / dur
	}
	ps := f.opt.Percentiles
	s.E2E, s.TTFT, s.TPOT, s.ITL = f.e2e.Stats(ps), f.ttft.Stats(ps), f.tpot.Stats(ps), f.itl.Stats(ps)
	s.E2E.Max, s.TTFT.Max, s.TPOT.Max = 0, 0, 0
	s.TokensPerSecond = append([]int(nil), f.tokens...)
	s.ConcurrentPerSecond = make([]int, len(f.conc))
	run := 0
	for b, d := range f.conc {
		run += d
		s.ConcurrentPerSecond[b] = run
	}
	for b := range s.TokensPerSecond {
		s.MaxOutputTokensPerS = max(s.MaxOutputTokensPerS, float64(s.TokensPerSecond[b]))
		s.MaxConcurrentRequests = max(s.MaxConcurrentRequests, s.ConcurrentPerSecond[b])
	}
	if f.opt.CacheReport {
		c := f.cacheSums
		if c.TotalPromptTokens > 0 {
			c.HitRatePct = float64(c.TotalCached) / float64(c.TotalPromptTokens) * 100
		}
		s.Cache = &c
	}
	return s
}

// Check is metrics.Check over the folded records; maxInflight is the
// peak the client counted while it ran.
func (f *Fold) Check(c ClientStats, sh Shape, outputTokens, maxInflight int) SelfCheck {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := checkFrom(&f.tally, c, sh, outputTokens)
	if !sh.Closed {
		a := Anchored{TTFT: f.aTTFT.Stats(nil), E2E: f.aE2E.Stats(nil), Lag: f.lag.Stats(nil)}
		r.Anchored = &a
	}
	if f.sends.Len() > 0 {
		r.SendP50, r.SendP99, r.SendMax = secs(f.sends.Quantile(0.5)), secs(f.sends.Quantile(0.99)), secs(f.sends.max)
	}
	r.MaxInflight = maxInflight
	if r.LateBunchedPct() > maxLateBunchPct {
		r.GapMedian = secs(f.itl.Quantile(0.5))
	}
	r.Verdict = verdict(r)
	return r
}

// Goodput is ComputeGoodput over the folded records (nil without an SLO).
func (f *Fold) Goodput(dur float64) *Goodput {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.slo == nil {
		return nil
	}
	g := Goodput{Total: f.records, Good: f.goodN}
	if dur > 0 {
		g.RequestGoodput = float64(g.Good) / dur
		g.TokenGoodput = float64(f.goodTokens) / dur
	}
	if g.Total > 0 {
		g.Attainment = float64(g.Good) / float64(g.Total)
	}
	return &g
}

// PerURL is metrics.PerURL over the folded records (nil for one URL).
func (f *Fold) PerURL(dur float64) []URLFigures {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.urls == nil {
		return nil
	}
	out := make([]URLFigures, len(f.urls))
	for i, u := range f.urls {
		o := &out[i]
		o.Completed, o.Failed, o.OutputTokens = u.completed, u.failed, u.tokens
		if dur > 0 {
			o.RequestThroughput = float64(u.completed) / dur
			o.OutputThroughput = float64(u.tokens) / dur
		}
		o.TTFT, o.E2E = u.ttft.Stats(nil), u.e2e.Stats(nil)
		o.TTFT.Max, o.E2E.Max = 0, 0
	}
	return out
}

func secs(v float64) time.Duration { return time.Duration(v * 1e9) }
