package onebatch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"benchserve/backend"
	"benchserve/internal/py/pyfmt"
	"benchserve/metrics"
	"benchserve/report"
	"benchserve/serverctl"
)

// caseOpts are what differs between a warmup, a measured case and a
// profiled one.
type caseOpts struct {
	ignoreEOS     bool
	cacheHitRate  float64
	profile       bool
	profilePrefix string
	runName       string
	write         bool // append the row to the result file
}

// runCase is the reference's run_one_case (one-batch spec §3): flush,
// inputs, cache warmup, profiler, the measured request, the server's
// figures; it prints the case's block and appends its row.
func (r *runner) runCase(ctx context.Context, bs, il, ol int, o caseOpts) (*report.BatchCase, error) {
	c := r.cfg
	name := caseName(bs, il, ol)
	flushPath := "/flush_cache"
	if c.vllm() {
		flushPath = "/reset_prefix_cache"
	}
	if err := r.srv.FlushRetry(ctx, flushPath, r.env.FlushPause); err != nil {
		return nil, r.caseErr(ctx, name, "flushing the cache", err)
	}
	in, err := r.inputs(ctx, bs, il, ol)
	if err != nil {
		return nil, err
	}
	batch := &backend.Batch{IDs: in.ids, Images: in.images, OutputLen: in.outputLen, Temperature: c.Temperature,
		IgnoreEOS: o.ignoreEOS, ReturnLogprob: c.ReturnLogprob, StreamInterval: c.StreamInterval,
		ParallelBatch: c.ParallelBatch, FakePrefill: c.FakePrefill, LoRA: in.lora, Model: r.model}
	var body []byte
	if c.vllm() {
		body = backend.CompletionsBatchBody(batch)
	} else {
		body = backend.GenerateBatchBody(batch)
	}
	if o.cacheHitRate > 0 {
		if err := r.warmCache(ctx, in, o.cacheHitRate); err != nil {
			return nil, r.caseErr(ctx, name, "the cache warmup", err)
		}
	}
	var link string
	if o.profile {
		if link, err = r.startProfile(ctx, o.profilePrefix); err != nil {
			return nil, err
		}
	}
	before := r.cacheTokens(ctx)

	res, err := r.measure(ctx, body, len(in.ids), bs, o.ignoreEOS)
	if err != nil {
		return nil, r.caseErr(ctx, name, "the batch request to "+r.client.URL(), err)
	}
	bc := &report.BatchCase{RunName: o.runName, BatchSize: bs, InputLen: in.inputLen, OutputLen: in.outputLen,
		Latency: res.latency, LastTTFT: res.lastTTFT, KernelTimed: res.kernel, ProfileLink: link}
	windowTokens := float64(bs * in.outputLen)
	bc.TotalOutputTokens = bs * in.outputLen
	if rec := res.rec; rec != nil {
		bc.TotalOutputTokens = rec.TotalTokens()
		n := rec.EarlyStopped()
		bc.NumEarlyStopped = &n
		if tok, d, ok := rec.Window(); ok {
			tp, s := tok/d.Seconds(), d.Seconds()
			bc.SteadyThroughput, bc.SteadyS = &tp, &s
		}
		windowTokens = float64(bc.TotalOutputTokens)
		if !o.ignoreEOS || replay(c.DatasetName) {
			windowTokens -= rec.TokensBeforeAllStarted()
		}
		if o.ignoreEOS && bc.TotalOutputTokens != bs*in.outputLen {
			fmt.Fprintf(r.env.Stdout, "WARNING: generated %d tokens but requested %d; the server clamped max_new_tokens or served fewer prompts, so throughput uses the actual count.\n",
				bc.TotalOutputTokens, bs*in.outputLen)
		}
		bc.EarlyStopLines = !o.ignoreEOS
	}
	bc.InputThroughput = float64(in.totalInput) / res.lastTTFT
	// The stream's end can come in the same read as the last first token
	// (an output of one token): no decode time, and no decode throughput.
	if decode := res.latency - res.lastTTFT; decode > 0 {
		bc.OutputThroughput = windowTokens / decode
	}
	bc.OverallThroughput = float64(in.totalInput+bc.TotalOutputTokens) / res.latency

	if c.sglang() {
		info, err := r.srv.InfoStrict(ctx)
		if err != nil {
			return nil, r.caseErr(ctx, name, "reading the server's figures", err)
		}
		if bc.LastGenThroughput, bc.AccLength, err = serverctl.BatchServerFigures(info); err != nil {
			return nil, r.caseErr(ctx, name, "reading the server's figures", err)
		}
	}
	bc.CacheHitRate = serverctl.CacheHitRate(before, r.cacheTokens(ctx))
	report.PrintBatchCase(r.env.Stdout, bc)
	if o.write && c.ResultFilename != "" {
		if err := report.Append(c.ResultFilename, report.BatchLine(bc, r.env.Version)); err != nil {
			return nil, failure("%s: %v", name, err)
		}
		r.saved++
	}
	return bc, nil
}

// caseErr words a case's failure: the run's interrupt, or one line
// naming the case, the step and the cause.
func (r *runner) caseErr(ctx context.Context, name, step string, err error) error {
	if ctx.Err() != nil {
		return errInterrupted
	}
	return failure("%s: %s: %v", name, step, err)
}

// errInterrupted ends a run stopped by a signal.
var errInterrupted = errors.New("interrupted")

// measured is what the stream of one case gave.
type measured struct {
	lastTTFT, latency float64 // seconds from the send
	kernel            bool
	rec               *metrics.BatchRecorder // sglang
}

// measure sends the batch and reads its stream (§3.8). n is how many
// prompts went out (the recorder's size), bs the batch size vLLM's
// first-token count must reach.
func (r *runner) measure(ctx context.Context, body []byte, n, bs int, ignoreEOS bool) (*measured, error) {
	// Lines are timed from origin; the send time is known only once the
	// request is written, and the differences do not depend on origin.
	origin := time.Now()
	var rec *metrics.BatchRecorder
	var onLine func(line []byte, at time.Time) (bool, error)
	seen := map[int]bool{}
	var vllmTTFT time.Duration = -1
	if r.cfg.vllm() {
		onLine = func(line []byte, at time.Time) (bool, error) {
			kind, err := backend.ParseCompletionsLine(line, func(i int) {
				if !seen[i] {
					seen[i] = true
					if len(seen) == bs {
						vllmTTFT = at.Sub(origin)
					}
				}
			})
			return kind == backend.LineDone, err
		}
	} else {
		rec = metrics.NewBatchRecorder(n)
		onLine = func(line []byte, at time.Time) (bool, error) {
			ch, kind, err := backend.ParseGenerateLine(line)
			if err != nil || kind != backend.LineData {
				return kind == backend.LineDone, err
			}
			if ch.Finish != "" {
				if err := backend.CheckFinish(ch, ignoreEOS); err != nil {
					return false, err
				}
			}
			return false, rec.Chunk(ch.Index, ch.Tokens, ch.Finish, at.Sub(origin))
		}
	}
	t, err := r.client.Stream(ctx, body, r.cfg.Idle, onLine)
	if err != nil {
		return nil, err
	}
	sent := t.Sent.Sub(origin)
	m := &measured{latency: (t.End.Sub(origin) - sent).Seconds(), kernel: t.KernelTimed, rec: rec}
	if rec != nil {
		if missing := rec.NotStarted(); len(missing) > 0 {
			return nil, fmt.Errorf("no token came for the prompts at indices %v of %d", missing, n)
		}
		at, _ := rec.AllStarted()
		m.lastTTFT = (at - sent).Seconds()
	} else {
		if vllmTTFT < 0 {
			return nil, fmt.Errorf("vllm stream ended after %d of %d requests produced a token", len(seen), bs)
		}
		m.lastTTFT = (vllmTTFT - sent).Seconds()
	}
	if m.lastTTFT <= 0 {
		return nil, fmt.Errorf("the last first token came at the send time (last_ttft 0): no input throughput")
	}
	return m, nil
}

// warmCache sends each prompt's first int(input_len * rate) ids in one
// non-streamed request (§3.7).
func (r *runner) warmCache(ctx context.Context, in *inputs, rate float64) error {
	k := int(float64(in.inputLen) * rate)
	if k <= 0 {
		return nil
	}
	fmt.Fprintf(r.env.Stdout, "Warming up cache with %s%% hit rate (%d tokens per request)\n", pyfmt.Fixed(rate*100, 1), k)
	prefixes := make([][]int, len(in.ids))
	for i, ids := range in.ids {
		prefixes[i] = ids[:min(k, len(ids))]
	}
	vllm := r.cfg.vllm()
	body := backend.CacheWarmupBody(vllm, prefixes, in.images, r.model, r.cfg.FakePrefill && !vllm)
	path := "/generate"
	if vllm {
		path = "/v1/completions"
	}
	status, resp, err := r.srv.Do(ctx, "POST", r.base+path, body, r.srv.Auth, serverctl.OneBatchTimeout)
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("POST %s answered %d: %s", path, status, oneLine(resp))
	}
	fmt.Fprintln(r.env.Stdout, "Cache warmup completed")
	return nil
}

// cacheTokens reads the /metrics counters; a failed call is a warning,
// as in the reference.
func (r *runner) cacheTokens(ctx context.Context) *serverctl.CacheTokens {
	ct, err := r.srv.BatchCacheTokens(ctx)
	if err != nil {
		fmt.Fprintf(r.env.Stdout, "Warning: Failed to get cache tokens from metrics: %v\n", err)
	}
	return ct
}

// startProfile starts the server's profiler for the case (§4.4) and
// returns the trace directory, the case's profile link.
func (r *runner) startProfile(ctx context.Context, prefix string) (string, error) {
	c := r.cfg
	root := "/tmp"
	if c.ProfileOutputDir != nil && *c.ProfileOutputDir != "" {
		root = *c.ProfileOutputDir
	} else if d := r.env.Getenv("SGLANG_TORCH_PROFILER_DIR"); d != "" {
		root = d
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	now := r.now()
	dir := filepath.Join(root, pyfmt.Float(float64(now.UnixNano())/1e9))
	fmt.Fprintf(r.env.Stdout, "Dump profiling traces to %s\n", dir)
	byStage := "False"
	if c.ProfileByStage {
		byStage = "True"
	}
	fmt.Fprintf(r.env.Stdout, "Waiting for %d steps and the trace to be flushed.... (profile_by_stage=%s)\n", c.ProfileSteps, byStage)
	err = r.srv.StartBatchProfile(ctx, serverctl.BatchProfile{Dir: dir, Steps: c.ProfileSteps, StartStep: c.ProfileStartStep,
		Activities: c.ProfileActivities, ByStage: c.ProfileByStage, Prefix: prefix})
	if err != nil {
		return "", err
	}
	return dir, nil
}

func (r *runner) now() time.Time {
	if r.env.Now != nil {
		return r.env.Now()
	}
	return time.Now()
}
