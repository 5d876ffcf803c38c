package onebatch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"benchserve/backend"
	"benchserve/hub"
	"benchserve/internal/exit"
	"benchserve/internal/netproxy"
	"benchserve/internal/py/pyrand"
	"benchserve/report"
	"benchserve/serverctl"
	"benchserve/tokenizer"
)

// runner is one run: the target, the tokenizer and the generators every
// case draws from.
type runner struct {
	cfg    *Config
	env    Env
	base   string
	srv    *serverctl.Server
	client *backend.Client
	tok    tokenizer.Tokenizer
	py     *pyrand.Python
	np     *pyrand.NumPy
	// model is the vLLM model name; modelID the dataset's model id (the
	// vLLM model, else the tokenizer's name).
	model, modelID string
	fixed          []int // the encoded --fixed-prompt-file
	saved          int   // rows appended to --result-filename
}

// thresholds are the skip guards (§4.2); math.Inf(1) disables one.
type thresholds struct {
	maxRunning, tokens float64
	cap                float64 // the running cap under --enable-multi-batch, 0 if none
}

// Run runs the sweep (one-batch spec §1.4). Rows of finished cases are in
// the result file whatever happens after them.
func Run(ctx context.Context, c *Config, env Env) error {
	if env.FlushPause == 0 {
		env.FlushPause = 2 * time.Second
	}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	notes, err := Validate(c)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(env.Stderr, "benchserve one-batch: note: %s\n", n)
	}
	if err := checkFiles(c); err != nil {
		return err
	}
	if replay(c.DatasetName) {
		fmt.Fprintf(env.Stdout, "NOTE: replay prompts have recorded lengths; the token-capacity skip guard assumes --input-len (%d) per prompt, so set it near the trace's mean length.\n", c.InputLens[0])
	}
	r := &runner{cfg: c, env: env, py: pyrand.NewPython(int64(c.Seed)), np: pyrand.NewNumPy(uint32(c.Seed))}
	setup, cases, stop := watch(ctx, env)
	defer stop()
	hc := backend.NewHTTPClient(backend.ClientOptions{KeepAlive: true, ConnectTimeout: c.Idle, Proxy: netproxy.FromEnv(env.Getenv)})
	defer hc.CloseIdleConnections()
	// Unlike the reference, the API key goes with every call, as in the
	// main command; a server without one ignores it.
	auth := http.Header{}
	if k := env.Getenv("OPENAI_API_KEY"); k != "" {
		auth.Set("Authorization", "Bearer "+k)
	}
	if r.base, err = resolveTarget(setup, c, hc, env); err != nil {
		return beforeCases(err, env)
	}
	r.srv = &serverctl.Server{Base: r.base, Auth: auth, HTTP: hc}
	if r.client, err = backend.New(c.Backend, r.base, backend.Options{}, auth, hc); err != nil {
		return usage("%v", err)
	}
	th, err := r.serverFacts(setup)
	if err != nil {
		return beforeCases(err, env)
	}
	r.multiBatch(&th)

	if !c.SkipWarmup {
		if err := r.warmup(setup); err != nil {
			return beforeCases(err, env)
		}
	}
	results, runErr := r.sweep(cases, th, false)
	if runErr == nil && c.Profile {
		profiled, err := r.sweep(cases, th, true)
		// A failure of the profile pass is printed and the run goes on,
		// as in the reference; an interrupt ends it.
		switch {
		case errors.Is(err, errInterrupted):
			runErr = err
		case err != nil:
			fmt.Fprintf(env.Stdout, "Error profiling, some profile traces may not be dumped: %v\n", err)
		}
		for i := range min(len(results), len(profiled)) {
			results[i].ProfileLink = profiled[i].ProfileLink
		}
	}
	if r.saved > 0 {
		fmt.Fprintf(env.Stdout, "\nResults are saved to %s\n", c.ResultFilename)
	}
	if c.ShowReport {
		r.showReport(results)
	}
	if c.PydanticResultFilename != nil {
		if err := r.writePydantic(results); err != nil && runErr == nil {
			runErr = err
		}
	}
	if errors.Is(runErr, errInterrupted) {
		msg := "interrupted; no case finished"
		switch {
		case r.saved == 1:
			msg = "interrupted; the row of the case that finished is in " + c.ResultFilename
		case r.saved > 1:
			msg = fmt.Sprintf("interrupted; the rows of the %d cases that finished are in %s", r.saved, c.ResultFilename)
		}
		return &exit.Error{Code: exit.Interrupted, Msg: msg}
	}
	return runErr
}

// resolveTarget is --base-url, else a server already answering at
// host:port; benchserve never launches one (§1.5).
func resolveTarget(ctx context.Context, c *Config, hc *http.Client, env Env) (string, error) {
	if c.BaseURL != "" {
		var flags []string
		if c.Host != "127.0.0.1" {
			flags = append(flags, "--host")
		}
		if c.Port != 30000 {
			flags = append(flags, "--port")
		}
		if len(flags) > 0 {
			fmt.Fprintf(env.Stdout, "WARNING: --base-url is set, so %s (and other launch args) are ignored; benchmarking the server at %s.\n",
				strings.Join(flags, " / "), c.BaseURL)
		}
		return strings.TrimRight(c.BaseURL, "/"), nil
	}
	base := "http://" + net.JoinHostPort(strings.Trim(c.Host, "[]"), strconv.Itoa(c.Port))
	srv := &serverctl.Server{Base: base, HTTP: hc}
	h := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	status, _, err := srv.Do(ctx, http.MethodGet, base+"/v1/models", nil, h, 5*time.Second)
	if err == nil && status == http.StatusOK {
		fmt.Fprintf(env.Stdout, "WARNING: reusing the server already running at %s (--model and server-launch args ignored). Pass --base-url to silence.\n", base)
		return base, nil
	}
	what := "nothing answers at " + base
	if err == nil {
		what = fmt.Sprintf("GET %s/v1/models answered %d", base, status)
	}
	return "", usage("%s, and benchserve cannot launch a server; start one (python -m sglang.launch_server ...) and pass --base-url URL", what)
}

// serverFacts reads what the sweep needs from the server and loads the
// tokenizer (§1.4 step 4).
func (r *runner) serverFacts(ctx context.Context) (thresholds, error) {
	c, out := r.cfg, r.env.Stdout
	inf := math.Inf(1)
	tokName := c.LocalTokenizerPath
	if tokName == "" {
		tokName = c.TokenizerPath
	}
	from := "--local-tokenizer-path"
	if c.LocalTokenizerPath == "" && c.TokenizerPath != "" {
		from = "--tokenizer-path"
	}
	if c.vllm() {
		fmt.Fprintf(out, "Connecting to vLLM server at %s...\n", r.base)
		m, err := r.srv.FirstModel(ctx)
		if err != nil {
			return thresholds{}, failure("GET %s/v1/models: %v", r.base, err)
		}
		if m == "" {
			return thresholds{}, failure("No models found on vLLM server via /v1/models")
		}
		r.model, r.modelID = m, m
		fmt.Fprintf(out, "Found model: %s\nLoading tokenizer for %s...\n", m, m)
		if tokName == "" {
			tokName, from = m, "the model /v1/models lists"
		}
		if err := r.loadTokenizer(ctx, tokName, from); err != nil {
			return thresholds{}, err
		}
		fmt.Fprintln(out, "Tokenizer loaded.")
		return thresholds{maxRunning: inf, tokens: inf}, nil
	}
	info, err := r.srv.InfoStrict(ctx)
	if err != nil {
		return thresholds{}, failure("%v", err)
	}
	f, err := serverctl.ParseBatchFacts(info)
	if err != nil {
		return thresholds{}, failure("%v", err)
	}
	if tokName == "" {
		if f.TokenizerPath == "" {
			return thresholds{}, failure("the server's /server_info names no tokenizer_path; pass --local-tokenizer-path (a Hub id, a local directory or tokenizer.json, or o200k_base)")
		}
		tokName, from = f.TokenizerPath, "the tokenizer_path of /server_info"
	}
	if err := r.loadTokenizer(ctx, tokName, from); err != nil {
		return thresholds{}, err
	}
	r.modelID = r.tok.Name()
	th := thresholds{maxRunning: inf, tokens: inf}
	switch {
	case f.Router:
		fmt.Fprintln(out, "WARNING: base_url points at a PD router; worker internal states are unavailable, so the max-running-requests and token-capacity skip guards are disabled.")
	case f.MaxRunningPerDP <= 0:
		// The reference asserts here; the guard is only a convenience.
		fmt.Fprintln(r.env.Stderr, "benchserve one-batch: warning: /server_info has no effective_max_running_requests_per_dp; the max-running-requests skip guard is disabled")
		th.tokens = float64(f.TokenCapacity)
		if f.TokenCapacity == 0 {
			th.tokens = inf
		}
	default:
		th.maxRunning = float64(f.MaxRunningPerDP * f.DPSize)
		th.tokens = float64(f.TokenCapacity)
	}
	fmt.Fprintf(out, "max_running_requests_per_dp=%d\ndp_size=%d\nskip_max_running_requests_threshold=%s\nskip_token_capacity_threshold=%s\n",
		f.MaxRunningPerDP, f.DPSize, pyNum(th.maxRunning), pyNum(th.tokens))
	return th, nil
}

// pyNum prints a threshold as Python prints the int or float('inf').
func pyNum(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	return strconv.FormatInt(int64(x), 10)
}

func (r *runner) loadTokenizer(ctx context.Context, name, from string) error {
	hc := hub.FromEnv(r.env.Getenv)
	hc.Progress = r.env.Stderr
	tok, err := tokenizer.Resolve(ctx, name, tokenizer.ResolveOptions{Hub: hc, Getenv: r.env.Getenv})
	if err != nil {
		return failure("tokenizer %s (from %s): %v; pass --local-tokenizer-path with a Hub id, a local directory or tokenizer.json, or a built-in encoding such as o200k_base", name, from, err)
	}
	r.tok = tok
	return nil
}

// multiBatch applies --enable-multi-batch (§4.3).
func (r *runner) multiBatch(th *thresholds) {
	if !r.cfg.EnableMultiBatch {
		return
	}
	if !math.IsInf(th.maxRunning, 1) {
		th.cap = th.maxRunning
	}
	th.maxRunning = math.Inf(1)
	if th.cap == 0 {
		return
	}
	var noop []int
	for _, bs := range r.cfg.BatchSizes {
		if float64(bs) <= th.cap && !slices.Contains(noop, bs) {
			noop = append(noop, bs)
		}
	}
	slices.Sort(noop)
	if len(noop) > 0 {
		capS := strconv.Itoa(int(th.cap))
		fmt.Fprintf(r.env.Stdout, "WARNING: --enable-multi-batch is set but batch size(s) %s are <= running cap (%s); those cases will run as a single wave and the flag is a no-op for them. Use batch_size > %s to actually exercise multi-batch.\n",
			report.PyIntSeq(noop, false), capS, capS)
	}
}

// warmup runs one case per batch size, sorted and without repeats
// (Python's set order is not reproducible), input 1024, output 16 (§4.1).
func (r *runner) warmup(ctx context.Context) error {
	sizes := slices.Clone(r.cfg.BatchSizes)
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	out := r.env.Stdout
	fmt.Fprintln(out, "======== Warmup Begin ========")
	fmt.Fprintf(out, "Warmup with batch_size=%s\n", report.PyIntSeq(sizes, false))
	for _, bs := range sizes {
		if _, err := r.runCase(ctx, bs, 1024, 16, caseOpts{ignoreEOS: true}); err != nil {
			if errors.Is(err, errInterrupted) {
				return &exit.Error{Code: exit.Interrupted, Msg: "interrupted during the warmup; no case was measured"}
			}
			var ee *exit.Error
			if errors.As(err, &ee) {
				return &exit.Error{Code: ee.Code, Msg: "warmup " + ee.Msg}
			}
			return fmt.Errorf("warmup: %w", err)
		}
	}
	fmt.Fprint(out, "======== Warmup End   ========\n\n")
	return nil
}

// sweep runs every case of the Cartesian product in the reference's
// order, skipping those the guards rule out; profile makes it the
// profile pass. It returns the cases measured before any error.
func (r *runner) sweep(ctx context.Context, th thresholds, profile bool) ([]*report.BatchCase, error) {
	c := r.cfg
	var results []*report.BatchCase
	for _, bs := range c.BatchSizes {
		for _, il := range c.InputLens {
			for _, ol := range c.OutputLens {
				if r.skip(th, bs, il, ol) {
					continue
				}
				if interrupted(r.env) {
					return results, errInterrupted
				}
				o := caseOpts{ignoreEOS: !c.DisableIgnoreEOS, cacheHitRate: c.CacheHitRate, runName: c.RunName, write: true}
				if profile {
					o.profile = true
					if c.ProfilePrefix != nil {
						o.profilePrefix = *c.ProfilePrefix
					}
					o.profilePrefix += fmt.Sprintf("bs-%d-il-%d", bs, il)
				}
				res, err := r.runCase(ctx, bs, il, ol, o)
				if err != nil {
					if ctx.Err() != nil {
						err = errInterrupted
					}
					return results, err
				}
				results = append(results, res)
			}
		}
	}
	return results, nil
}

// skip applies the guards, printing the reference's line for a skipped case.
func (r *runner) skip(th thresholds, bs, il, ol int) bool {
	out := r.env.Stdout
	if float64(bs) > th.maxRunning {
		fmt.Fprintf(out, "========Skip benchmark batch_size=%d > skip_max_running_requests_threshold=%s due to max running requests limit.========\n", bs, pyNum(th.maxRunning))
		return true
	}
	kv := bs
	if th.cap > 0 {
		kv = min(bs, int(th.cap))
	}
	if p := kv * (il + ol); float64(p) > th.tokens {
		fmt.Fprintf(out, "========Skip benchmark batch_size=%d * (input_len=%d + output_len=%d) = %d > skip_token_capacity_threshold=%s due to kv cache limit.========\n",
			kv, il, ol, p, pyNum(th.tokens))
		return true
	}
	return false
}

// showReport prints the --show-report table and, in SGLang's CI, appends
// it to the GitHub step summary.
func (r *runner) showReport(results []*report.BatchCase) {
	c := r.cfg
	s := report.BatchReport(results, report.ReportOptions{
		InputLens: report.PyIntSeq(c.InputLens, !c.InputLensSet), OutputLens: report.PyIntSeq(c.OutputLens, !c.OutputLenSet),
		CacheHitRate: c.CacheHitRate, DisableIgnoreEOS: c.DisableIgnoreEOS, Profile: c.Profile,
		HourlyCost: c.HourlyCostPerGPU * float64(c.TPSize),
	})
	fmt.Fprintln(r.env.Stdout, s)
	ci := strings.ToLower(r.env.Getenv("SGLANG_IS_IN_CI"))
	if !c.AppendGithubSummary || ci != "true" && ci != "1" {
		return
	}
	path := r.env.Getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		fmt.Fprintln(r.env.Stderr, "benchserve one-batch: warning: GITHUB_STEP_SUMMARY is not set; the report is not added to the step summary")
		return
	}
	if err := report.Append(path, []byte(s)); err != nil {
		fmt.Fprintf(r.env.Stderr, "benchserve one-batch: warning: GITHUB_STEP_SUMMARY: %v\n", err)
	}
}

// writePydantic overwrites --pydantic-result-filename with the results.
func (r *runner) writePydantic(results []*report.BatchCase) error {
	cases := make([]report.PydanticCase, len(results))
	for i, res := range results {
		cases[i] = report.PydanticCase{BatchCase: res}
		if res.ProfileLink != "" {
			cases[i].ProfileExtend, cases[i].ProfileDecode = serverctl.TraceLinks(res.ProfileLink)
		}
	}
	b := report.PydanticFile(cases, r.cfg.ModelPath, r.cfg.ServerArgsForMetrics)
	if err := os.WriteFile(*r.cfg.PydanticResultFilename, b, 0o644); err != nil {
		return failure("--pydantic-result-filename: %v", err)
	}
	return nil
}

func oneLine(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
