package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"benchserve/backend"
	"benchserve/internal/exit"
	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
	"benchserve/record"
	"benchserve/report"
	"benchserve/serverctl"
)

// ABConfig is side B of an A/B run (benchserve ab): its server, and what
// it sends differently from A. A nil or empty field is A's.
type ABConfig struct {
	BaseURL          string
	Backend          string
	Model            *string
	ExtraRequestBody *string
	Header           []string
	// Limits are --ab-max-regression's.
	Limits []report.ABLimit
}

// abPlan is what an A/B plan adds: B's flags, and each side's model and
// extra body (A's at 0).
type abPlan struct {
	cfg    *Config
	models [2]string
	extras [2]*pyjson.Object
	limits []report.ABLimit
}

// ABSide is the side (0 A, 1 B) of plan position i: slots 2k and 2k+1 are
// a pair, one to each side, which goes first drawn from the seed and the
// pair alone (the same on every run of the seed).
func ABSide(seed uint64, i int) int {
	flip := int(splitmix(seed^0x5ab5ab5ab5ab5ab5^splitmix(uint64(i/2))) >> 63)
	return (i & 1) ^ flip
}

// ABResult is an A/B run's outcome: each side's result, as a run's, and
// the paired comparison.
type ABResult struct {
	Sides    [2]*report.Result
	AB       metrics.AB
	Outcomes []report.ABOutcome
}

// RunAB runs one plan against two servers, its requests split in pairs
// between them, prints both sides' results and the comparison, and
// appends both sides' lines (B's carries the comparison) to the output
// file.
func RunAB(ctx context.Context, cfg *Config, ab ABConfig, env Env) (*ABResult, error) {
	env = env.withDefaults()
	setup, cancel := context.WithCancel(ctx)
	defer cancel()
	stopOnInterrupt(setup, env.Interrupt, cancel)
	p, err := PrepareAB(setup, cfg, ab, env)
	if err != nil {
		return nil, interruptedSetup(err, env)
	}
	defer p.Close()
	e, err := Execute(ctx, p)
	if err != nil {
		return nil, interruptedSetup(err, env)
	}
	res := SummarizeAB(p, e, p.Servers[1].Info(ctx))
	return res, writeAB(p, res)
}

// checkAB refuses, before any network call, what an A/B run cannot do,
// and returns B's flags: A's with B's target.
func checkAB(cfg *Config, ab ABConfig) (*Config, error) {
	switch {
	case ab.BaseURL == "":
		return nil, usage("--b-base-url: required (side B's server, e.g. --b-base-url http://127.0.0.1:30001)")
	case strings.Contains(ab.BaseURL, ","):
		return nil, usage("--b-base-url: one URL (each side of an A/B run is one server)")
	case cfg.BaseURL != nil && strings.Contains(*cfg.BaseURL, ","):
		return nil, usage("--base-url: one URL (each side of an A/B run is one server)")
	case cfg.Soak || cfg.Duration != nil && *cfg.Duration > SoakAfter.Seconds():
		return nil, usage("--soak: an A/B run pairs its requests' records, which a soak does not keep")
	case cfg.Shard != nil:
		return nil, usage("--shard: an A/B run is one process")
	case cfg.ConcurrencyRampDuration != nil:
		return nil, usage("--concurrency-ramp-duration: an A/B run gives each side its own --max-concurrency, with no ramp")
	case cfg.MaxSessions != nil:
		return nil, usage("--max-sessions: an A/B run pairs single requests, not conversations")
	}
	if err := checkBaseURL(ab.BaseURL); err != nil {
		return nil, usage("%s", strings.Replace(err.Error(), "--base-url", "--b-base-url", 1))
	}
	b := *cfg
	b.BaseURL = &ab.BaseURL
	if ab.Backend != "" {
		b.Backend = ab.Backend
	}
	if ab.Model != nil {
		b.Model = ab.Model
	}
	if ab.ExtraRequestBody != nil {
		b.ExtraRequestBody = ab.ExtraRequestBody
	}
	if ab.Header != nil {
		b.Header = ab.Header
	}
	sa, _ := backend.Lookup(cfg.Backend)
	sb, ok := backend.Lookup(b.Backend)
	switch {
	case !ok:
		return nil, usage("--b-backend %s: unknown (choose from %s)", b.Backend, strings.Join(backend.Names(), ", "))
	case sa.Chat != sb.Chat || sa.Embedding != sb.Embedding || datasetSpec(cfg.DatasetName).Images && sa.Images != sb.Images:
		return nil, usage("--b-backend %s: B sends A's prompts, built for --backend %s; give a backend that takes them in the same form (chat messages, text, embeddings or images as %s does)",
			b.Backend, cfg.Backend, cfg.Backend)
	case b.Model == nil && sb.NeedsModel != "":
		return nil, usage("--b-model: %s", sb.NeedsModel)
	}
	if b.ExtraRequestBody != nil && *b.ExtraRequestBody != "" {
		if _, err := pyjson.ParseObject([]byte(*b.ExtraRequestBody)); err != nil {
			return nil, usage("--b-extra-request-body: %v", err)
		}
	}
	return &b, nil
}

// PrepareAB prepares A as Prepare does, then B: its server checked, its
// model found (--b-model; else A's when --model named it; else the first
// B serves) and its client made. The prompts, tokenizer and schedule are
// A's: one plan for both.
func PrepareAB(ctx context.Context, cfg *Config, ab ABConfig, env Env) (*Plan, error) {
	env = env.withDefaults()
	b, err := checkAB(cfg, ab)
	if err != nil {
		return nil, err
	}
	modelGiven := cfg.Model != nil
	p, err := Prepare(ctx, cfg, env)
	if err != nil {
		return nil, err
	}
	if err := p.prepareB(ctx, b, ab, modelGiven); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (p *Plan) prepareB(ctx context.Context, b *Config, ab ABConfig, modelGiven bool) error {
	switch {
	case conversations(p.Rows):
		return usage("--dataset-name %s: an A/B run pairs single requests; a multi-turn dataset's conversations cannot be paired", p.Config.DatasetName)
	case len(p.Slots) < 2:
		return usage("--num-prompts: an A/B run needs at least 2 requests (one pair)")
	}
	env, base := p.Env, strings.TrimRight(ab.BaseURL, "/")
	spec, _ := backend.Lookup(b.Backend)
	auth := spec.Auth(authHeader(env.Getenv), env.Getenv)
	if err := checkH2(b, []string{base}, env.Getenv); err != nil {
		return err
	}
	hopt, err := clientOptions(b)
	if err != nil {
		return usage("%v", err)
	}
	hopt.Receive = env.Receive
	if hopt.Proxy, err = proxyFor(base, env); err != nil {
		return usage("%v", err)
	}
	srv := &serverctl.Server{Base: base, Auth: auth, HTTP: httpClient(b, hopt)}
	p.URLs, p.Servers = append(p.URLs, base), append(p.Servers, srv)
	if b.ReadyCheckTimeoutSec > 0 {
		if err := srv.WaitReady(ctx, env.Stdout, base+spec.ReadyPath, b.ReadyCheckTimeoutSec); err != nil {
			return failure("--b-base-url %s: %v", serverctl.Redact(base), err)
		}
	}
	model := p.Model
	switch {
	case ab.Model != nil:
		model = *ab.Model
	case !modelGiven:
		m, err := srv.FirstModel(ctx)
		if err != nil || m == "" {
			return failure("--b-base-url %s: /v1/models: no model found (%v); give --b-model", serverctl.Redact(base), err)
		}
		model = m
	}
	extra, err := extraBody(b, io.Discard)
	if err != nil {
		return err
	}
	q := *p
	q.Config, q.Client, q.Clients = b, nil, nil
	if err := q.makeClient(base, auth, hopt); err != nil {
		return err
	}
	p.Clients = append(p.Clients, q.Client)
	p.ab = &abPlan{cfg: b, models: [2]string{p.Model, model}, extras: [2]*pyjson.Object{p.Extra, extra}, limits: ab.Limits}
	return nil
}

// sided gives in B's model and extra body when rec goes to B.
func (r *runner) sided(in *backend.Input, rec *record.Record) *backend.Input {
	if r.ab == nil || rec.URL != 1 {
		return in
	}
	in.Model = r.ab.models[1]
	extra := r.ab.extras[1]
	if row := r.row(rec.Seq); row.Extra != nil && row.Extra.Len() > 0 {
		extra = extra.Clone()
		extra.Update(row.Extra)
	}
	in.Extra = extra
	return in
}

// dispatchAB is dispatch for an A/B plan: one dispatcher a side, each
// sending its side's slots at their times under its own concurrency limit,
// so that a slower side never holds the other's requests back.
func (r *runner) dispatchAB(ctx, inflight context.Context, ph phase, start time.Time) ([]record.Record, time.Time, int) {
	var (
		wg     sync.WaitGroup
		recs   [2][]record.Record
		last   [2]time.Time
		unsent [2]int
		checks [2]*selfCheck
	)
	// B's pacer lags go to a check of their own, joined to A's at the end.
	checks[0] = ph.check
	if ph.check != nil {
		checks[1] = &selfCheck{lags: make([]float64, 0, cap(ph.check.lags))}
	}
	for s := range 2 {
		q := ph
		q.only = func(i int) bool { return r.urlOf(i) == s }
		if r.sem != nil {
			q.sem = make(chan struct{}, cap(r.sem))
		}
		q.check = checks[s]
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs[s], last[s], unsent[s] = r.dispatch(ctx, inflight, q, start)
		}()
	}
	wg.Wait()
	if ph.check != nil {
		ph.check.lags = append(ph.check.lags, checks[1].lags...)
	}
	all := append(recs[0], recs[1]...)
	slices.SortStableFunc(all, func(a, b record.Record) int { return a.Seq - b.Seq })
	end := last[0]
	if last[1].After(end) {
		end = last[1]
	}
	return all, end, unsent[0] + unsent[1]
}

// SummarizeAB summarizes each side as a run of its own (its half of the
// plan: its request rate is half of --request-rate, its duration from the
// common start to its last response) and compares them pair by pair.
// infoB is B's /server_info.
func SummarizeAB(p *Plan, e *Execution, infoB []byte) *ABResult {
	out := &ABResult{}
	var durs [2]float64
	bySide := [2][]record.Record{}
	for _, rec := range e.Records {
		bySide[rec.URL] = append(bySide[rec.URL], rec)
	}
	for s := range 2 {
		q := p.sidePlan(s)
		es := *e
		es.Records = bySide[s]
		es.Duration = sideDuration(bySide[s], e.Duration)
		durs[s] = es.Duration
		if s == 1 {
			es.ServerInfo, es.Server, es.Provenance = infoB, nil, nil
			es.ServerNote = "not read for side B (an A/B run reads side A's /metrics)"
		}
		res := Summarize(q, &es)
		res.Tail = &pyjson.Object{}
		res.Tail.Set("ab_side", pyjson.String("AB"[s:s+1]))
		out.Sides[s] = res
	}
	var slo *metrics.SLO
	if !p.gates.slo.Empty() {
		s := p.gates.slo
		slo = &s
	}
	out.AB = metrics.ComputeAB(abPairs(bySide), durs, metrics.ABOptions{Seed: uint64(p.Config.Seed), Goodput: slo})
	out.Outcomes = report.CheckAB(p.ab.limits, out.AB)
	out.Sides[1].Tail.Set("ab", report.ABKey(out.AB, out.Outcomes))
	return out
}

// sidePlan is p as side s alone: its client and server, its half of the
// slots, its flags (B's target, backend and model for B), its rate half
// of the plan's.
func (p *Plan) sidePlan(s int) *Plan {
	q := *p
	c := *p.Config
	if s == 1 {
		c = *p.ab.cfg
	}
	c.RequestRate /= 2
	m := p.ab.models[s]
	c.Model, q.Model = &m, m
	q.Config = &c
	q.Client, q.Clients = p.Clients[s], p.Clients[s:s+1]
	q.Server, q.Servers, q.URLs = p.Servers[s], p.Servers[s:s+1], p.URLs[s:s+1]
	q.Slots = nil
	seed := uint64(p.Config.Seed)
	for i, sl := range p.Slots {
		if ABSide(seed, i) == s {
			q.Slots = append(q.Slots, sl)
		}
	}
	return &q
}

// sideDuration is a side's seconds from the common start to its last
// response (the run's when it sent nothing).
func sideDuration(recs []record.Record, run float64) float64 {
	d := 0.0
	for i := range recs {
		if recs[i].Sent {
			d = max(d, recs[i].End)
		}
	}
	if d <= 0 {
		return run
	}
	return min(d, run)
}

// abPairs are the plan's pairs whose both requests are in the records
// (an interrupt may leave one out), in plan order.
func abPairs(bySide [2][]record.Record) []metrics.ABPair {
	at := map[int]*metrics.ABPair{}
	var order []int
	for s := range 2 {
		for i := range bySide[s] {
			rec := &bySide[s][i]
			k := rec.Seq / 2
			pr := at[k]
			if pr == nil {
				pr = &metrics.ABPair{}
				at[k] = pr
				order = append(order, k)
			}
			if s == 0 {
				pr.A = rec
			} else {
				pr.B = rec
			}
		}
	}
	slices.Sort(order)
	var out []metrics.ABPair
	for _, k := range order {
		if pr := at[k]; pr.A != nil && pr.B != nil {
			out = append(out, *pr)
		}
	}
	return out
}

// writeAB prints both sides and the comparison and appends both lines;
// the error is the run's exit: an interrupt's, a side whose requests all
// failed, or a failed --threshold (either side) or --ab-max-regression (4).
func writeAB(p *Plan, res *ABResult) error {
	out := p.Env.Stdout
	for s, r := range res.Sides {
		spec := p.Clients[s].Spec()
		fmt.Fprintf(out, "\nSide %s: %s (backend %s, model %s)\n", "AB"[s:s+1], serverctl.Redact(p.URLs[s]), spec.Name, p.ab.models[s])
		if err := r.Print(out, p.Config.PlotThroughput); err != nil {
			return err
		}
	}
	if err := report.PrintAB(out, res.AB, res.Outcomes); err != nil {
		return err
	}
	for _, r := range res.Sides {
		if err := report.Append(p.OutputFile, r.Line()); err != nil {
			return failure("--output-file: %v", err)
		}
		if f := p.Config.SteadyStateOutputFile; f != nil && r.Steady != nil {
			if err := report.Append(*f, report.SteadyLine(r.Steady)); err != nil {
				return failure("--steady-state-output-file: %v", err)
			}
		}
	}
	if res.Sides[0].Stop != nil {
		return &exit.Error{Code: exit.Interrupted, Msg: sprintf("interrupted; the lines of both sides, for the requests that finished, were appended to %s", p.OutputFile)}
	}
	for s, r := range res.Sides {
		if r.Summary.Completed == 0 {
			first := ""
			for i := range r.Records {
				if r.Records[i].Error != "" {
					first = r.Records[i].Error
					break
				}
			}
			return &exit.Error{Code: exit.AllFailed, Msg: sprintf("all %d requests of side %s failed; first error: %s", len(r.Records), "AB"[s:s+1], first)}
		}
	}
	var bad []string
	for s, r := range res.Sides {
		for _, t := range report.Failed(r.Thresholds) {
			bad = append(bad, "AB"[s:s+1]+": "+t)
		}
	}
	bad = append(bad, report.ABFailed(res.Outcomes)...)
	if len(bad) > 0 {
		return &exit.Error{Code: exit.Thresholds, Msg: sprintf("%d checks failed: %s", len(bad), strings.Join(bad, ", "))}
	}
	return nil
}
