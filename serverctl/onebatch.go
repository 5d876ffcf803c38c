package serverctl

import (
	"benchserve/internal/py/pyjson"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// This file is the control plane of "benchserve one-batch" (one-batch spec
// §1.4, §3.1, §3.10, §4.4).

// OneBatchTimeout is the reference's DEFAULT_TIMEOUT for its control calls.
const OneBatchTimeout = 600 * time.Second

// BatchFacts is what /server_info says of a server before the sweep.
type BatchFacts struct {
	// TokenizerPath is tokenizer_path, else the first prefill worker's (a
	// PD router's), "" when neither is there.
	TokenizerPath string
	// Router: no internal states and a router_manager (a PD router).
	Router bool
	// MaxRunningPerDP is effective_max_running_requests_per_dp, -1 when
	// absent; DPSize is dp_size or 1.
	MaxRunningPerDP int
	DPSize          int
	// TokenCapacity sums memory_usage.token_capacity over the internal
	// states (1e9 for a state without it).
	TokenCapacity int64
}

type internalState struct {
	DPSize      *int `json:"dp_size"`
	MaxRunning  *int `json:"effective_max_running_requests_per_dp"`
	MemoryUsage *struct {
		TokenCapacity *int64 `json:"token_capacity"`
	} `json:"memory_usage"`
	LastGen *float64 `json:"last_gen_throughput"`
	Accept  *float64 `json:"avg_spec_accept_length"`
}

type serverInfo struct {
	TokenizerPath *string           `json:"tokenizer_path"`
	Prefill       []json.RawMessage `json:"prefill"`
	RouterManager json.RawMessage   `json:"router_manager"`
	States        []internalState   `json:"internal_states"`
}

// InfoStrict is GET /server_info, whose failure is an error (the
// reference raises for it).
func (c *Server) InfoStrict(ctx context.Context) ([]byte, error) {
	status, body, err := c.serverInfo(ctx, OneBatchTimeout)
	if err != nil {
		return nil, fmt.Errorf("GET %s/server_info: %s", Redact(c.Base), shortErr(err))
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET %s/server_info answered %d %s: %s", Redact(c.Base), status, http.StatusText(status), oneLine(body, 300))
	}
	return body, nil
}

// ParseBatchFacts reads the facts from a /server_info body.
func ParseBatchFacts(body []byte) (BatchFacts, error) {
	var v serverInfo
	if err := json.Unmarshal(body, &v); err != nil {
		return BatchFacts{}, fmt.Errorf("/server_info is not the JSON object SGLang serves: %v", err)
	}
	f := BatchFacts{MaxRunningPerDP: -1, DPSize: 1}
	switch {
	case v.TokenizerPath != nil:
		f.TokenizerPath = *v.TokenizerPath
	case len(v.Prefill) > 0:
		var w struct {
			TokenizerPath string `json:"tokenizer_path"`
		}
		if json.Unmarshal(v.Prefill[0], &w) == nil {
			f.TokenizerPath = w.TokenizerPath
		}
	}
	rm := bytes.TrimSpace(v.RouterManager)
	f.Router = len(v.States) == 0 && len(rm) > 0 && truthyJSON(rm)
	if len(v.States) > 0 {
		s := v.States[0]
		if s.DPSize != nil && *s.DPSize != 0 {
			f.DPSize = *s.DPSize
		}
		if s.MaxRunning != nil {
			f.MaxRunningPerDP = *s.MaxRunning
		}
	}
	for _, s := range v.States {
		c := int64(1_000_000_000)
		if s.MemoryUsage != nil && s.MemoryUsage.TokenCapacity != nil {
			c = *s.MemoryUsage.TokenCapacity
		}
		f.TokenCapacity += c
	}
	return f, nil
}

// truthyJSON is Python's truth value of a decoded JSON value.
func truthyJSON(raw []byte) bool {
	switch string(raw) {
	case "null", "false", "0", `""`, "[]", "{}", "0.0":
		return false
	}
	return true
}

// BatchServerFigures reads, after a case, the last non-null
// avg_spec_accept_length and last_gen_throughput over the internal states;
// nil when none has one.
func BatchServerFigures(body []byte) (lastGen, accept *float64, err error) {
	var v serverInfo
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, nil, fmt.Errorf("/server_info is not the JSON object SGLang serves: %v", err)
	}
	for _, s := range v.States {
		if s.Accept != nil {
			accept = s.Accept
		}
		if s.LastGen != nil {
			lastGen = s.LastGen
		}
	}
	return lastGen, accept, nil
}

// FlushRetry empties the prefix cache at path (/flush_cache or
// /reset_prefix_cache) as the reference does: up to three tries two seconds
// apart; a 200 ends it, the third failure is the error, and a 2xx other
// than 200 three times over is let pass.
func (c *Server) FlushRetry(ctx context.Context, path string, pause time.Duration) error {
	u := c.Base + path
	for try := 1; ; try++ {
		status, body, err := c.Do(ctx, http.MethodPost, u, nil, c.Auth, OneBatchTimeout)
		if err == nil && status == http.StatusOK {
			return nil
		}
		if try == 3 {
			switch {
			case err != nil:
				return fmt.Errorf("POST %s: %s", Redact(u), shortErr(err))
			case status >= 400:
				hint := ""
				if status == http.StatusNotFound && path == "/reset_prefix_cache" {
					hint = "; vLLM serves it only when started with VLLM_SERVER_DEV_MODE=1"
				}
				return fmt.Errorf("POST %s answered %d %s: %s%s", Redact(u), status, http.StatusText(status), oneLine(body, 300), hint)
			}
			return nil
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// CacheTokens is the server's prompt and cached-prompt token counters.
type CacheTokens struct{ Cached, Prompt float64 }

// BatchCacheTokens reads sglang:cached_tokens_total and
// sglang:prompt_tokens_total from /metrics, summed over their label sets;
// nil when the call fails or does not answer 200, with the error of a
// failed call (the reference prints it as a warning).
func (c *Server) BatchCacheTokens(ctx context.Context) (*CacheTokens, error) {
	status, body, err := c.get(ctx, "/metrics", 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("GET %s/metrics: %s", Redact(c.Base), shortErr(err))
	}
	if status != http.StatusOK {
		return nil, nil
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("GET %s/metrics: not the Prometheus text format: %v", Redact(c.Base), err)
	}
	return &CacheTokens{Cached: sumFamily(fams, "sglang:cached_tokens"), Prompt: sumFamily(fams, "sglang:prompt_tokens")}, nil
}

// sumFamily adds up the labelled samples of a counter, which a client
// library names with or without _total.
func sumFamily(fams map[string]*dto.MetricFamily, name string) float64 {
	var sum float64
	for _, n := range []string{name + "_total", name} {
		f, ok := fams[n]
		if !ok {
			continue
		}
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) == 0 {
				continue // the reference reads only lines with labels
			}
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Untyped != nil:
				sum += m.Untyped.GetValue()
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			}
		}
	}
	return sum
}

// CacheHitRate is Δcached / Δprompt between two readings, nil when either
// is missing or no prompt token was counted.
func CacheHitRate(before, after *CacheTokens) *float64 {
	if before == nil || after == nil {
		return nil
	}
	dp := after.Prompt - before.Prompt
	if dp <= 0 || math.IsNaN(dp) {
		return nil
	}
	r := (after.Cached - before.Cached) / dp
	return &r
}

// BatchProfile is one --profile start of one-batch (§4.4).
type BatchProfile struct {
	// Dir is where the server writes the traces: a directory named for the
	// time under the output directory, made on this machine too.
	Dir        string
	Steps      int
	StartStep  *int
	Activities []string
	ByStage    bool
	Prefix     string
}

// StartBatchProfile writes server_args.json into p.Dir (from /server_info,
// else /get_server_info) unless it is there, then POSTs /start_profile; the
// server stops by itself after p.Steps steps.
func (c *Server) StartBatchProfile(ctx context.Context, p BatchProfile) error {
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return err
	}
	argsFile := filepath.Join(p.Dir, "server_args.json")
	if _, err := os.Stat(argsFile); err != nil {
		status, body, err := c.serverInfo(ctx, 0)
		if err != nil {
			return fmt.Errorf("GET %s/server_info: %s", Redact(c.Base), shortErr(err))
		}
		if status != http.StatusOK {
			return fmt.Errorf("GET %s/server_info answered %d %s", Redact(c.Base), status, http.StatusText(status))
		}
		if err := os.WriteFile(argsFile, body, 0o644); err != nil {
			return err
		}
	}
	o := &pyjson.Object{}
	o.Set("output_dir", pyjson.String(p.Dir))
	o.Set("num_steps", pyjson.String(strconv.Itoa(p.Steps)))
	o.Set("activities", pyjson.Strings(p.Activities))
	o.Set("profile_by_stage", pyjson.Bool(p.ByStage))
	o.Set("merge_profiles", pyjson.Bool(false))
	o.Set("profile_prefix", pyjson.String(p.Prefix))
	if p.StartStep != nil {
		o.Set("start_step", pyjson.String(strconv.Itoa(*p.StartStep)))
	}
	u := c.Base + "/start_profile"
	status, body, err := c.Do(ctx, http.MethodPost, u, o.Bytes(), nil, 0)
	if err != nil {
		return fmt.Errorf("POST %s: %s", Redact(u), shortErr(err))
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("POST %s answered %d %s: %s", Redact(u), status, http.StatusText(status), oneLine(body, 300))
	}
	return nil
}

// TraceLinks finds the case's trace files in dir: the first by name whose
// name ends in .trace.json.gz or .trace.json and holds "extend" or
// "prefill", and "decode" (any case); "" for none.
func TraceLinks(dir string) (extend, decode string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", ""
	}
	for _, e := range ents { // ReadDir sorts by name
		n := strings.ToLower(e.Name())
		if !strings.HasSuffix(n, ".trace.json.gz") && !strings.HasSuffix(n, ".trace.json") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if extend == "" && (strings.Contains(n, "extend") || strings.Contains(n, "prefill")) {
			extend = p
		}
		if decode == "" && strings.Contains(n, "decode") {
			decode = p
		}
	}
	return extend, decode
}
