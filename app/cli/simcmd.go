package cli

import (
	"fmt"
	"math"
	"strings"
	"time"

	"benchserve/internal/py/argparse"
	"benchserve/internal/py/pyfmt"
	"benchserve/sim"
)

const (
	simProg        = "benchserve sim"
	simDescription = "Serve a simulated inference server (SGLang, OpenAI-compatible, TensorRT-LLM and Truss " +
		"endpoints) whose timings come from an engine model. GET /sim/truth returns what it did for each request."
)

// simFlag is one option of "benchserve sim". preset options start with
// no default (None): the preset supplies the value unless the flag is given.
type simFlag struct {
	group  string
	opt    argparse.Option
	preset bool
	set    func(c *sim.Config, v any)
}

const (
	gSimServer = "Server"
	gSimEngine = "Engine model (defaults from --preset)"
	gSimFaults = "Fault injection (docs/sim.md)"
)

// milliseconds is the type of the *-ms options.
var milliseconds = argparse.Type{Name: "milliseconds", Convert: func(s string) (any, error) {
	f, err := pyfmt.ParseFloat(s)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return nil, &argparse.ArgumentTypeError{Msg: "expected a finite number of milliseconds >= 0, got " + argparse.Repr(s)}
	}
	return f, nil
}}

// faultRate is the type of each --fault value, KIND[:ARG]=RATE.
var faultRate = argparse.Type{Name: "fault", Convert: func(s string) (any, error) {
	f, err := sim.ParseFaultRate(s)
	if err != nil {
		return nil, &argparse.ArgumentTypeError{Msg: err.Error()}
	}
	return f, nil
}}

func msDuration(v any) time.Duration { return time.Duration(v.(float64) * float64(time.Millisecond)) }

// presetHelp appends each preset's value of a field to help.
func presetHelp(help string, field func(c *sim.Config) any) string {
	var vals []string
	for _, name := range sim.Presets {
		c, _ := sim.Preset(name)
		v := field(&c)
		if d, ok := v.(time.Duration); ok {
			v = float64(d) / float64(time.Millisecond)
		}
		if f, ok := v.(float64); ok && math.IsInf(f, 1) {
			v = "inf"
		}
		vals = append(vals, fmt.Sprintf("%v (%s)", v, name))
	}
	return help + " Preset values: " + strings.Join(vals, ", ") + "."
}

var simFlags = []simFlag{
	{gSimServer, argparse.Option{Name: "--host", Default: sim.DefaultHost,
		Help: "Address to listen on."}, false,
		func(c *sim.Config, v any) { c.Host = v.(string) }},
	{gSimServer, argparse.Option{Name: "--port", Type: argparse.Int, Default: sim.DefaultPort,
		Help: "Port to listen on; 0 picks a free one."}, false,
		func(c *sim.Config, v any) { c.Port = v.(int) }},
	{gSimServer, argparse.Option{Name: "--model", Default: sim.DefaultModel,
		Help: "Served model name, listed by /v1/models."}, false,
		func(c *sim.Config, v any) { c.Model = v.(string) }},
	{gSimServer, argparse.Option{Name: "--tokenizer", Default: sim.DefaultTokenizer,
		Help: "Tokenizer that counts prompt tokens and makes the output words; /model_info reports it so benchserve uses the same."}, false,
		func(c *sim.Config, v any) { c.Tokenizer = v.(string) }},
	{gSimServer, argparse.Option{Name: "--api-key",
		Help: "Require \"Authorization: Bearer <key>\" on every endpoint except /health."}, false,
		func(c *sim.Config, v any) {
			if v != nil {
				c.APIKey = v.(string)
			}
		}},
	{gSimServer, argparse.Option{Name: "--seed", Type: argparse.Int, Default: sim.DefaultSeed,
		Help: "Seed of the random early EOS, the speculative accept lengths and the output words."}, false,
		func(c *sim.Config, v any) { c.Seed = int64(v.(int)) }},
	{gSimServer, argparse.Option{Name: "--truth-capacity", Type: argparse.Int, Default: sim.DefaultTruthCapacity,
		Help: "Finished requests kept for GET /sim/truth (the oldest are dropped)."}, false,
		func(c *sim.Config, v any) { c.TruthCapacity = v.(int) }},
	{gSimServer, argparse.Option{Name: "--pd-router", Action: argparse.StoreTrue,
		Help: "Answer /server_info as an SGLang PD router does (router_manager, prefill and decode workers, no internal_states)."}, false,
		func(c *sim.Config, v any) { c.PDRouter = v.(bool) }},
	{gSimServer, argparse.Option{Name: "--tls-cert", Metavar: "FILE",
		Help: "Serve HTTPS (HTTP/1.1 and h2 by ALPN, for benchserve --http2) with this PEM certificate; needs --tls-key."}, false,
		func(c *sim.Config, v any) { c.TLSCert, _ = v.(string) }},
	{gSimServer, argparse.Option{Name: "--tls-key", Metavar: "FILE",
		Help: "The PEM private key of --tls-cert."}, false,
		func(c *sim.Config, v any) { c.TLSKey, _ = v.(string) }},
	{gSimServer, argparse.Option{Name: "--tls-self-signed", Metavar: "FILE",
		Help: "Serve HTTPS with a new self-signed certificate for localhost, 127.0.0.1 and --host, written to FILE (give it to benchserve's --cacert)."}, false,
		func(c *sim.Config, v any) { c.TLSSelfSigned, _ = v.(string) }},
	{gSimEngine, argparse.Option{Name: "--preset", Choices: sim.Presets, Default: sim.Presets[0],
		Help: "Engine model to start from: h100-llama3-8b approximates Llama-3.1-8B on one H100 (docs/sim.md); instant has no delays."}, false,
		func(c *sim.Config, v any) { c.Preset = v.(string) }},
	{gSimEngine, argparse.Option{Name: "--max-running-requests", Type: argparse.Int,
		Help: presetHelp("Largest decode batch; more requests queue.", func(c *sim.Config) any { return c.MaxRunningRequests })}, true,
		func(c *sim.Config, v any) { c.MaxRunningRequests = v.(int) }},
	{gSimEngine, argparse.Option{Name: "--max-total-tokens", Type: argparse.Int,
		Help: presetHelp("KV-cache pool in tokens; a running request reserves prompt + max new tokens, and requests queue when it is full.",
			func(c *sim.Config) any { return c.KVTokens })}, true,
		func(c *sim.Config, v any) { c.KVTokens = v.(int) }},
	{gSimEngine, argparse.Option{Name: "--max-prefill-tokens", Type: argparse.Int,
		Help: presetHelp("Uncached prompt tokens one prefill step may take (a longer prompt is prefilled alone).",
			func(c *sim.Config) any { return c.MaxPrefillTokens })}, true,
		func(c *sim.Config, v any) { c.MaxPrefillTokens = v.(int) }},
	{gSimEngine, argparse.Option{Name: "--page-size", Type: argparse.Int,
		Help: presetHelp("Prefix-cache page in tokens; cached_tokens is a multiple of it.", func(c *sim.Config) any { return c.PageSize })}, true,
		func(c *sim.Config, v any) { c.PageSize = v.(int) }},
	{gSimEngine, argparse.Option{Name: "--context-length", Type: argparse.Int,
		Help: presetHelp("Longest prompt + max new tokens accepted.", func(c *sim.Config) any { return c.ContextLength })}, true,
		func(c *sim.Config, v any) { c.ContextLength = v.(int) }},
	{gSimEngine, argparse.Option{Name: "--prefill-tokens-per-sec", Type: argparse.Float,
		Help: presetHelp("Prefill rate for uncached prompt tokens (inf: free).", func(c *sim.Config) any { return c.PrefillTokensPerSec })}, true,
		func(c *sim.Config, v any) { c.PrefillTokensPerSec = v.(float64) }},
	{gSimEngine, argparse.Option{Name: "--prefill-overhead-ms", Type: milliseconds,
		Help: presetHelp("Fixed time of every prefill step.", func(c *sim.Config) any { return c.PrefillOverhead })}, true,
		func(c *sim.Config, v any) { c.PrefillOverhead = msDuration(v) }},
	{gSimEngine, argparse.Option{Name: "--decode-base-ms", Type: milliseconds,
		Help: presetHelp("Fixed time of every decode step.", func(c *sim.Config) any { return c.DecodeBase })}, true,
		func(c *sim.Config, v any) { c.DecodeBase = msDuration(v) }},
	{gSimEngine, argparse.Option{Name: "--decode-per-request-ms", Type: milliseconds,
		Help: presetHelp("Decode step time added per running request.", func(c *sim.Config) any { return c.DecodePerRequest })}, true,
		func(c *sim.Config, v any) { c.DecodePerRequest = msDuration(v) }},
	{gSimEngine, argparse.Option{Name: "--speculative-accept-length", Type: argparse.Float,
		Help: presetHelp("Mean tokens per decode step with speculative decoding; 0 turns it off.",
			func(c *sim.Config) any { return c.SpeculativeAcceptLength })}, true,
		func(c *sim.Config, v any) { c.SpeculativeAcceptLength = v.(float64) }},
	{gSimEngine, argparse.Option{Name: "--eos-probability", Type: argparse.Float,
		Help: presetHelp("Chance of stopping after each token when a request does not ignore EOS.",
			func(c *sim.Config) any { return c.EOSProbability })}, true,
		func(c *sim.Config, v any) { c.EOSProbability = v.(float64) }},
	{gSimEngine, argparse.Option{Name: "--reasoning-tokens", Type: argparse.Int,
		Help: presetHelp("Leading tokens of each chat reply sent as reasoning_content.", func(c *sim.Config) any { return c.ReasoningTokens })}, true,
		func(c *sim.Config, v any) { c.ReasoningTokens = v.(int) }},
	{gSimEngine, argparse.Option{Name: "--embedding-dim", Type: argparse.Int,
		Help: presetHelp("Length of each /v1/embeddings vector.", func(c *sim.Config) any { return c.EmbeddingDim })}, true,
		func(c *sim.Config, v any) { c.EmbeddingDim = v.(int) }},
	{gSimEngine, argparse.Option{Name: "--speech-rtf", Type: argparse.Float,
		Help: presetHelp("Real-time factor of /v1/audio/speech: seconds of audio per wall second of each reply.",
			func(c *sim.Config) any { return c.SpeechRTF })}, true,
		func(c *sim.Config, v any) { c.SpeechRTF = v.(float64) }},
	{gSimEngine, argparse.Option{Name: "--transcription-rtf", Type: argparse.Float,
		Help: presetHelp("Real-time factor of /v1/audio/transcriptions: seconds of audio transcribed per wall second of each reply.",
			func(c *sim.Config) any { return c.TranscriptionRTF })}, true,
		func(c *sim.Config, v any) { c.TranscriptionRTF = v.(float64) }},
	{gSimFaults, argparse.Option{Name: "--fault", Type: faultRate, Nargs: argparse.OneOrMore, Metavar: "KIND[:ARG]=RATE",
		Help: "Inject faults: each request gets KIND with chance RATE, drawn from --seed (rates add up to at most 1). Kinds: " +
			strings.Join(sim.FaultKinds(), ", ") + "; ARG is the chunks before a disconnect (default 2), the seconds of a stall or of slow-headers (2), " +
			"the MiB of a huge-line (10). The header \"X-Sim-Fault: KIND[:ARG]\" forces one request's fault (\"none\": no fault)."}, false,
		func(c *sim.Config, v any) {
			if v != nil {
				for _, f := range v.([]any) {
					c.Faults = append(c.Faults, f.(sim.FaultRate))
				}
			}
		}},
}

// ParseSim parses the arguments after "benchserve sim" into the
// simulator's Config: the --preset's values, then every engine flag given
// on the command line over them. Errors are *UsageError or *HelpRequested.
func ParseSim(args []string) (*sim.Config, error) { return parseSim(args, processIO().columns()) }

// SimHelp returns the help text of "benchserve sim -h".
func SimHelp() string { return newSimParser().Help(processIO().columns()) }

func parseSim(args []string, cols int) (*sim.Config, error) {
	ns, err := parseArgs(newSimParser(), args, cols)
	if err != nil {
		return nil, err
	}
	c, err := sim.Preset(ns.Get("preset").(string))
	if err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	for _, f := range simFlags {
		if d := destOf(f.opt.Name); !f.preset || ns.Given(d) {
			f.set(&c, ns.Get(d))
		}
	}
	if err := c.Validate(); err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	return &c, nil
}

func newSimParser() *argparse.Parser {
	p := argparse.New(simProg, simDescription)
	groups := map[string]*argparse.Group{gSimServer: p.Group(gSimServer), gSimEngine: p.Group(gSimEngine), gSimFaults: p.Group(gSimFaults)}
	for _, f := range simFlags {
		groups[f.group].Add(f.opt)
	}
	return p
}
