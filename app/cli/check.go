package cli

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"benchserve/backend"
	"benchserve/bench"
	"benchserve/dataset"
)

// unused is a flag the run would not use with some configurations. why
// says why it has no effect with c ("" when it has one). The reference
// accepts every such combination and ignores the flag, so a given flag
// with a reason is accepted too, with the reason printed as a note: a
// typo or a wrong guess about a flag is seen, and a drop-in command line
// still runs. The refusals that remain (package bench and dataset) are
// listed in docs/compat.md.
type unused struct {
	flag string
	why  func(c *bench.Config, getenv func(string) string) string
}

// unusedFlags is read from each backend's request body and the
// control-plane calls; the dataset flags' rules are the dataset table's
// (datasetRules).
var unusedFlags = slices.Concat(targetRules, datasetRules(), otherRules)

var targetRules = []unused{
	// Target
	{flag: "--host", why: withBaseURL},
	{flag: "--port", why: withBaseURL},
	{flag: "--cacert", why: plainHTTP},
	{flag: "--insecure", why: plainHTTP},
	{flag: "--header", why: backends(func(s backend.Spec) bool { return s.Headers }, func(no []string) string {
		return and(no) + " requests carry no headers, as in the reference"
	})},
	{flag: "--sim-preset", why: func(c *bench.Config, _ func(string) string) string {
		return unless(c.Sim, "only --sim starts the simulator")
	}},
	{flag: "--continuous-usage-stats", why: backends(func(s backend.Spec) bool { return s.Usage }, func(no []string) string {
		return and(no) + " requests ask for no usage chunks (only the OpenAI completions and chat backends do)"
	})},
	{flag: "--server-metrics-interval", why: noMetrics},
	{flag: "--server-metrics-url", why: noMetrics},
	{flag: "--server-metrics-file", why: noMetrics},
	{flag: "--warmup-requests", why: func(c *bench.Config, _ func(string) string) string {
		if c.WarmupRequests < 0 {
			return fmt.Sprintf("%d sends no warmup, as 0 does (as in the reference)", c.WarmupRequests)
		}
		// Another count beside --warmup-duration is refused when the load is read.
		return unless(c.WarmupDuration == nil || c.WarmupRequests != 1, "--warmup-duration replaces it")
	}},
	{flag: "--url-strategy", why: func(c *bench.Config, _ func(string) string) string {
		return unless(c.BaseURL != nil && strings.Contains(*c.BaseURL, ","), "only spreads requests over several --base-url")
	}},
}

var otherRules = []unused{
	// Traffic
	{flag: "--use-trace-timestamps", why: datasetNote("--use-trace-timestamps")},
	{flag: "--arrival", why: gaps},
	{flag: "--burstiness", why: gaps},
	{flag: "--max-concurrency", why: func(c *bench.Config, _ func(string) string) string {
		return unless(c.MaxConcurrency == nil || *c.MaxConcurrency != 0, "0 sets no limit on requests in flight, as in the reference")
	}},
	{flag: "--think-time", why: func(c *bench.Config, _ func(string) string) string {
		// trace on a dataset without delays is refused when the load is read.
		return unless(!thinks(c) || multiTurn(c) || strings.TrimSpace(c.ThinkTime) == "trace", "has no effect: --dataset-name "+c.DatasetName+" has no multi-turn conversations (agentic-trace, mooncake-sessions and tracelab have, generated-shared-prefix with --gsp-num-turns > 1, and random and random-ids with --session-turns)")
	}},
	{flag: "--max-sessions", why: func(c *bench.Config, _ func(string) string) string {
		return unless(c.MaxSessions == nil || multiTurn(c), "has no effect: --dataset-name "+c.DatasetName+" has no multi-turn conversations")
	}},
	{flag: "--think-time-scale", why: thinkTimeOnly},
	{flag: "--think-time-cap", why: thinkTimeOnly},
	{flag: "--flush-cache-timeout", why: func(c *bench.Config, getenv func(string) string) string {
		switch {
		case !spec(c).SGLang:
			return "not used with --backend " + c.Backend + " (only sglang's /flush_cache takes a timeout)"
		case !c.FlushCache && !truthy(getenv("SGLANG_IS_IN_CI")):
			return "not used without --flush-cache"
		}
		return ""
	}},

	// Request content
	{flag: "--disable-stream", why: func(c *bench.Config, _ func(string) string) string {
		switch {
		case spec(c).AlwaysStreams():
			return "not used with --backend " + c.Backend + ", which always streams (as in the reference)"
		case spec(c).Embedding:
			return "not used with --backend " + c.Backend + " (embeddings are never streamed)"
		}
		return ""
	}},
	{flag: "--disable-ignore-eos", why: backends(func(s backend.Spec) bool { return !s.Embedding }, func([]string) string {
		return "embeddings generate no tokens"
	})},
	{flag: "--temperature", why: nativeOnly},
	{flag: "--top-p", why: nativeOnly},
	{flag: "--return-logprob", why: logprobs},
	{flag: "--top-logprobs-num", why: logprobs},
	{flag: "--token-ids-logprob", why: nativeOnly},
	{flag: "--logprob-start-len", why: nativeOnly},
	{flag: "--return-routed-experts", why: nativeOnly},
	{flag: "--lora-name", why: backends(func(s backend.Spec) bool { return s.LoRA }, func(no []string) string {
		return and(no) + " requests name no adapter"
	})},
	{flag: "--lora-request-distribution", why: func(c *bench.Config, _ func(string) string) string {
		return unless(c.LoraName != nil, "not used without --lora-name")
	}},
	{flag: "--lora-zipf-alpha", why: func(c *bench.Config, _ func(string) string) string {
		return unless(c.LoraName != nil && c.LoraDistribution == "skewed", "only --lora-name with --lora-request-distribution skewed uses it")
	}},

	// Profiling
	{flag: "--profile-activities", why: needsProfile},
	{flag: "--profile-start-step", why: needsProfile},
	{flag: "--profile-steps", why: needsProfile},
	{flag: "--profile-num-steps", why: func(c *bench.Config, g func(string) string) string {
		if r := needsProfile(c, g); r != "" {
			return r
		}
		return unless(c.ProfileSteps == nil, "not used with --profile-steps, which replaces num_steps in the request")
	}},
	{flag: "--profile-by-stage", why: needsProfile},
	{flag: "--profile-stages", why: needsProfile},
	{flag: "--profile-output-dir", why: needsProfile},
	{flag: "--profile-prefix", why: needsProfile},
	{flag: "--pd-separated", why: needsProfile},
	{flag: "--profile-prefill-url", why: workerURLs},
	{flag: "--profile-decode-url", why: workerURLs},
}

// checkGiven returns a note for each given flag the run would not use,
// "--flag: why", in the table's order.
func checkGiven(c *bench.Config, given map[string]bool, getenv func(string) string) (notes []string) {
	for _, u := range unusedFlags {
		if !given[u.flag] {
			continue
		}
		if why := u.why(c, getenv); why != "" {
			notes = append(notes, u.flag+": "+why)
		}
	}
	return notes
}

type reason = func(c *bench.Config, getenv func(string) string) string

// thinks: --think-time is other than 0, or auto with a session trace's
// delays (a bad spec is refused later).
func thinks(c *bench.Config) bool {
	switch t := strings.TrimSpace(c.ThinkTime); t {
	case "0":
		return false
	case "", "auto":
		return datasetSpec(c).Delays
	}
	return true
}

// multiTurn: the dataset's rows are conversations of several turns.
func multiTurn(c *bench.Config) bool {
	return c.DatasetName == "agentic-trace" || c.DatasetName == "generated-shared-prefix" && c.GSPNumTurns > 1 ||
		c.SessionTurns != nil && datasetSpec(c).Uses("--session-turns") ||
		datasetSpec(c).Delays
}

func thinkTimeOnly(c *bench.Config, _ func(string) string) string {
	return unless(thinks(c), "only applies to a --think-time other than 0 (or a session trace's delays)")
}

func unless(ok bool, why string) string {
	if ok {
		return ""
	}
	return why
}

// spec is the table's row of c's backend (the zero Spec for an unknown
// name, which uses no flag).
func spec(c *bench.Config) backend.Spec {
	s, _ := backend.Lookup(c.Backend)
	return s
}

// backends: the flag is used by the backends whose Spec satisfies uses
// only; why says why not, given the backends that do not use it.
func backends(uses func(backend.Spec) bool, why func(not []string) string) reason {
	return func(c *bench.Config, _ func(string) string) string {
		if uses(spec(c)) {
			return ""
		}
		not := backend.NamesOf(func(s backend.Spec) bool { return !uses(s) })
		return "--backend " + c.Backend + " ignores it (" + why(not) + ")"
	}
}

// and lists names as "a, b and c".
func and(names []string) string {
	if n := len(names); n > 1 {
		return strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
	return strings.Join(names, "")
}

// nativeOnly: the flag is sent by the native /generate backends only.
var nativeOnly = backends(native, func([]string) string {
	return "only the native /generate backends " + and(backend.NamesOf(native)) + " send it; for others use --extra-request-body"
})

func native(s backend.Spec) bool { return s.Sampling() }

func withBaseURL(c *bench.Config, _ func(string) string) string {
	return unless(c.BaseURL == nil, "not used with --base-url, which names the server")
}

func plainHTTP(c *bench.Config, _ func(string) string) string {
	if c.BaseURL != nil && strings.Contains(strings.ToLower(*c.BaseURL), "https://") {
		return ""
	}
	return "not used with an http:// server (only https servers are verified)"
}

// noMetrics: the server-metrics flags do nothing with --no-server-metrics.
func noMetrics(c *bench.Config, _ func(string) string) string {
	return unless(!c.NoServerMetrics, "--no-server-metrics turns the reads off")
}

// gaps: --arrival and --burstiness shape the gaps of a finite rate or a
// ramp.
func gaps(c *bench.Config, _ func(string) string) string {
	switch {
	case datasetSpec(c).Timed:
		return "not used by --dataset-name " + c.DatasetName + ", which sends each request at its trace time"
	case math.IsInf(c.RequestRate, 1) && c.RampUpStrategy == nil:
		return "not used with --request-rate inf, which sends every request at once"
	}
	return ""
}

// logprobs: native sends both; completions sends logprobs only when both
// are set; the other backends send neither.
func logprobs(c *bench.Config, _ func(string) string) string {
	switch spec(c).Logprobs() {
	case backend.LogprobsBoth:
		return ""
	case backend.LogprobsTop:
		return unless(c.ReturnLogprob && c.TopLogprobsNum > 0,
			"--backend "+c.Backend+" asks for logprobs only with both --return-logprob and --top-logprobs-num > 0")
	}
	return "--backend " + c.Backend + " ignores it (it sends no logprob fields)"
}

func needsProfile(c *bench.Config, _ func(string) string) string {
	return unless(c.Profile, "not used without --profile")
}

func workerURLs(c *bench.Config, g func(string) string) string {
	if r := needsProfile(c, g); r != "" {
		return r
	}
	return unless(c.PDSeparated, "not used without --pd-separated")
}

func truthy(s string) bool {
	s = strings.ToLower(s)
	return s == "true" || s == "1"
}

// datasetRules are the rules of the Dataset group's flags (their order),
// from the dataset table.
func datasetRules() []unused {
	var out []unused
	for _, f := range flags {
		if f.group == gDataset && f.opt.Name != "--dataset-name" {
			why := datasetNote(f.opt.Name)
			if f.opt.Name == "--per-turn-input-len" {
				why = perTurnInputLen
			}
			out = append(out, unused{flag: f.opt.Name, why: why})
		}
	}
	return out
}

// perTurnInputLen: the table's note, else none without --session-turns.
func perTurnInputLen(c *bench.Config, getenv func(string) string) string {
	if n := datasetNote("--per-turn-input-len")(c, getenv); n != "" {
		return n
	}
	return unless(c.SessionTurns != nil, "has no effect without --session-turns")
}

// datasetNote: the dataset table says whether c's dataset uses the flag.
func datasetNote(flag string) reason {
	return func(c *bench.Config, _ func(string) string) string {
		p := c.Params
		p.Name, p.Path = c.DatasetName, c.DatasetPath
		return dataset.Note(flag, p)
	}
}

// datasetSpec is the table's row of c's dataset (the zero Spec for an
// unknown name).
func datasetSpec(c *bench.Config) dataset.Spec {
	s, _ := dataset.Lookup(c.DatasetName)
	return s
}
