package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer speaks every backend's protocol with fixed timings: the first
// chunk leaves ttft after the request arrives, then one token every itl, on
// an absolute schedule.
type fakeServer struct {
	ttft, itl time.Duration
	// failEvery makes every n-th generation request answer 500 (0: never).
	failEvery int64
	// accept is reported as avg_spec_accept_length when non-zero.
	accept float64

	srv      *httptest.Server
	requests atomic.Int64
	mu       sync.Mutex
	bodies   []map[string]any
	headers  []http.Header
	calls    []string
}

func newFakeServer(t *testing.T, ttft, itl time.Duration) *fakeServer {
	f := &fakeServer{ttft: ttft, itl: itl}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+r.URL.RequestURI())
	f.mu.Unlock()
	switch r.URL.Path {
	case "/v1/models":
		io.WriteString(w, `{"object":"list","data":[{"id":"fake-model","object":"model"}]}`)
		return
	case "/model_info":
		io.WriteString(w, `{"model_path":"fake-model","tokenizer_path":"o200k_base"}`)
		return
	case "/server_info", "/get_server_info":
		if f.accept != 0 {
			fmt.Fprintf(w, `{"version":"fake","internal_states":[{"avg_spec_accept_length":%v}]}`, f.accept)
		} else {
			io.WriteString(w, `{"version":"fake","internal_states":[{}]}`)
		}
		return
	case "/flush_cache", "/reset_prefix_cache", "/start_profile", "/stop_profile":
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
		return
	case "/":
		io.WriteString(w, "ok") // trt readiness probes the base URL
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n := f.requests.Add(1)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	if f.failEvery > 0 && n%f.failEvery == 0 {
		http.Error(w, `{"error":{"message":"injected failure","code":500}}`, http.StatusInternalServerError)
		return
	}
	if r.URL.Path == "/v1/embeddings" {
		time.Sleep(f.ttft)
		io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"usage":{"prompt_tokens":3,"total_tokens":3}}`)
		return
	}
	tokens := 4 // when the body says nothing (an extra body may replace sampling_params)
	for _, k := range []string{"max_tokens", "max_completion_tokens"} {
		if v, ok := body[k].(float64); ok {
			tokens = int(v)
		}
	}
	if sp, ok := body["sampling_params"].(map[string]any); ok {
		if v, ok := sp["max_new_tokens"].(float64); ok {
			tokens = int(v)
		}
	}
	stream, _ := body["stream"].(bool)
	fl, _ := w.(http.Flusher)
	wait := func(i int) { // token i leaves at arrived + ttft + i*itl
		time.Sleep(time.Until(arrived.Add(f.ttft + time.Duration(i)*f.itl)))
	}
	if !stream {
		wait(tokens - 1)
		text := strings.Repeat(" tok", tokens)
		switch r.URL.Path {
		case "/generate":
			fmt.Fprintf(w, `{"text":%q,"meta_info":{"prompt_tokens":7,"completion_tokens":%d}}`, text, tokens)
		case "/v1/chat/completions":
			fmt.Fprintf(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":%q}}],"usage":{"prompt_tokens":7,"completion_tokens":%d}}`, text, tokens)
		default:
			fmt.Fprintf(w, `{"choices":[{"index":0,"text":%q}],"usage":{"prompt_tokens":7,"completion_tokens":%d}}`, text, tokens)
		}
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if r.URL.Path == "/v1/chat/completions" {
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}`+"\n\n")
	}
	for i := 0; i < tokens; i++ {
		wait(i)
		switch r.URL.Path {
		case "/generate":
			fmt.Fprintf(w, "data: {\"text\":%q,\"meta_info\":{\"prompt_tokens\":7,\"completion_tokens\":%d}}\n\n", strings.Repeat(" tok", i+1), i+1)
		case "/v1/chat/completions":
			io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":" tok"}}]}`+"\n\n")
		case "/v2/models/ensemble/generate_stream":
			io.WriteString(w, `data:{"text_output":" tok"}`+"\n\n")
		default:
			io.WriteString(w, `data: {"choices":[{"index":0,"text":" tok"}]}`+"\n\n")
		}
		if fl != nil {
			fl.Flush()
		}
	}
	if r.URL.Path != "/v2/models/ensemble/generate_stream" {
		io.WriteString(w, "data: [DONE]\n\n")
	}
}
