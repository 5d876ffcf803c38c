package sim

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequestBodies sends arbitrary bodies to every generation endpoint:
// the simulator must answer 200 or a 4xx with a JSON error, never fail or
// hang.
func FuzzRequestBodies(f *testing.F) {
	for _, seed := range []struct{ path, body string }{
		{"/v1/completions", `{"prompt":"hi","max_tokens":3,"stream":true,"stream_options":{"include_usage":true}}`},
		{"/v1/completions", `{"prompt":[[1,2],[3]],"max_tokens":2}`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"max_completion_tokens":2,"stream":true}`},
		{"/generate", `{"input_ids":[1,2,3],"sampling_params":{"max_new_tokens":0},"stream":true}`},
		{"/generate", `{"text":"a","sampling_params":null}`},
		{"/v2/models/ensemble/generate_stream", `{"text_input":"a","max_tokens":2,"min_length":2}`},
		{"/v1/models/model:predict", `{"prompt":"a","max_tokens":2,"stream":true}`},
		{"/v1/embeddings", `{"input":[[1,2],"b"]}`},
	} {
		f.Add(seed.path, seed.body)
	}
	cfg, _ := Preset(PresetInstant)
	cfg.ContextLength = 256
	s, err := New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	paths := map[string]bool{"/v1/completions": true, "/v1/chat/completions": true, "/generate": true,
		"/v2/models/ensemble/generate_stream": true, "/v1/models/model:predict": true, "/v1/embeddings": true}
	f.Fuzz(func(t *testing.T, path, body string) {
		if !paths[path] {
			return
		}
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
		switch {
		case w.Code == http.StatusOK:
		case w.Code >= 400 && w.Code < 500:
			if !strings.HasPrefix(w.Body.String(), `{"error":`) {
				t.Errorf("%s %q: %d %s", path, body, w.Code, w.Body)
			}
		default:
			t.Errorf("%s %q: status %d %s", path, body, w.Code, w.Body)
		}
	})
}
