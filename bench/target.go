package bench

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"benchserve/backend"
	"benchserve/dataset"
	"benchserve/internal/netproxy"
	"benchserve/report"
	"benchserve/serverctl"
)

// checkSupported refuses what this version does not implement, before any
// network or dataset work.
func checkSupported(cfg *Config) error {
	spec, known := backend.Lookup(cfg.Backend)
	if known && !spec.Implemented {
		return usage("--backend %s: not implemented (the reference tool raises NotImplementedError for it too)", cfg.Backend)
	}
	if cfg.PrintRequests && !spec.PrintRequests {
		return usage("--print-requests: only supported with --backend %s (as in the reference tool)", names(func(s backend.Spec) bool { return s.PrintRequests }))
	}
	if cfg.TokenizePrompt && !spec.TokenizePrompt {
		return usage("--tokenize-prompt: only compatible with --backend %s", names(func(s backend.Spec) bool { return s.TokenizePrompt }))
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
	return nil
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

// OutputFile is the file a run started at now appends its line to.
func OutputFile(cfg *Config, now time.Time) string { return outputFile(cfg, now) }

func outputFile(cfg *Config, now time.Time) string {
	if cfg.OutputFile != nil {
		return *cfg.OutputFile
	}
	return report.FileName(report.NameParams{
		Backend: cfg.Backend, NumPrompts: cfg.NumPrompts, Dataset: dataset.FileTag(datasetParams(cfg, "")),
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

// names lists the backends with a property, for messages.
func names(has func(backend.Spec) bool) string {
	return strings.Join(backend.NamesOf(has), ", ")
}

// flushStyle is how the backend's server empties its prefix cache.
func flushStyle(s backend.Spec) serverctl.Flush {
	switch {
	case s.VLLM:
		return serverctl.FlushVLLM
	case s.SGLang:
		return serverctl.FlushSGLang
	}
	return serverctl.FlushPlain
}

// profileOptions are the --profile flags; the output directory is
// --profile-output-dir, else $SGLANG_TORCH_PROFILER_DIR, else /tmp.
func profileOptions(cfg *Config, getenv func(string) string) serverctl.ProfileOptions {
	dir := "/tmp"
	if cfg.ProfileOutputDir != nil {
		dir = *cfg.ProfileOutputDir
	} else if d := getenv("SGLANG_TORCH_PROFILER_DIR"); d != "" {
		dir = d
	}
	return serverctl.ProfileOptions{
		Profile: cfg.Profile, PDSeparated: cfg.PDSeparated,
		PrefillURLs: cfg.ProfilePrefillURL, DecodeURLs: cfg.ProfileDecodeURL,
		Activities: cfg.ProfileActivities, ByStage: cfg.ProfileByStage, Stages: cfg.ProfileStages,
		StartStep: cfg.ProfileStartStep, Steps: cfg.ProfileSteps, NumSteps: cfg.ProfileNumSteps,
		Prefix: cfg.ProfilePrefix, OutputDir: dir,
	}
}

// proxyFor is the environment's proxy choice (HTTP_PROXY, HTTPS_PROXY,
// NO_PROXY) for the benchmark's requests, refused before any request when
// the transport cannot use it, and named in a note when base goes through
// one: the reference's aiohttp session ignores the variables, so a proxy
// must never be a surprise.
func proxyFor(base string, env Env) (netproxy.Func, error) {
	f := netproxy.FromEnv(env.Getenv)
	u, err := url.Parse(base)
	if err != nil {
		return f, nil // the URL's own error is reported where it is used
	}
	p, err := netproxy.Check(f, u)
	if err != nil {
		return nil, err
	}
	if p != nil {
		fmt.Fprintf(env.Stderr, "benchserve: note: requests to %s go through the proxy %s (%s); NO_PROXY=%s sends them direct\n",
			u.Host, p.Redacted(), netproxy.Name(u.Scheme), u.Hostname())
	}
	return f, nil
}
