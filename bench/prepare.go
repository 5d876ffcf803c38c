package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"sync"

	"benchserve/backend"
	"benchserve/dataset"
	"benchserve/hub"
	"benchserve/internal/exit"
	"benchserve/internal/py/pyjson"
	"benchserve/internal/py/pyrand"
	"benchserve/schedule"
	"benchserve/serverctl"
	"benchserve/tokenizer"
	"net/http"
	"time"
)

// Plan is a run made ready to execute: the server checked, the model and
// tokenizer found, the rows built and scheduled, the client made. Execute
// may run one Plan more than once (a sweep prepares once).
type Plan struct {
	Config *Config
	Env    Env
	// Server is the control plane, Client the requests' sender.
	Server *serverctl.Server
	Client *backend.Client
	Tok    tokenizer.Tokenizer
	// Rows are the requests to send (a conversation is one row of several
	// rounds), Slots their schedule, one each.
	Rows  []dataset.Row
	Slots []schedule.Slot
	// Model is the model name the requests carry (--served-model-name,
	// else the model).
	Model string
	// Extra is the extra request body every request merges in.
	Extra *pyjson.Object
	// OutputFile is where the result line goes.
	OutputFile string

	// URLs are the run's servers (--base-url's items; one unless several
	// were given), with a control plane and a client each, in the same
	// order: Servers[0] is Server, Clients[0] Client.
	URLs    []string
	Servers []*serverctl.Server
	Clients []*backend.Client

	// gates and traffic are the parsed SLO and load flags. cyclic: a
	// closed loop by time, whose Slots are one cycle reused until the
	// duration ends. warmupSlots is --warmup-duration's plan (cyclic like
	// the run's when warmupCyclic); capSteps the concurrency ramp's.
	gates        gates
	traffic      traffic
	cyclic       bool
	warmupSlots  []schedule.Slot
	warmupCyclic bool
	capSteps     []time.Duration

	// runawayOnce: the warning of a reply past its length comes once.
	runawayOnce *sync.Once
	// py and np are the random state after the rows were built, before
	// the schedule's draws: At plans again from them.
	py   pyrand.Python
	np   pyrand.NumPy
	lora schedule.LoRA
	// tokID names the tokenizer (a saved plan's header says it); replay
	// is the plan file a replay sends (nil: the rows are a dataset's).
	tokID  string
	replay *replay
	// ab is an A/B run's side B (benchserve ab; nil otherwise): Clients,
	// Servers and URLs then hold A then B.
	ab *abPlan
}

// Close closes the idle keep-alive connections, so that a process that
// runs several benchmarks does not pile them up.
func (p *Plan) Close() {
	for _, c := range p.clients() {
		c.CloseIdleConnections()
	}
	p.closeServers()
}

// closeServers closes the control planes' idle connections.
func (p *Plan) closeServers() {
	p.Server.HTTP.CloseIdleConnections()
	for _, s := range p.Servers {
		s.HTTP.CloseIdleConnections()
	}
}

// Closed reports a closed-loop run: no request has an intended send time
// of its own (--request-rate inf without a ramp or trace times; a replay
// whose offsets are all 0).
func (p *Plan) Closed() bool {
	if p.replay != nil {
		return p.Slots[len(p.Slots)-1].At == 0
	}
	return math.IsInf(p.Config.RequestRate, 1) && p.traffic.ramp == nil && !p.Rows[0].HasTimestamp
}

// Prepare does what the reference does before its warmup: checks the
// flags, waits for the server, finds the model and the tokenizer, builds
// the rows and their schedule, and makes the client; with the reference's
// printed lines. ctx ends it (the interrupt).
func Prepare(ctx context.Context, cfg *Config, env Env) (*Plan, error) {
	env = env.withDefaults()
	out := env.Stdout
	if err := checkSupported(cfg); err != nil {
		return nil, err
	}
	if err := validate(cfg); err != nil {
		return nil, err
	}
	ld, g, err := parseOurs(cfg)
	if err != nil {
		return nil, err
	}
	rp, err := checkPlanFlags(cfg, ld)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "benchmark_args=%s\n", env.args(cfg))
	raiseFileLimit(out)

	if cfg.Seed < 0 || cfg.Seed > math.MaxUint32 {
		return nil, usage("--seed: must be between 0 and 2**32 - 1, got %d", cfg.Seed)
	}
	py := pyrand.NewPython(int64(cfg.Seed))
	np := pyrand.NewNumPy(uint32(cfg.Seed))
	extra, err := extraBody(cfg, out)
	if err != nil {
		return nil, err
	}

	port := backend.DefaultPort(cfg.Backend)
	if cfg.Port != nil {
		port = *cfg.Port
	}
	bases := baseURLs(cfg, port)
	base := bases[0]
	p := &Plan{Config: cfg, Env: env, Extra: extra, OutputFile: outputFile(cfg, env.Now()), gates: g, traffic: ld, runawayOnce: &sync.Once{}, replay: rp}
	if err := checkFiles(cfg, p.OutputFile, rp != nil); err != nil {
		return nil, err
	}
	auth := authHeader(env.Getenv)
	if spec, ok := backend.Lookup(cfg.Backend); ok {
		auth = spec.Auth(auth, env.Getenv)
	}
	if err := checkH2(cfg, bases, env.Getenv); err != nil {
		return nil, err
	}
	hopt, err := clientOptions(cfg)
	if err != nil {
		return nil, usage("%v", err)
	}
	hopt.Receive = env.Receive
	if hopt.Proxy, err = proxyFor(base, env); err != nil {
		return nil, usage("%v", err)
	}
	for _, b := range bases[1:] {
		if _, err := proxyFor(b, env); err != nil {
			return nil, usage("%v", err)
		}
	}
	p.Server = &serverctl.Server{Base: base, Auth: auth, HTTP: httpClient(cfg, hopt)}
	p.URLs, p.Servers = bases, []*serverctl.Server{p.Server}
	for _, b := range bases[1:] {
		p.Servers = append(p.Servers, &serverctl.Server{Base: b, Auth: auth, HTTP: httpClient(cfg, hopt)})
	}
	model, detected, err := p.findModel(ctx, cfg, base)
	if err == nil {
		err = p.checkReplicas(ctx, model, detected)
	}
	if err != nil {
		p.closeServers()
		return nil, err
	}
	settleArgs(cfg, port)
	fmt.Fprintf(out, "%s\n\n", env.args(cfg))
	p.Model = model
	if cfg.ServedModelName != nil {
		p.Model = *cfg.ServedModelName
	}
	if err := p.load(ctx, model, detected, py, np); err != nil {
		p.closeServers()
		return nil, err
	}
	for _, b := range bases {
		if err := p.makeClient(b, auth, hopt); err != nil {
			p.closeServers()
			return nil, err
		}
	}
	if rp != nil {
		own := auth.Clone()
		for k, v := range customHeaders(cfg.Header) {
			own[k] = v
		}
		rp.keepOwnHeaders(own)
	}
	if cfg.SavePlan != nil {
		if err := p.savePlan(); err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}

// extraBody is --extra-request-body with what --cache-report and
// --fake-prefill add to it.
func extraBody(cfg *Config, out io.Writer) (*pyjson.Object, error) {
	extra := &pyjson.Object{}
	// An empty one is none, as the reference's "if args.extra_request_body".
	if cfg.ExtraRequestBody != nil && *cfg.ExtraRequestBody != "" {
		var err error
		if extra, err = pyjson.ParseObject([]byte(*cfg.ExtraRequestBody)); err != nil {
			return nil, usage("--extra-request-body: %v", err)
		}
	}
	if cfg.CacheReport {
		spec, _ := backend.Lookup(cfg.Backend)
		switch spec.CacheReport {
		case backend.CacheInMeta:
		case backend.CacheAsk:
			extra.Set("return_cached_tokens_details", pyjson.Bool(true))
		default:
			fmt.Fprintln(out, "WARNING: --cache-report is only supported with sglang backends.")
		}
	}
	if cfg.FakePrefill {
		extra.Set("bootstrap_host", pyjson.String("2.2.2.2"))
		extra.Set("bootstrap_room", pyjson.Int(0))
	}
	return extra, nil
}

// findModel waits for the server to be ready, then returns --model, else
// the first model /v1/models lists (detected), as the reference does.
func (p *Plan) findModel(ctx context.Context, cfg *Config, base string) (model string, detected bool, err error) {
	out := p.Env.Stdout
	if cfg.ReadyCheckTimeoutSec > 0 {
		spec, _ := backend.Lookup(cfg.Backend)
		health := base + spec.ReadyPath
		if err := p.Server.WaitReady(ctx, out, health, cfg.ReadyCheckTimeoutSec); err != nil {
			return "", false, failure("%v", err)
		}
	}
	if cfg.Model != nil {
		return *cfg.Model, false, nil
	}
	m, err := p.Server.FirstModel(ctx)
	if err != nil {
		fmt.Fprintf(out, "Failed to fetch model from %s/v1/models. Error: %v\n", serverctl.Redact(base), err)
		fmt.Fprintln(out, "Please specify the correct host and port using `--host` and `--port`.")
		return "", false, &exit.Error{Code: exit.Failure}
	}
	if m == "" {
		fmt.Fprintln(out, "No model specified or found. Please provide a model using `--model`.")
		return "", false, &exit.Error{Code: exit.Failure}
	}
	cfg.Model = &m
	return m, true, nil
}

// load resolves the tokenizer and builds and schedules the rows (or, for
// a replay, takes them from the plan file).
func (p *Plan) load(ctx context.Context, model string, detected bool, py *pyrand.Python, np *pyrand.NumPy) error {
	if p.replay != nil {
		return p.loadReplay(ctx)
	}
	cfg, env := p.Config, p.Env
	tokID, tokFrom := tokenizerID(ctx, cfg, p.Server, model, detected)
	if err := p.resolveTokenizer(ctx, tokID, tokFrom); err != nil {
		return err
	}
	hc := hub.FromEnv(env.Getenv)
	hc.Progress = env.Stderr
	rows, err := dataset.Load(ctx, datasetParams(cfg, model), dataset.Env{
		Tok: p.Tok, Py: py, NP: np, Out: env.Stdout, CacheDir: dataset.CacheDir(env.Getenv), HTTP: hc.HTTP,
		Progress: env.Stderr, // long builds say how far they are; stdout keeps the reference's lines
		Fetch: func(ctx context.Context, repoType, repoID, file string) (string, error) {
			return hc.Download(ctx, repoType, repoID, file, "main")
		},
	})
	if err != nil {
		return failure("%v", err)
	}
	if len(rows) == 0 {
		return failure("--dataset-name %s: the dataset produced no requests", cfg.DatasetName)
	}
	var lora schedule.LoRA
	if cfg.LoraName != nil {
		lora = schedule.LoRA{Names: cfg.LoraName, Distribution: cfg.LoraDistribution, ZipfAlpha: cfg.LoraZipfAlpha}
	}
	p.Rows, p.py, p.np, p.lora = rows, *py, *np, lora
	return p.plan(lora, py, np)
}

// resolveTokenizer loads the tokenizer tokID names (from says where it
// was named, for the error).
func (p *Plan) resolveTokenizer(ctx context.Context, tokID string, from int) error {
	cfg, env := p.Config, p.Env
	hc := hub.FromEnv(env.Getenv)
	hc.Progress = env.Stderr
	tok, err := tokenizer.Resolve(ctx, tokID, tokenizer.ResolveOptions{Hub: hc, Getenv: env.Getenv})
	if err != nil {
		return tokenizerError(from, err)
	}
	p.Tok, p.tokID = tok, tokID
	if spec, _ := backend.Lookup(cfg.Backend); !spec.Embedding {
		fmt.Fprint(env.Stdout, tokenizer.NoChatTemplateWarning(tok))
	}
	return nil
}

// makeClient makes the requests' client: the backend's, with the auth and
// --header headers, keeping as many connections as the run has in flight.
func (p *Plan) makeClient(base string, auth http.Header, hopt backend.ClientOptions) error {
	cfg := p.Config
	h := auth.Clone()
	for k, v := range customHeaders(cfg.Header) {
		h[k] = v
	}
	hopt.KeepAlive, hopt.MaxConns = !cfg.NoKeepalive, p.maxInflight()
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
		ContinuousUsage:     cfg.ContinuousUsageStats,
	}
	if cfg.RequestTimeout != nil {
		opt.Timeout = seconds(*cfg.RequestTimeout)
	}
	// Each reply's tokens are counted when it ends; its text is then kept
	// only where something still needs it: the details, the next round of
	// a conversation, or the chunks the metrics retokenize for sglang-oai*.
	opt.Counter = p.Tok
	opt.Runaway = p.runaway
	spec, _ := backend.Lookup(cfg.Backend)
	opt.DropText = !cfg.OutputDetails && !cfg.PrintRequests && !conversations(p.Rows) && !spec.ChunkLens
	opt.DeferCount = true // counted in send, after the slot is free
	client, err := backend.New(cfg.Backend, base, opt, h, httpClient(cfg, hopt))
	if err != nil {
		return usage("%v", err)
	}
	if p.Client == nil {
		p.Client = client
	}
	p.Clients = append(p.Clients, client)
	return nil
}

// maxInflight is the most requests the run has in flight: the
// --max-concurrency cap, else every request.
func (p *Plan) maxInflight() int {
	if c := p.Config.MaxConcurrency; c != nil && *c > 0 {
		return *c
	}
	return max(p.expected(), len(p.warmupSlots))
}

// expected is how many requests the plan sends (a conversation counts
// once); 0 when that is not known before (a closed loop by time).
func (p *Plan) expected() int {
	if p.cyclic {
		return 0
	}
	if p.traffic.shards == 0 {
		return len(p.Slots)
	}
	n := 0
	for i := range p.Slots {
		if p.traffic.mine(i) {
			n++
		}
	}
	return n
}

func conversations(rows []dataset.Row) bool {
	for i := range rows {
		if rows[i].Turns != nil {
			return true
		}
	}
	return false
}
