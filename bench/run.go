package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
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
	"benchserve/internal/syncio"
	"benchserve/internal/version"
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
	// Namespace prints the flags as Python prints an argparse Namespace.
	// It is called again once the run has filled in what the reference
	// sets on its args (the detected model, the default port).
	Namespace func(*Config) string
	// Progress turns the progress bar on (stderr is a terminal and
	// --disable-tqdm was not given).
	Progress bool
	// Now gives the wall clock, for the output file's name.
	Now func() time.Time
	// Interrupt is closed when the user asks the run to stop (the first
	// SIGINT or SIGTERM): no more requests are sent, those in flight get
	// Grace to finish, and the result covers what completed.
	Interrupt <-chan struct{}
	// Grace is how long requests in flight may finish after an interrupt
	// (0: DefaultGrace).
	Grace time.Duration
}

// DefaultGrace is how long requests in flight may finish after an interrupt.
const DefaultGrace = 5 * time.Second

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
	if env.Grace <= 0 {
		env.Grace = DefaultGrace
	}
	// Request goroutines print (--print-requests) and so does the
	// interrupt notice: each write must land whole.
	env.Stdout, env.Stderr = syncio.Locked(env.Stdout), syncio.Locked(env.Stderr)
	// Until the measured run starts there is nothing to keep: an interrupt
	// ends the setup at once.
	setup, cancel := context.WithCancel(ctx)
	defer cancel()
	stopOnInterrupt(setup, env.Interrupt, cancel)
	res, err := run(setup, ctx, cfg, env)
	if err != nil && setup.Err() != nil && interrupted(env.Interrupt) {
		if res == nil {
			return nil, &ExitError{Code: ExitInterrupted, Msg: "interrupted before the benchmark started: nothing to report"}
		}
	}
	return res, err
}

// stopOnInterrupt calls cancel when interrupt closes (or ctx ends first).
func stopOnInterrupt(ctx context.Context, interrupt <-chan struct{}, cancel func()) {
	if interrupt == nil {
		return
	}
	go func() {
		select {
		case <-interrupt:
			cancel()
		case <-ctx.Done():
		}
	}()
}

func interrupted(interrupt <-chan struct{}) bool {
	if interrupt == nil {
		return false
	}
	select {
	case <-interrupt:
		return true
	default:
		return false
	}
}

// run is Run with ctx, which an interrupt cancels, for the setup and the
// dispatching, and parent, which it does not, for requests in flight and
// the calls after the run.
func run(ctx, parent context.Context, cfg *Config, env Env) (*Result, error) {
	out := env.Stdout
	if err := checkSupported(cfg); err != nil {
		return nil, err
	}
	if err := validate(cfg); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "benchmark_args=%s\n", env.args(cfg))
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
	hopt, err := clientOptions(cfg)
	if err != nil {
		return nil, usage("%v", err)
	}
	ctl := &control{base: base, auth: auth, http: backend.NewHTTPClient(hopt)}

	if cfg.ReadyCheckTimeoutSec > 0 {
		health := base + "/v1/models"
		if cfg.Backend == "trt" {
			health = base
		}
		if err := ctl.waitReady(ctx, out, health, cfg.ReadyCheckTimeoutSec); err != nil {
			return nil, err
		}
	}

	model, detected := "", cfg.Model == nil
	if cfg.Model != nil {
		model = *cfg.Model
	} else {
		m, err := ctl.firstModel(ctx)
		if err != nil {
			fmt.Fprintf(out, "Failed to fetch model from %s/v1/models. Error: %v\n", redact(base), err)
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
	settleArgs(cfg, port)
	fmt.Fprintf(out, "%s\n\n", env.args(cfg))

	modelID := model
	if cfg.ServedModelName != nil {
		modelID = *cfg.ServedModelName
	}
	tokID, tokFrom := tokenizerID(ctx, cfg, ctl, model, detected)
	hc := hub.FromEnv(env.Getenv)
	hc.Progress = env.Stderr
	tok, err := tokenizer.Resolve(ctx, tokID, tokenizer.ResolveOptions{Hub: hc, Getenv: env.Getenv})
	if err != nil {
		return nil, tokenizerError(tokFrom, err)
	}
	rows, err := dataset.Load(ctx, datasetParams(cfg, model), dataset.Env{
		Tok: tok, Py: py, NP: np, Out: out, CacheDir: userCache(env.Getenv),
		Progress: env.Stderr, // long builds say how far they are; stdout keeps the reference's lines
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
	slots, err := plan(cfg, rows, lora, py, np, out)
	if err != nil {
		return nil, err
	}

	r := &runner{cfg: cfg, env: env, ctl: ctl, tok: tok, rows: rows, slots: slots, extra: extra, model: modelID, gate: &backend.Gate{}}
	if err := r.setup(base, auth, hopt); err != nil {
		return nil, err
	}
	// Idle keep-alive connections are closed when the run ends, so a
	// process that runs several benchmarks does not pile them up.
	defer r.client.CloseIdleConnections()
	defer ctl.http.CloseIdleConnections()
	return r.run(ctx, parent, outFile)
}

func floats(v []float64) []byte {
	b := []byte{'['}
	for i, f := range v {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = pyjson.AppendFloat(b, f)
	}
	return append(b, ']')
}

func conversations(rows []dataset.Row) bool {
	for i := range rows {
		if rows[i].Turns != nil {
			return true
		}
	}
	return false
}

// errorKinds counts the failed records by kind, as a JSON object in the
// order the kinds first appear.
func errorKinds(recs []record.Record) []byte {
	o := &pyjson.Object{}
	counts := map[string]int{}
	var order []string
	for i := range recs {
		if recs[i].Success {
			continue
		}
		k := recs[i].ErrorKind
		if k == "" {
			k = record.KindOther
		}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	for _, k := range order {
		o.Set(k, pyjson.Int(counts[k]))
	}
	return o.Bytes()
}

// plan schedules the rows: by their trace times when they carry them
// (sorted by time, stretched by --mooncake-slowdown-factor; unlike the
// reference, whose --use-trace-timestamps only relabels the rate, the times
// really drive sending), else by --request-rate and --arrival.
func plan(cfg *Config, rows []dataset.Row, lora schedule.LoRA, py *pyrand.Python, np *pyrand.NumPy, out io.Writer) ([]schedule.Slot, error) {
	timed := rows[0].HasTimestamp
	if !timed {
		if cfg.UseTraceTimestamps {
			return nil, usage("--use-trace-timestamps: the %s dataset has no timestamps", cfg.DatasetName)
		}
		slots, err := schedule.Plan(len(rows), schedule.Arrival{Rate: cfg.RequestRate, Constant: cfg.Arrival == "constant", Burstiness: cfg.Burstiness}, lora, py, np)
		if err != nil {
			return nil, usage("%v", err)
		}
		return slots, nil
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Timestamp < rows[j].Timestamp })
	times := make([]float64, len(rows))
	for i := range rows {
		times[i] = rows[i].Timestamp
	}
	fmt.Fprintf(out, "Sending each request at its trace time (slowdown factor %s), ignoring --request-rate.\n", pyfmt.Float(cfg.MooncakeSlowdown))
	slots, err := schedule.PlanTrace(times, cfg.MooncakeSlowdown, lora, py, np)
	if err != nil {
		return nil, usage("%v", err)
	}
	return slots, nil
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
	// gate closes at the interrupt: no request is written after it.
	gate *backend.Gate
	// runawayOnce: the warning of a reply past its length comes once.
	runawayOnce sync.Once
	// recFile is --record-file, set once the warmup is over.
	recFile *recordFile
}

// preconnects is how many connections to open before the run: the
// concurrency limit, or every request of a burst, else a few; never more
// than 4096.
func (r *runner) preconnects() int {
	n := min(len(r.rows), 64)
	switch {
	case r.sem != nil:
		n = min(len(r.rows), cap(r.sem))
	case math.IsInf(r.cfg.RequestRate, 1):
		n = len(r.rows)
	}
	return min(n, 4096)
}

func (r *runner) setup(base string, auth http.Header, hopt backend.ClientOptions) error {
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
	hopt.KeepAlive, hopt.MaxConns = !cfg.NoKeepalive, maxConns
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
	if cfg.RequestTimeout != nil {
		opt.Timeout = seconds(*cfg.RequestTimeout)
	}
	// Each reply's tokens are counted when it ends; its text is then kept
	// only where something still needs it: the details, the next round of
	// a conversation, or the chunks the metrics retokenize for sglang-oai*.
	opt.Counter = r.tok
	opt.Runaway = r.runaway
	opt.DropText = !cfg.OutputDetails && !cfg.PrintRequests && !conversations(r.rows) &&
		cfg.Backend != "sglang-oai" && cfg.Backend != "sglang-oai-chat"
	client, err := backend.New(cfg.Backend, base, opt, h, backend.NewHTTPClient(hopt))
	if err != nil {
		return usage("%v", err)
	}
	r.client = client
	return nil
}

func (r *runner) run(ctx, parent context.Context, outFile string) (*Result, error) {
	cfg, out := r.cfg, r.env.Stdout

	n := cfg.WarmupRequests
	fmt.Fprintf(out, "Starting warmup with %d sequences...\n", n)
	if err := r.warmup(ctx, n); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "Warmup completed with %d sequences. Starting main benchmark run...\n", n)

	flush := cfg.FlushCache || (strings.Contains(cfg.Backend, "sglang") && truthy(r.env.Getenv("SGLANG_IS_IN_CI")))
	if flush {
		if err := r.ctl.flush(ctx, cfg.Backend, cfg.FlushCacheTimeout); err != nil {
			return nil, failure("%v", err)
		}
	}
	// The reference pauses 1 s here so the server settles after the
	// warmup and the flush; with neither there is nothing to settle.
	if n > 0 || flush {
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	prof := &profiler{cfg: cfg, ctl: r.ctl, out: out, getenv: r.env.Getenv}
	prof.start(ctx)
	defer prof.cleanup()

	var bar *progress
	if r.env.Progress {
		bar = newProgress(r.env.Stderr, len(r.rows))
	}
	recs := r.records()
	if cfg.RecordFile != nil {
		rf, err := openRecordFile(*cfg.RecordFile)
		if err != nil {
			return nil, failure("%v", err)
		}
		r.recFile = rf
		defer func() {
			if err := rf.close(); err != nil {
				fmt.Fprintf(r.env.Stderr, "benchserve: error: %v\n", err)
			}
		}()
	}
	// Requests in flight outlive an interrupt by the grace period.
	inflight, cancelInflight := context.WithCancel(parent)
	defer cancelInflight()
	go func() {
		select {
		case <-r.env.Interrupt:
			go r.gate.Close()
			fmt.Fprintf(r.env.Stderr, "\nInterrupted: no more requests will be sent; those in flight have %v to finish. Interrupt again to exit now.\n", r.env.Grace)
			select {
			case <-time.After(r.env.Grace):
				cancelInflight()
			case <-inflight.Done():
			}
		case <-inflight.Done():
		}
	}()
	// Connections are opened before the clock starts, as many as the run
	// will have in flight at first, so that no measured TTFT pays for a
	// TCP connect (the reference connects inside every request; see
	// --no-keepalive).
	// A server or gateway that caps connections refuses some: the run goes
	// on with those it has, and the rest connect as requests need them.
	if want := r.preconnects(); want > 0 {
		if got, err := r.client.Preconnect(ctx, want); err != nil && ctx.Err() == nil {
			fmt.Fprintf(r.env.Stderr, "benchserve: warning: opened %d of %d connections to %s before the run (%v); the others connect when needed, and their first requests' TTFT includes the connect\n", got, want, redact(r.client.URL()), err)
		}
	}
	// The read delays so far are the warmup's.
	r.client.ResetTiming()
	check := startSelfCheck(len(recs), cfg.Sim)
	start := time.Now()
	end := r.dispatch(ctx, inflight, recs, start, bar, check)
	check.stop()
	dur := end.Sub(start).Seconds()
	stopped := interrupted(r.env.Interrupt)
	var notSent, cancelled int
	if stopped {
		recs, notSent, cancelled = completedOnly(recs)
	}

	prof.stop(parent)
	bar.close()

	info := r.ctl.serverInfo(parent)
	var accept *float64
	if strings.Contains(cfg.Backend, "sglang") {
		accept = acceptLength(info)
	}
	sum := metrics.Compute(recs, dur, r.tok, metrics.Options{ChunkLens: r.client.Spec().ChunkLens, AcceptLength: accept, CacheReport: cfg.CacheReport})
	checked := check.finish(checkRun{
		dur: dur, rate: cfg.RequestRate, closed: math.IsInf(cfg.RequestRate, 1) && !r.rows[0].HasTimestamp,
		slots: len(r.slots), last: r.slots[len(r.slots)-1].At.Seconds(), outputTokens: sum.TotalOutput,
		readDelay: r.client.ReadDelays(),
	}, recs)

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
	run.Extra.Set("errors_by_kind", errorKinds(recs))
	// The run's start on the wall clock, to line records up with server
	// logs (each record's send time is an offset from it).
	run.Extra.Set("benchmark_start_unix", pyjson.Float(float64(start.UnixNano())/1e9))
	run.Extra.Set("client_version", pyjson.String(version.String()))
	if cfg.OutputDetails {
		ids := make([]string, len(recs))
		serverIDs := make([]string, len(recs))
		starts := make([]float64, len(recs))
		own := false
		for i := range recs {
			ids[i], serverIDs[i], starts[i] = recs[i].ID, recs[i].ServerID, recs[i].Start
			own = own || recs[i].ServerID != ""
		}
		run.Extra.Set("request_ids", pyjson.Strings(ids))
		if own {
			run.Extra.Set("server_request_ids", pyjson.Strings(serverIDs))
		}
		run.Extra.Set("send_times", floats(starts))
	}
	if stopped {
		run.Extra.Set("interrupted", pyjson.Bool(true))
		run.Extra.Set("not_sent", pyjson.Int(notSent))
		run.Extra.Set("cancelled_in_flight", pyjson.Int(cancelled))
		fmt.Fprintf(out, "Interrupted: %d requests were not sent and %d were cancelled in flight; the figures below cover the %d that finished.\n", notSent, cancelled, len(recs))
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
	if top := commonErrors(recs, 3); len(top) > 0 {
		const title = "Most common errors"
		titled[title] = top
		order = append([]string{title}, order...)
	}
	if err := report.Section(out, titled, order); err != nil {
		return nil, err
	}
	if err := report.Append(outFile, report.Line(run, sum, recs)); err != nil {
		return nil, failure("--output-file: %v", err)
	}
	res := &Result{Summary: sum, Records: recs, OutputFile: outFile}
	if stopped {
		return res, &ExitError{Code: ExitInterrupted, Msg: sprintf("interrupted; the result line for the %d requests that finished was appended to %s", len(recs), outFile)}
	}
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

// checkSupported refuses what this version does not implement, before any
// network or dataset work.
func checkSupported(cfg *Config) error {
	if cfg.Backend == "gserver" {
		return usage("--backend gserver: not implemented (the reference tool raises NotImplementedError for it too)")
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

// userCache is where datasets keep what they reuse between runs:
// $XDG_CACHE_HOME/benchserve, else ~/.cache/benchserve.
func userCache(getenv func(string) string) string {
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "benchserve")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "benchserve")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "benchserve")
	}
	return filepath.Join(d, "benchserve")
}

// redact hides a password in a URL (https://user:xxxxx@host), so that
// credentials in --base-url never reach the console or the result.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	return p.Redacted()
}

// clientOptions are the HTTP settings from --connect-timeout, --cacert and
// --insecure, shared by the requests and the control-plane calls.
func clientOptions(cfg *Config) (backend.ClientOptions, error) {
	var o backend.ClientOptions
	if cfg.RequestTimeout != nil && !(*cfg.RequestTimeout > 0) {
		return o, fmt.Errorf("--request-timeout: must be > 0 seconds, got %v", *cfg.RequestTimeout)
	}
	if !(cfg.ConnectTimeout >= 0) || math.IsInf(cfg.ConnectTimeout, 0) {
		return o, fmt.Errorf("--connect-timeout: must be a finite number >= 0, got %v", cfg.ConnectTimeout)
	}
	o.ConnectTimeout = seconds(cfg.ConnectTimeout)
	cacert := ""
	if cfg.CACert != nil {
		cacert = *cfg.CACert
	}
	tls, err := backend.TLSConfig(cacert, cfg.Insecure)
	o.TLS = tls
	return o, err
}

func seconds(s float64) time.Duration {
	if s > float64(math.MaxInt64)/1e9 {
		return math.MaxInt64
	}
	return time.Duration(s * float64(time.Second))
}

func datasetParams(cfg *Config, model string) dataset.Params {
	p := cfg.Params
	p.Name, p.Path, p.Model = cfg.DatasetName, cfg.DatasetPath, model
	p.Backend = datasetBackend(cfg.Backend)
	return p
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
