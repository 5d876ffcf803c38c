package cli

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"benchserve/backend"
	"benchserve/bench"
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

// unusedFlags is read from each dataset loader (which Params fields it
// reads), each backend's request body, and the control-plane calls.
var unusedFlags = []unused{
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

	// Dataset
	{flag: "--dataset-path", why: datasets(promptFrom, all("random-ids", "generated-shared-prefix", "image")...)},
	{flag: "--dataset-offset", why: datasets(only("agentic-trace reads it"), "agentic-trace")},
	{flag: "--agentic-max-turns", why: datasets(only("agentic-trace reads it"), "agentic-trace")},
	{flag: "--speed-bench-category", why: datasets(only("speed-bench reads it"), "speed-bench")},
	{flag: "--speed-bench-output-len", why: datasets(outputFrom, "speed-bench")},
	{flag: "--num-prompts", why: func(c *bench.Config, _ func(string) string) string {
		return unless(c.DatasetName != "generated-shared-prefix", fmt.Sprintf(
			"not used by --dataset-name generated-shared-prefix, which sends --gsp-num-groups × --gsp-prompts-per-group = %d requests",
			c.GSPNumGroups*c.GSPPromptsPerGroup))
	}},
	{flag: "--sharegpt-output-len", why: datasets(outputFrom, "sharegpt", "custom", "openai", "agentic-trace", "longbench_v2")},
	{flag: "--sharegpt-context-len", why: datasets(only("it drops no requests by length"), "sharegpt", "custom", "longbench_v2")},
	{flag: "--random-input-len", why: datasets(promptFrom, "random", "random-ids", "image")},
	{flag: "--random-output-len", why: datasets(outputFrom, "random", "random-ids", "image", "mmmu")},
	{flag: "--random-range-ratio", why: datasets(rangeFrom, "random", "random-ids", "image")},
	{flag: "--image-count", why: datasets(noImages, "image")},
	{flag: "--image-resolution", why: datasets(noImages, "image")},
	{flag: "--random-image-count", why: datasets(noImages, "image")},
	{flag: "--image-format", why: datasets(noImages, "image")},
	{flag: "--image-content", why: datasets(noImages, "image")},
	// Templated anyway: image, mmmu, mooncake, speed-bench, openai.
	{flag: "--apply-chat-template", why: datasets(noTemplate, all("random", "random-ids", "generated-shared-prefix", "longbench_v2", "agentic-trace")...)},
	{flag: "--prompt-suffix", why: datasets(only("only sharegpt and custom append it"), "sharegpt", "custom")},
	// sharegpt, custom, GSP and the image datasets refuse it in dataset.Preflight.
	{flag: "--tokenize-prompt", why: func(c *bench.Config, _ func(string) string) string {
		switch c.DatasetName {
		case "mooncake", "speed-bench", "openai", "agentic-trace", "longbench_v2":
			return "--dataset-name " + c.DatasetName + " ignores it (only random and random-ids send token ids)"
		}
		return ""
	}},
	{flag: "--gsp-num-groups", why: gspOnly},
	{flag: "--gsp-prompts-per-group", why: gspOnly},
	{flag: "--gsp-system-prompt-len", why: gspOnly},
	{flag: "--gsp-question-len", why: gspOnly},
	{flag: "--gsp-output-len", why: gspOnly},
	{flag: "--gsp-range-ratio", why: gspOnly},
	{flag: "--gsp-fast-prepare", why: gspOnly},
	{flag: "--gsp-send-routing-key", why: gspOnly},
	{flag: "--gsp-num-turns", why: gspOnly},
	{flag: "--gsp-ordered", why: gspOnly},
	{flag: "--gsp-group-distribution", why: gspOnly},
	{flag: "--gsp-zipf-alpha", why: gspOnly},
	{flag: "--mooncake-slowdown-factor", why: mooncakeOnly},
	{flag: "--mooncake-num-rounds", why: mooncakeOnly},
	{flag: "--mooncake-workload", why: func(c *bench.Config, g func(string) string) string {
		if r := mooncakeOnly(c, g); r != "" {
			return r
		}
		return unless(c.DatasetPath == "", "not used with --dataset-path, which names the trace to read")
	}},

	// Traffic
	{flag: "--use-trace-timestamps", why: datasets(only("it has no timestamps"), "mooncake")},
	{flag: "--arrival", why: gaps},
	{flag: "--burstiness", why: gaps},
	{flag: "--max-concurrency", why: func(c *bench.Config, _ func(string) string) string {
		return unless(c.MaxConcurrency == nil || *c.MaxConcurrency != 0, "0 sets no limit on requests in flight, as in the reference")
	}},
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
		case spec(c).Kind == backend.KindTRT:
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

func unless(ok bool, why string) string {
	if ok {
		return ""
	}
	return why
}

// datasets: the flag is read by the named datasets only; tell says, for
// another, where what the flag sets comes from.
func datasets(tell func(dataset string) string, names ...string) reason {
	return func(c *bench.Config, _ func(string) string) string {
		if slices.Contains(names, c.DatasetName) {
			return ""
		}
		return "--dataset-name " + c.DatasetName + " ignores it (" + tell(c.DatasetName) + ")"
	}
}

// all lists every dataset but the named ones.
func all(but ...string) []string {
	var out []string
	for _, n := range DatasetNames {
		if !slices.Contains(but, n) {
			out = append(out, n)
		}
	}
	return out
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

func only(why string) func(string) string { return func(string) string { return why } }

// nativeOnly: the flag is sent by the native /generate backends only.
var nativeOnly = backends(native, func([]string) string {
	return "only the native /generate backends " + and(backend.NamesOf(native)) + " send it; for others use --extra-request-body"
})

func native(s backend.Spec) bool { return s.Kind == backend.KindNative }

// promptFrom says where a dataset's prompts come from.
func promptFrom(d string) string {
	from := map[string]string{
		"agentic-trace":           "the trace's conversations",
		"sharegpt":                "the ShareGPT conversations",
		"custom":                  "the conversations in --dataset-path",
		"openai":                  "the chat requests in --dataset-path",
		"random-ids":              "consecutive token ids",
		"generated-shared-prefix": "random text sized by the --gsp-* flags",
		"mmmu":                    "the MMMU questions",
		"image":                   "random text and generated images",
		"mooncake":                "the trace's hash ids",
		"longbench_v2":            "the LongBench v2 contexts",
		"speed-bench":             "the SPEED-Bench file",
	}[d]
	return "its prompts come from " + from
}

// outputFrom says where a dataset's output lengths come from.
func outputFrom(d string) string {
	return map[string]string{
		"agentic-trace":           "output lengths are --sharegpt-output-len, else 220",
		"sharegpt":                "output lengths are the completions', or --sharegpt-output-len",
		"custom":                  "output lengths are the completions', or --sharegpt-output-len",
		"openai":                  "output lengths are each line's max_tokens, or --sharegpt-output-len",
		"random":                  "output lengths come from --random-output-len",
		"random-ids":              "output lengths come from --random-output-len",
		"image":                   "output lengths come from --random-output-len",
		"mmmu":                    "output lengths are --random-output-len",
		"generated-shared-prefix": "output lengths come from --gsp-output-len",
		"mooncake":                "output lengths come from the trace",
		"longbench_v2":            "output lengths are --sharegpt-output-len, else 10",
		"speed-bench":             "output lengths are --speed-bench-output-len",
	}[d]
}

func rangeFrom(d string) string {
	if d == "generated-shared-prefix" {
		return "its lengths use --gsp-range-ratio"
	}
	return "it draws no random lengths"
}

func noImages(string) string { return "only the image dataset generates images" }

func noTemplate(d string) string {
	switch d {
	case "agentic-trace":
		return "its conversations go to a chat API, whose server applies the template"
	case "longbench_v2":
		return "its prompts are sent as plain text"
	}
	return "its prompts are random token text, sent as is"
}

func withBaseURL(c *bench.Config, _ func(string) string) string {
	return unless(c.BaseURL == nil, "not used with --base-url, which names the server")
}

func plainHTTP(c *bench.Config, _ func(string) string) string {
	if c.BaseURL != nil && strings.HasPrefix(strings.ToLower(*c.BaseURL), "https://") {
		return ""
	}
	return "not used with an http:// server (only https servers are verified)"
}

func gspOnly(c *bench.Config, g func(string) string) string {
	return datasets(only("only generated-shared-prefix reads the --gsp-* flags"), "generated-shared-prefix")(c, g)
}

func mooncakeOnly(c *bench.Config, g func(string) string) string {
	return datasets(only("only mooncake replays a trace"), "mooncake")(c, g)
}

// noMetrics: the server-metrics flags do nothing with --no-server-metrics.
func noMetrics(c *bench.Config, _ func(string) string) string {
	return unless(!c.NoServerMetrics, "--no-server-metrics turns the reads off")
}

// gaps: --arrival and --burstiness shape the gaps of a finite rate or a
// ramp.
func gaps(c *bench.Config, _ func(string) string) string {
	switch {
	case c.DatasetName == "mooncake":
		return "not used by --dataset-name mooncake, which sends each request at its trace time"
	case math.IsInf(c.RequestRate, 1) && c.RampUpStrategy == nil:
		return "not used with --request-rate inf, which sends every request at once"
	}
	return ""
}

// logprobs: native sends both; completions sends logprobs only when both
// are set; the other backends send neither.
func logprobs(c *bench.Config, _ func(string) string) string {
	switch spec(c).Kind {
	case backend.KindNative:
		return ""
	case backend.KindCompletions:
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
