package sim

import (
	"encoding/json"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"benchserve/internal/py/pyfmt"
	"benchserve/internal/py/pyjson"
)

// models is GET /v1/models, in vLLM's shape.
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	b := append([]byte(`{"object":"list","data":[{"id":`), s.modelQ...)
	b = append(b, `,"object":"model","created":`...)
	b = strconv.AppendInt(b, s.start.Unix(), 10)
	b = append(b, `,"owned_by":"benchserve","root":`...)
	b = append(b, s.modelQ...)
	b = append(b, `,"parent":null,"max_model_len":`...)
	b = strconv.AppendInt(b, int64(s.cfg.ContextLength), 10)
	writeJSON(w, http.StatusOK, append(b, "}]}"...))
}

// modelInfo is SGLang's GET /model_info: tokenizer_path names the
// simulator's tokenizer, so benchserve picks the same one.
func (s *Server) modelInfo(w http.ResponseWriter, r *http.Request) {
	b := append([]byte(`{"model_path":`), s.modelQ...)
	b = append(b, `,"tokenizer_path":`...)
	b = appendJSONString(b, s.cfg.Tokenizer)
	b = append(b, `,"is_generation":true,"preferred_sampling_params":null,"weight_version":"default"}`...)
	writeJSON(w, http.StatusOK, b)
}

// serverInfo is SGLang's GET /server_info (and /get_server_info): server
// arguments, per-DP internal states, version.
func (s *Server) serverInfo(w http.ResponseWriter, r *http.Request) {
	c, st := &s.cfg, &s.eng.stats
	port := c.Port
	if u := s.URL(); u != "" {
		if _, p, err := net.SplitHostPort(u[len("http://"):]); err == nil {
			port, _ = strconv.Atoi(p)
		}
	}
	state := map[string]any{
		"#running-req":                          st.running.Load(),
		"#queue-req":                            st.waiting.Load(),
		"kv_used_tokens":                        st.usedKV.Load(),
		"kv_cached_tokens":                      st.cacheTokens.Load(),
		"dp_size":                               1,
		"effective_max_running_requests_per_dp": c.MaxRunningRequests,
		"memory_usage":                          map[string]any{"token_capacity": c.KVTokens},
		"last_gen_throughput":                   pyFloat(s.eng.dlog.throughput()),
	}
	var algo *string
	if s.eng.spec.on() {
		a := "SIMULATED"
		algo = &a
		avg := 0.0
		if n := st.specSteps.Load(); n > 0 {
			avg = float64(st.specTokens.Load()) / float64(n)
		}
		state["avg_spec_accept_length"] = pyFloat(avg)
	}
	var rate *float64
	if !math.IsInf(c.PrefillTokensPerSec, 1) {
		rate = &c.PrefillTokensPerSec
	}
	info := struct {
		DisaggregationMode   string           `json:"disaggregation_mode,omitempty"`
		ModelPath            string           `json:"model_path"`
		TokenizerPath        string           `json:"tokenizer_path"`
		ServedModelName      string           `json:"served_model_name"`
		Host                 string           `json:"host"`
		Port                 int              `json:"port"`
		MaxRunningRequests   int              `json:"max_running_requests"`
		MaxTotalTokens       int              `json:"max_total_tokens"`
		MaxPrefillTokens     int              `json:"max_prefill_tokens"`
		PageSize             int              `json:"page_size"`
		ContextLength        int              `json:"context_length"`
		SpeculativeAlgorithm *string          `json:"speculative_algorithm"`
		Sim                  any              `json:"sim"`
		InternalStates       []map[string]any `json:"internal_states"`
		Version              string           `json:"version"`
	}{
		"", c.Model, c.Tokenizer, c.Model, c.Host, port, c.MaxRunningRequests, c.KVTokens, c.MaxPrefillTokens,
		c.PageSize, c.ContextLength, algo,
		struct {
			Preset                  string   `json:"preset"`
			PrefillTokensPerSec     *float64 `json:"prefill_tokens_per_sec"`
			PrefillOverheadMs       float64  `json:"prefill_overhead_ms"`
			DecodeBaseMs            float64  `json:"decode_base_ms"`
			DecodePerRequestMs      float64  `json:"decode_per_request_ms"`
			SpeculativeAcceptLength float64  `json:"speculative_accept_length"`
			EOSProbability          float64  `json:"eos_probability"`
			ReasoningTokens         int      `json:"reasoning_tokens"`
			Seed                    int64    `json:"seed"`
			TruthCapacity           int      `json:"truth_capacity"`
			Faults                  []string `json:"faults"`
		}{c.Preset, rate, ms(c.PrefillOverhead), ms(c.DecodeBase), ms(c.DecodePerRequest),
			c.SpeculativeAcceptLength, c.EOSProbability, c.ReasoningTokens, c.Seed, c.TruthCapacity, faultList(c.Faults)},
		[]map[string]any{state},
		Version,
	}
	var v any = info
	if c.PDRouter {
		// What SGLang's router answers in PD mode: its own fields and each
		// worker's server info; the workers here are the one engine.
		prefill, decode := info, info
		prefill.DisaggregationMode, decode.DisaggregationMode = "prefill", "decode"
		v = map[string]any{"router_manager": true, "routers_count": 1, "workers_count": 2,
			"prefill": []any{prefill}, "decode": []any{decode}}
	}
	b, err := json.Marshal(v)
	if err != nil {
		writeOAIError(w, http.StatusInternalServerError, "InternalServerError", err.Error(), "")
		return
	}
	writeJSON(w, http.StatusOK, b)
}

// pyFloat is f as Python's json writes a float (0.0, not 0).
func pyFloat(f float64) json.RawMessage { return pyjson.Float(f) }

// flushCache is SGLang's /flush_cache: it empties the prefix cache only
// when no request is queued or running, waiting up to ?timeout= seconds
// (default 0) for that; 400 if it never is.
func (s *Server) flushCache(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		writeText(w, http.StatusMethodNotAllowed, "Method Not Allowed\n")
		return
	}
	var timeout float64
	if v := r.URL.Query().Get("timeout"); v != "" {
		t, err := pyfmt.ParseFloat(v)
		if err != nil || math.IsNaN(t) || math.IsInf(t, 0) || t < 0 {
			writeText(w, http.StatusBadRequest, "timeout: must be a finite number of seconds >= 0, got "+strconv.Quote(v)+"\n")
			return
		}
		timeout = t
	}
	deadline := time.Now().Add(time.Duration(timeout * float64(time.Second)))
	for {
		if s.eng.flush(true) {
			writeText(w, http.StatusOK, "Cache flushed.\n")
			return
		}
		if !time.Now().Before(deadline) {
			break
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	writeText(w, http.StatusBadRequest, "Cache not flushed: requests are queued or running (pass ?timeout=<seconds> to wait for them).\n")
}

// resetPrefixCache is vLLM's POST /reset_prefix_cache: empty the cache now.
func (s *Server) resetPrefixCache(w http.ResponseWriter, r *http.Request) {
	if !s.eng.flush(false) {
		writeText(w, http.StatusServiceUnavailable, "the simulator is shutting down\n")
		return
	}
	w.WriteHeader(http.StatusOK)
}

// text returns a handler that answers 200 with msg, as SGLang's profiler
// endpoints do (the simulator has nothing to profile).
func (s *Server) text(msg string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { writeText(w, http.StatusOK, msg) }
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	select {
	case <-s.eng.stopped:
		w.WriteHeader(http.StatusServiceUnavailable)
	default:
		w.WriteHeader(http.StatusOK)
	}
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	b := s.appendMetrics(make([]byte, 0, 16<<10))
	h := w.Header()
	h.Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b) //nolint:errcheck
}

// getTruth is GET /sim/truth: every finished request still kept. It first
// waits (up to a second) for responses whose last write has begun, so a
// client that has read all its replies finds them all.
func (s *Server) getTruth(w http.ResponseWriter, r *http.Request) {
	for deadline := time.Now().Add(time.Second); s.closing.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Microsecond)
	}
	recs, dropped := s.truth.snapshot()
	w.Header().Set("Content-Type", "application/json")
	writeTruth(w, s.start, s.since(time.Now()), s.cfg.TruthCapacity, dropped, recs) //nolint:errcheck
}

// resetTruth is POST /sim/truth/reset.
func (s *Server) resetTruth(w http.ResponseWriter, r *http.Request) {
	s.truth.reset()
	writeJSON(w, http.StatusOK, []byte(`{"reset":true}`))
}

func writeText(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(msg)))
	w.WriteHeader(status)
	w.Write([]byte(msg)) //nolint:errcheck
}
