package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"time"

	"benchserve/backend"
	"benchserve/dataset"
	"benchserve/internal/py/pyfmt"
	"benchserve/internal/version"
	"benchserve/report"
	"benchserve/schedule"
	"benchserve/serverctl"
)

// replay is the plan a run sends (--replay-plan) instead of a dataset's.
type replay struct {
	file string
	head PlanHead
	reqs []planRequest
	// scale multiplies the plan's offsets (--request-rate against the
	// plan's own).
	scale float64
}

// checkPlanFlags refuses what --save-plan and --replay-plan cannot do,
// before any network call; for a replay it reads the whole plan file.
func checkPlanFlags(cfg *Config, ld traffic) (*replay, error) {
	if f := cfg.SavePlan; f != nil {
		switch {
		case cfg.ReplayPlan != nil:
			return nil, usage("--save-plan with --replay-plan: the plan is already a file (copy it)")
		case ld.duration > 0 && math.IsInf(cfg.RequestRate, 1) && ld.ramp == nil && !datasetSpec(cfg.DatasetName).Timed:
			return nil, usage("--save-plan: a closed loop by --duration sends requests as replies end, not at planned times; give a finite --request-rate (or drop --duration)")
		}
		if err := report.CheckWritable(*f); err != nil {
			return nil, failure("--save-plan: %v", errors.Unwrap(err))
		}
	}
	if cfg.ReplayPlan == nil {
		return nil, nil
	}
	for _, c := range []struct {
		given bool
		flag  string
	}{
		{ld.duration > 0, "--duration"},
		{ld.warmup > 0, "--warmup-duration"},
		{ld.ramp != nil, "--ramp-up-strategy"},
	} {
		if c.given {
			return nil, usage("--replay-plan with %s: the plan's offsets say when each request leaves; drop %s", c.flag, c.flag)
		}
	}
	head, reqs, err := readPlan(*cfg.ReplayPlan)
	if err != nil {
		return nil, err
	}
	if head.Backend != cfg.Backend {
		return nil, usage("--replay-plan: %s holds --backend %s bodies; this run's --backend is %s", *cfg.ReplayPlan, head.Backend, cfg.Backend)
	}
	spec, _ := backend.Lookup(cfg.Backend)
	if head.Path != spec.Path() {
		return nil, usage("--replay-plan: %s sends to %s; --backend %s sends to %s", *cfg.ReplayPlan, head.Path, cfg.Backend, spec.Path())
	}
	scale, err := replayScale(float64(head.RequestRate), cfg.RequestRate)
	if err != nil {
		return nil, usage("--request-rate %s with --replay-plan %s: %v", fmtFloat(cfg.RequestRate), *cfg.ReplayPlan, err)
	}
	return &replay{file: *cfg.ReplayPlan, head: head, reqs: reqs, scale: scale}, nil
}

// replayScale is what a plan saved at rate saved multiplies its offsets by
// to be sent at rate: 1 at the same rate, 0 (all at once) at inf, else
// saved/rate. A plan saved with no rate (inf: a burst, or a trace's own
// times) has none to scale.
func replayScale(saved, rate float64) (float64, error) {
	switch {
	case saved == rate:
		return 1, nil
	case math.IsInf(rate, 1):
		return 0, nil
	case math.IsInf(saved, 1):
		return 0, fmt.Errorf("the plan was saved with --request-rate inf, so it has no rate to scale; drop --request-rate")
	}
	return saved / rate, nil
}

// loadReplay makes the rows and the schedule of a replay: one row per
// planned request, with the saving run's token counts, at its offset
// scaled. There is no dataset to build; the tokenizer is resolved only
// when --tokenizer is given (it retokenizes the replies; the output counts
// are the server's usage, else the lengths asked for).
func (p *Plan) loadReplay(ctx context.Context) error {
	cfg, rp := p.Config, p.replay
	if cfg.Tokenizer != nil {
		if err := p.resolveTokenizer(ctx, *cfg.Tokenizer, fromFlag); err != nil {
			return err
		}
	}
	p.Rows = make([]dataset.Row, len(rp.reqs))
	p.Slots = make([]schedule.Slot, len(rp.reqs))
	for i, q := range rp.reqs {
		p.Rows[i] = dataset.Row{PromptLen: q.promptLen, TextPromptLen: q.promptLen, OutputLen: q.outputLen}
		p.Slots[i] = schedule.Slot{At: time.Duration(math.Round(float64(q.at) * rp.scale))}
	}
	msg := fmt.Sprintf("Replaying %d requests of %s (saved by benchserve %s) at their planned offsets", len(rp.reqs), rp.file, rp.head.Benchserve)
	switch rp.scale {
	case 1:
	case 0:
		msg += ", all at once (--request-rate inf)"
	default:
		msg += fmt.Sprintf(" scaled by %s (--request-rate %s; the plan's was %s)", pyfmt.Float(rp.scale), fmtFloat(cfg.RequestRate), fmtFloat(float64(rp.head.RequestRate)))
	}
	msg += "; the dataset is not read"
	if cfg.Tokenizer == nil {
		msg += " and no tokenizer is loaded (give --tokenizer to retokenize the replies)"
	}
	fmt.Fprintln(p.Env.Stdout, msg+".")
	return nil
}

// keepOwnHeaders drops from the plan's headers those this run sets itself
// (its auth and --header items), which replace them.
func (rp *replay) keepOwnHeaders(own http.Header) {
	for i := range rp.reqs {
		for k := range own {
			rp.reqs[i].header.Del(k)
		}
	}
}

// inputAt is what slot i sends of row: the row's body, or the plan's bytes
// in a replay.
func (p *Plan) inputAt(i int, row *dataset.Row, outputLen int, lora string) *backend.Input {
	in := p.input(row, outputLen, lora)
	if rp := p.replay; rp != nil {
		q := &rp.reqs[i%len(rp.reqs)]
		in.Body, in.Header = q.body, q.header
		if q.audioBytes > 0 {
			in.Audio = &backend.Audio{Size: q.audioBytes, Seconds: q.audioSeconds}
		}
	}
	return in
}

// savePlan writes --save-plan: every slot's request as the run will send
// it (all shards' with --shard), before anything is sent.
func (p *Plan) savePlan() error {
	cfg, name := p.Config, *p.Config.SavePlan
	if conversations(p.Rows) {
		return usage("--save-plan: --dataset-name %s makes conversations, whose later turns carry the live replies; plans (version %d) hold single requests", cfg.DatasetName, PlanVersion)
	}
	c := p.Clients[0]
	reqs := make([]planRequest, len(p.Slots))
	var path string
	for i, s := range p.Slots {
		row := &p.Rows[i%len(p.Rows)]
		var (
			h    http.Header
			body []byte
		)
		path, h, body = c.Planned(p.input(row, row.OutputLen, s.LoRA))
		reqs[i] = planRequest{at: s.At, header: h, body: body, promptLen: row.PromptLen, outputLen: row.OutputLen}
		if a := row.Audio; a != nil {
			reqs[i].audioBytes, reqs[i].audioSeconds = a.Len(), a.Seconds
		}
	}
	var mc *int
	if m := cfg.MaxConcurrency; m != nil && *m > 0 {
		mc = m
	}
	head := PlanHead{
		Benchserve: version.String(), Args: p.Env.args(cfg), Backend: cfg.Backend, BaseURL: serverctl.Redact(p.URLs[0]),
		Model: p.Model, Tokenizer: p.tokID, Dataset: cfg.DatasetName, Seed: cfg.Seed,
		RequestRate: Rate(cfg.RequestRate), MaxConcurrency: mc,
	}
	f, err := os.Create(name)
	if err != nil {
		return failure("--save-plan: %v", err)
	}
	err = writePlan(f, head, path, reqs)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return failure("--save-plan: %s: %v", name, err)
	}
	fmt.Fprintf(p.Env.Stdout, "Saved the plan of %d requests to %s (%s version %d).\n", len(reqs), name, PlanFormat, PlanVersion)
	return nil
}

// planReport is what the result says of a saved or replayed plan.
func (p *Plan) planReport(l *report.Load) {
	if f := p.Config.SavePlan; f != nil {
		l.SavedPlan = *f
	}
	rp := p.replay
	if rp == nil {
		return
	}
	l.Replay = &report.Replay{
		File: rp.file, Requests: len(rp.reqs), Version: rp.head.Version, SavedBy: rp.head.Benchserve,
		Scale: rp.scale, PlanRate: float64(rp.head.RequestRate), PlanMaxConcurrency: rp.head.MaxConcurrency,
	}
}
