package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"benchserve/backend"
	"benchserve/dataset"
	"benchserve/hub"
	"benchserve/internal/pyfmt"
	"benchserve/internal/pyjson"
	"benchserve/internal/pyrand"
	"benchserve/metrics"
	"benchserve/record"
	"benchserve/report"
	"benchserve/schedule"
	"benchserve/tokenizer"
)

var sprintf = fmt.Sprintf

// Env is the process around a run: its output streams and environment.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Args is the parsed flags as Python prints an argparse Namespace.
	Args string
	// Progress turns the progress bar on (stderr is a terminal and
	// --disable-tqdm was not given).
	Progress bool
	// Now gives the wall clock, for the output file's name.
	Now func() time.Time
}

// Result is what a finished run measured.
type Result struct {
	Summary    metrics.Summary
	Records    []record.Record
	OutputFile string
}

// Run runs one benchmark as the reference tool's run_benchmark does.
func Run(ctx context.Context, cfg *Config, env Env) (*Result, error) {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	if env.Now == nil {
		env.Now = time.Now
	}
	out := env.Stdout
	if err := checkSupported(cfg); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "benchmark_args=%s\n", env.Args)
	raiseFileLimit(out)

	if cfg.Seed < 0 || cfg.Seed > math.MaxUint32 {
		return nil, usage("--seed: must be between 0 and 2**32 - 1, got %d", cfg.Seed)
	}
	py := pyrand.NewPython(int64(cfg.Seed))
	np := pyrand.NewNumPy(uint32(cfg.Seed))

	extra := &pyjson.Object{}
	if cfg.ExtraRequestBody != nil {
		var err error
		if extra, err = pyjson.ParseObject([]byte(*cfg.ExtraRequestBody)); err != nil {
			return nil, usage("--extra-request-body: %v", err)
		}
	}
	if cfg.CacheReport {
		switch cfg.Backend {
		case "sglang", "sglang-native":
		case "sglang-oai", "sglang-oai-chat":
			extra.Set("return_cached_tokens_details", pyjson.Bool(true))
		default:
			fmt.Fprintln(out, "WARNING: --cache-report is only supported with sglang backends.")
		}
	}
	if cfg.FakePrefill {
		extra.Set("bootstrap_host", pyjson.String("2.2.2.2"))
		extra.Set("bootstrap_room", pyjson.Int(0))
	}

	port := backend.DefaultPort(cfg.Backend)
	if cfg.Port != nil {
		port = *cfg.Port
	}
	base := baseURL(cfg, port)
	outFile := outputFile(cfg, env.Now())
	if err := report.CheckWritable(outFile); err != nil {
		return nil, failure("--output-file: %v", err)
	}

	auth := authHeader(env.Getenv)
	ctl := &control{base: base, auth: auth, http: &http.Client{}}

	if cfg.Backend == "trt" && cfg.Model == nil {
		fmt.Fprintln(out, "Please provide a model using `--model` when using `trt` backend.")
		return nil, &ExitError{Code: ExitFailure}
	}
	if cfg.ReadyCheckTimeoutSec > 0 {
		health := base + "/v1/models"
		if cfg.Backend == "trt" {
			health = base
		}
		if ok, why := ctl.waitReady(ctx, out, health, cfg.ReadyCheckTimeoutSec); !ok {
			fmt.Fprintf(out, "Server at %s is not ready. Exiting.\n", health)
			return nil, failure("server at %s is not ready after %ds (last attempt: %s); check --host/--port/--base-url, or raise --ready-check-timeout-sec", health, cfg.ReadyCheckTimeoutSec, why)
		}
	}

	model := ""
	if cfg.Model != nil {
		model = *cfg.Model
	} else {
		if cfg.Backend == "truss" {
			fmt.Fprintln(out, "Please provide a model with `--model` when using truss backend. e.g. --model meta-llama/Llama-3.1-8B-Instruct")
			return nil, &ExitError{Code: ExitFailure}
		}
		m, err := ctl.firstModel(ctx)
		if err != nil {
			fmt.Fprintf(out, "Failed to fetch model from %s/v1/models. Error: %v\n", base, err)
			fmt.Fprintln(out, "Please specify the correct host and port using `--host` and `--port`.")
			return nil, &ExitError{Code: ExitFailure}
		}
		if m == "" {
			fmt.Fprintln(out, "No model specified or found. Please provide a model using `--model`.")
			return nil, &ExitError{Code: ExitFailure}
		}
		model = m
		cfg.Model = &m
	}
	if backend.IsEmbedding(cfg.Backend) {
		switch cfg.DatasetName {
		case "image", "mmmu", "mooncake":
			fmt.Fprintf(out, "%s dataset is unsupported for embeddings benchmark\n", cfg.DatasetName)
			return nil, &ExitError{Code: ExitFailure}
		}
	}
	fmt.Fprintf(out, "%s\n\n", env.Args)

	modelID := model
	if cfg.ServedModelName != nil {
		modelID = *cfg.ServedModelName
	}
	tokID := ""
	if cfg.Tokenizer != nil {
		tokID = *cfg.Tokenizer
	} else if p := ctl.tokenizerPath(ctx); p != "" {
		tokID = p
	} else {
		tokID = model
	}
	tok, err := tokenizer.Load(tokID)
	if err != nil {
		flag := "--tokenizer"
		if cfg.Tokenizer == nil {
			flag = "--model"
		}
		return nil, failure("%s: %v", flag, err)
	}

	hc := hub.FromEnv()
	hc.Progress = env.Stderr
	rows, err := dataset.Load(ctx, datasetParams(cfg), dataset.Env{
		Tok: tok, Py: py, NP: np, Out: out,
		Fetch: func(ctx context.Context, repoType, repoID, file string) (string, error) {
			return hc.Download(ctx, repoType, repoID, file, "main")
		},
	})
	if err != nil {
		return nil, failure("%v", err)
	}
	if len(rows) == 0 {
		return nil, failure("--dataset-name %s: the dataset produced no requests", cfg.DatasetName)
	}

	var lora schedule.LoRA
	if cfg.LoraName != nil {
		lora = schedule.LoRA{Names: cfg.LoraName, Distribution: cfg.LoraDistribution, ZipfAlpha: cfg.LoraZipfAlpha}
	}
	slots, err := schedule.Plan(len(rows), schedule.Arrival{Rate: cfg.RequestRate, Constant: cfg.Arrival == "constant", Burstiness: cfg.Burstiness}, lora, py, np)
	if err != nil {
		return nil, usage("%v", err)
	}

	r := &runner{cfg: cfg, env: env, ctl: ctl, tok: tok, rows: rows, slots: slots, extra: extra, model: modelID}
	if err := r.setup(base, auth); err != nil {
		return nil, err
	}
	return r.run(ctx, outFile)
}

// runner holds one run's moving parts from warmup to the result line.
type runner struct {
	cfg    *Config
	env    Env
	ctl    *control
	tok    tokenizer.Tokenizer
	rows   []dataset.Row
	slots  []schedule.Slot
	extra  *pyjson.Object
	model  string
	client *backend.Client
	sem    chan struct{}
}

func (r *runner) setup(base string, auth http.Header) error {
	cfg := r.cfg
	h := auth.Clone()
	for k, v := range customHeaders(cfg.Header) {
		h[k] = v
	}
	maxConns := len(r.rows)
	if cfg.MaxConcurrency != nil && *cfg.MaxConcurrency > 0 {
		maxConns = *cfg.MaxConcurrency
		r.sem = make(chan struct{}, maxConns)
	}
	opt := backend.Options{
		Stream:              !cfg.DisableStream,
		IgnoreEOS:           !cfg.DisableIgnoreEOS,
		Temperature:         cfg.Temperature,
		TopP:                cfg.TopP,
		ReturnLogprob:       cfg.ReturnLogprob,
		TopLogprobsNum:      cfg.TopLogprobsNum,
		TokenIDsLogprob:     cfg.TokenIDsLogprob,
		LogprobStartLen:     cfg.LogprobStartLen,
		ReturnRoutedExperts: cfg.ReturnRoutedExperts,
		CacheReport:         cfg.CacheReport,
	}
	client, err := backend.New(cfg.Backend, base, opt, h, backend.NewHTTPClient(!cfg.NoKeepalive, maxConns))
	if err != nil {
		return usage("%v", err)
	}
	r.client = client
	return nil
}

func (r *runner) input(row *dataset.Row, outputLen int, lora string) *backend.Input {
	return &backend.Input{
		Text: row.Text, IDs: row.IDs,
		PromptLen: row.PromptLen, OutputLen: outputLen,
		Model: r.model, LoRA: lora, Extra: r.extra,
	}
}

func (r *runner) acquire(ctx context.Context) bool {
	if r.sem == nil {
		return true
	}
	select {
	case r.sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (r *runner) release() {
	if r.sem != nil {
		<-r.sem
	}
}

func (r *runner) run(ctx context.Context, outFile string) (*Result, error) {
	cfg, out := r.cfg, r.env.Stdout

	// Warmup: the first row, at most 32 output tokens, the first adapter,
	// all at once through the same concurrency limit.
	n := cfg.WarmupRequests
	fmt.Fprintf(out, "Starting warmup with %d sequences...\n", n)
	if n > 0 {
		lora := ""
		if len(cfg.LoraName) > 0 {
			lora = cfg.LoraName[0]
		}
		row := &r.rows[0]
		in := r.input(row, min(row.OutputLen, 32), lora)
		recs := make([]record.Record, n)
		var wg sync.WaitGroup
		epoch := time.Now()
		for i := range recs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if !r.acquire(ctx) {
					recs[i].Error = "interrupted"
					return
				}
				defer r.release()
				recs[i].PromptLen, recs[i].InputLen = row.PromptLen, row.PromptLen
				r.client.Do(ctx, in, &recs[i], epoch)
			}()
		}
		wg.Wait()
		ok := false
		for i := range recs {
			ok = ok || recs[i].Success
		}
		if !ok {
			fmt.Fprintf(out, "Warmup failed - Please make sure benchmark arguments are correctly specified. Error: %s\n", recs[0].Error)
			return nil, failure("warmup failed: %s", recs[0].Error)
		}
	}
	fmt.Fprintf(out, "Warmup completed with %d sequences. Starting main benchmark run...\n", n)

	if cfg.FlushCache || (strings.Contains(cfg.Backend, "sglang") && truthy(r.env.Getenv("SGLANG_IS_IN_CI"))) {
		if err := r.ctl.flush(ctx, cfg.Backend, cfg.FlushCacheTimeout); err != nil {
			return nil, failure("%v", err)
		}
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
	}
	prof := &profiler{cfg: cfg, ctl: r.ctl, out: out, getenv: r.env.Getenv}
	prof.start(ctx)

	var bar *progress
	if r.env.Progress {
		bar = newProgress(r.env.Stderr, len(r.rows))
	}
	recs := make([]record.Record, len(r.rows))
	check := startSelfCheck(len(r.rows))
	start := time.Now()
	end := r.dispatch(ctx, recs, start, bar, check)
	check.stop()
	dur := end.Sub(start).Seconds()

	prof.stop(ctx)
	bar.close()

	info := r.ctl.serverInfo(ctx)
	var accept *float64
	if strings.Contains(cfg.Backend, "sglang") {
		accept = acceptLength(info)
	}
	sum := metrics.Compute(recs, dur, r.tok, metrics.Options{Backend: cfg.Backend, AcceptLength: accept, CacheReport: cfg.CacheReport})
	checked := check.finish(dur, cfg.RequestRate, r.slots[len(r.slots)-1].At.Seconds(), recs, sum.TotalOutput)

	run := report.Run{
		Backend:           cfg.Backend,
		DatasetName:       cfg.DatasetName,
		RequestRate:       cfg.RequestRate,
		Trace:             cfg.UseTraceTimestamps,
		MaxConcurrency:    cfg.MaxConcurrency,
		Tag:               cfg.Tag,
		SharegptOutputLen: cfg.SharegptOutputLen,
		RandomInputLen:    cfg.RandomInputLen,
		RandomOutputLen:   cfg.RandomOutputLen,
		RandomRangeRatio:  cfg.RandomRangeRatio,
		ServerInfo:        info,
		CacheReport:       cfg.CacheReport,
		OutputDetails:     cfg.OutputDetails,
		Extra:             checked.extra(sum.Failed),
	}
	if cfg.PlotThroughput {
		if err := report.Plot(out, sum); err != nil {
			return nil, err
		}
	}
	if err := report.Console(out, run, sum); err != nil {
		return nil, err
	}
	titled, order := checked.rows(backend.IsEmbedding(cfg.Backend))
	if err := report.Section(out, titled, order); err != nil {
		return nil, err
	}
	if err := report.Append(outFile, report.Line(run, sum, recs)); err != nil {
		return nil, failure("--output-file: %v", err)
	}
	res := &Result{Summary: sum, Records: recs, OutputFile: outFile}
	if sum.Completed == 0 {
		first := ""
		for i := range recs {
			if recs[i].Error != "" {
				first = recs[i].Error
				break
			}
		}
		return res, &ExitError{Code: ExitAllFailed, Msg: sprintf("all %d requests failed; first error: %s", len(recs), first)}
	}
	return res, nil
}

// dispatch sends every row at its planned time and waits for all of them;
// it returns when the last response ended.
func (r *runner) dispatch(ctx context.Context, recs []record.Record, start time.Time, bar *progress, check *selfCheck) time.Time {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		last = start
	)
	for i := range r.rows {
		rec := &recs[i]
		row := &r.rows[i]
		rec.Seq = i
		rec.Intended = r.slots[i].At.Seconds()
		rec.InputLen, rec.InputTextLen, rec.InputVisionLen = row.PromptLen, row.TextPromptLen, row.VisionPromptLen
		rec.PromptLen, rec.OutputLen = row.PromptLen, row.OutputLen
		deadline := start.Add(r.slots[i].At)
		if !schedule.WaitUntil(ctx, deadline) {
			rec.Error = "not sent: the run was interrupted"
			continue
		}
		check.lags = append(check.lags, time.Since(deadline).Seconds())
		if !r.acquire(ctx) {
			rec.Error = "not sent: the run was interrupted"
			continue
		}
		rec.Sent = true
		in := r.input(row, row.OutputLen, r.slots[i].LoRA)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.release()
			rid, started := r.printStart(rec, in), unixTime()
			r.client.Do(ctx, in, rec, start)
			r.printEnd(rid, started, rec)
			done := time.Now()
			mu.Lock()
			if done.After(last) {
				last = done
			}
			mu.Unlock()
			bar.add()
		}()
	}
	wg.Wait()
	return last
}

// printStart and printEnd are --print-requests: one line when a request
// starts and one when it ends, in the reference's shape (prompt and text
// elided as "...").
func (r *runner) printStart(rec *record.Record, in *backend.Input) string {
	if !r.cfg.PrintRequests {
		return ""
	}
	rid := uuid4()
	lora := "None"
	if in.LoRA != "" {
		lora = pyfmt.Quote(in.LoRA)
	}
	extra := "{}"
	if in.Extra != nil && in.Extra.Len() > 0 {
		extra = string(in.Extra.Bytes())
	}
	fmt.Fprintf(r.env.Stdout, "rid=%s time=%s message=\"request start\" request_func_input=\"RequestFuncInput(prompt='...', api_url=%s, prompt_len=%d, output_len=%d, model=%s, lora_name=%s, image_data=None, extra_request_body=%s, timestamp=None, routing_key=None)\"\n",
		rid, pyfmt.Float(unixTime()), pyfmt.Quote(r.client.URL()), in.PromptLen, in.OutputLen, pyfmt.Quote(in.Model), lora, extra)
	return rid
}

func (r *runner) printEnd(rid string, started float64, rec *record.Record) {
	if !r.cfg.PrintRequests {
		return
	}
	now := unixTime()
	itl := make([]string, len(rec.ITL))
	for i, v := range rec.ITL {
		itl[i] = pyfmt.Float(v)
	}
	fmt.Fprintf(r.env.Stdout, "rid=%s time=%s time_delta=%s message=\"request end\" output=\"RequestFuncOutput(generated_text='...', success=%s, latency=%s, ttft=%s, tpot=None, itl=[%s], prompt_len=%d, error=%s, output_len=%d, start_time=%s, cached_tokens=%d)\"\n",
		rid, pyfmt.Float(now), pyfmt.Float(now-started), pyBool(rec.Success), pyfmt.Float(rec.Latency), pyfmt.Float(rec.TTFT),
		strings.Join(itl, ", "), rec.PromptLen, pyfmt.Quote(rec.Error), rec.OutputLen, pyfmt.Float(rec.Start), rec.CachedTokens)
}

// unixTime is time.time(): wall-clock seconds.
func unixTime() float64 { return float64(time.Now().UnixNano()) / 1e9 }

// uuid4 is str(uuid.uuid4()).
func uuid4() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// checkSupported refuses what this version does not implement, before any
// network or dataset work.
func checkSupported(cfg *Config) error {
	switch cfg.DatasetName {
	case "random", "random-ids", "sharegpt":
	default:
		return usage("--dataset-name %s: not supported yet (this version has random, random-ids and sharegpt)", cfg.DatasetName)
	}
	if cfg.Backend == "gserver" {
		return usage("--backend gserver: not implemented (the reference tool raises NotImplementedError for it too)")
	}
	if cfg.UseTraceTimestamps {
		return usage("--use-trace-timestamps: needs a trace dataset (mooncake), which is not supported yet")
	}
	if cfg.ApplyChatTemplate && cfg.DatasetName == "sharegpt" {
		return usage("--apply-chat-template: chat templates need a Hugging Face tokenizer, which is not supported yet")
	}
	if cfg.PrintRequests && cfg.Backend != "sglang-oai-chat" {
		return usage("--print-requests: only supported with --backend sglang-oai-chat (as in the reference tool)")
	}
	if cfg.TokenizePrompt && cfg.Backend != "sglang" {
		return usage("--tokenize-prompt: only compatible with --backend sglang")
	}
	if (cfg.LoraDistribution == "distinct" || cfg.LoraDistribution == "skewed") && len(cfg.LoraName) < 2 {
		return usage("--lora-request-distribution %s: needs at least 2 names in --lora-name", cfg.LoraDistribution)
	}
	if !(cfg.LoraZipfAlpha > 1) {
		return usage("--lora-zipf-alpha: must be greater than 1, got %s", strconv.FormatFloat(cfg.LoraZipfAlpha, 'g', -1, 64))
	}
	if cfg.NumPrompts < 0 {
		return usage("--num-prompts: must not be negative, got %d", cfg.NumPrompts)
	}
	if cfg.MaxConcurrency != nil && *cfg.MaxConcurrency < 0 {
		return usage("--max-concurrency: must not be negative, got %d", *cfg.MaxConcurrency)
	}
	if cfg.WarmupRequests < 0 {
		return usage("--warmup-requests: must not be negative, got %d", cfg.WarmupRequests)
	}
	return nil
}

func datasetParams(cfg *Config) dataset.Params {
	return dataset.Params{
		Name:               cfg.DatasetName,
		Path:               cfg.DatasetPath,
		NumPrompts:         cfg.NumPrompts,
		SharegptOutputLen:  cfg.SharegptOutputLen,
		SharegptContextLen: cfg.SharegptContextLen,
		RandomInputLen:     cfg.RandomInputLen,
		RandomOutputLen:    cfg.RandomOutputLen,
		RandomRangeRatio:   cfg.RandomRangeRatio,
		TokenizePrompt:     cfg.TokenizePrompt,
		PromptSuffix:       cfg.PromptSuffix,
		ApplyChatTemplate:  cfg.ApplyChatTemplate,
	}
}

// baseURL is --base-url, else http://host:port with an IPv6 host bracketed.
func baseURL(cfg *Config, port int) string {
	if cfg.BaseURL != nil {
		return strings.TrimRight(*cfg.BaseURL, "/")
	}
	host := cfg.Host
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		return "http://" + net.JoinHostPort(host, strconv.Itoa(port))
	}
	return "http://" + host + ":" + strconv.Itoa(port)
}

func outputFile(cfg *Config, now time.Time) string {
	if cfg.OutputFile != nil {
		return *cfg.OutputFile
	}
	return report.FileName(report.NameParams{
		Backend:         cfg.Backend,
		DatasetName:     cfg.DatasetName,
		NumPrompts:      cfg.NumPrompts,
		RandomInputLen:  cfg.RandomInputLen,
		RandomOutputLen: cfg.RandomOutputLen,
		ImageCount:      cfg.ImageCount,
		ImageResolution: cfg.ImageResolution,
	}, now)
}

// authHeader is Authorization: Bearer $OPENAI_API_KEY, else $API_KEY verbatim.
func authHeader(getenv func(string) string) http.Header {
	h := http.Header{}
	if k := getenv("OPENAI_API_KEY"); k != "" {
		h.Set("Authorization", "Bearer "+k)
	} else if k := getenv("API_KEY"); k != "" {
		h.Set("Authorization", k)
	}
	return h
}

// customHeaders parses --header Key=Value items, split on the first '=';
// items with an empty key or value are dropped, as the reference does.
func customHeaders(items []string) http.Header {
	h := http.Header{}
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			continue
		}
		h[http.CanonicalHeaderKey(k)] = []string{v}
	}
	return h
}

func truthy(s string) bool {
	s = strings.ToLower(s)
	return s == "true" || s == "1"
}

// raiseFileLimit lifts the soft open-files limit to 65535 (or the hard
// limit, if lower), as the reference does, so thousands of streams fit.
func raiseFileLimit(out io.Writer) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return
	}
	const target = 65535
	if lim.Cur >= target {
		return
	}
	lim.Cur = min(target, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintf(out, "Fail to set RLIMIT_NOFILE: %v\n", err)
	}
}

// profileDir is the absolute --profile-output-dir (default
// $SGLANG_TORCH_PROFILER_DIR, else /tmp) with the Unix time appended; the
// client creates it, as the reference does.
func profileDir(cfg *Config, getenv func(string) string) string {
	dir := "/tmp"
	if cfg.ProfileOutputDir != nil {
		dir = *cfg.ProfileOutputDir
	} else if d := getenv("SGLANG_TORCH_PROFILER_DIR"); d != "" {
		dir = d
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	return filepath.Join(abs, strconv.FormatFloat(float64(time.Now().UnixNano())/1e9, 'f', -1, 64))
}
