package bench

import (
	"reflect"
	"testing"

	"benchserve/backend"
	"benchserve/dataset"
	"benchserve/internal/exit"
)

func TestCheckTarget(t *testing.T) {
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	cases := []struct {
		cfg  Config
		want string // "" for none
	}{
		{Config{Host: "0.0.0.0"}, ""},
		{Config{Host: "::1", Port: num(8000)}, ""},
		{Config{Host: "[fe80::1%eth0]", Port: num(1)}, ""},
		{Config{Host: "h", Port: num(65536)}, "--port 65536: must be between 1 and 65535"},
		{Config{Host: "localhost:3000"}, "--host localhost:3000: give the port with --port (--host localhost --port 3000)"},
		{Config{Host: "http://localhost:3000"}, "--host http://localhost:3000: a host name, not a URL; use --base-url http://localhost:3000"},
		{Config{Host: "a:b:c"}, "--host a:b:c: not a host name or IP address"},
		{Config{BaseURL: str("https://api.example.com/v1/")}, ""},
		{Config{BaseURL: str("http://[::1]:8000")}, ""},
		{Config{BaseURL: str("localhost:3000")}, "--base-url localhost:3000: no scheme; did you mean --base-url http://localhost:3000?"},
		{Config{BaseURL: str("127.0.0.1:3000")}, "--base-url 127.0.0.1:3000: no scheme; did you mean --base-url http://127.0.0.1:3000?"},
		{Config{BaseURL: str("htp://x")}, "--base-url htp://x: unsupported scheme htp:// (use http:// or https://)"},
		{Config{BaseURL: str("http://")}, "--base-url http://: no host"},
		{Config{BaseURL: str("http://u:secret@h:0")}, "--base-url http://u:xxxxx@h:0: port 0 is out of range (1-65535)"},
		{Config{BaseURL: str("http://h:x")}, "--base-url http://h:x: not a URL (invalid port \":x\" after host)"},
	}
	for _, c := range cases {
		got := ""
		if err := checkTarget(&c.cfg); err != nil {
			got = err.Error()
			if ee, ok := err.(*exit.Error); !ok || ee.Code != exit.Usage {
				t.Errorf("%+v: %#v is not a usage error", c.cfg, err)
			}
		}
		if got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.cfg, got, c.want)
		}
	}
}

// TestDatasetBackend checks what the datasets are told of each backend:
// the rows dataset's tests use (backendOf there), from the table.
func TestDatasetBackend(t *testing.T) {
	chats := []string{"sglang-oai-chat", "vllm-chat", "lmdeploy-chat", "openai-responses", "anthropic-messages"}
	images := []string{"sglang", "sglang-native", "sglang-oai-chat", "vllm-chat", "openai-responses", "anthropic-messages"}
	want := map[string]dataset.Backend{
		"sglang":             {Images: dataset.ImagesNative},
		"sglang-native":      {Images: dataset.ImagesNative},
		"sglang-oai-chat":    {Chat: true, Images: dataset.ImagesChat},
		"vllm-chat":          {Chat: true, Images: dataset.ImagesChat},
		"lmdeploy-chat":      {Chat: true},
		"openai-responses":   {Chat: true, Images: dataset.ImagesChat},
		"anthropic-messages": {Chat: true, Images: dataset.ImagesChat},
	}
	for _, name := range append(backend.Names(), "tgi") {
		w := want[name]
		w.Name, w.ChatNames, w.ImageNames = name, chats, images
		if got := datasetBackend(name); !reflect.DeepEqual(got, w) {
			t.Errorf("%s: %+v, want %+v", name, got, w)
		}
	}
	if got := datasetBackend(""); !reflect.DeepEqual(got, dataset.Backend{}) {
		t.Errorf("no backend: %+v", got)
	}
}

// The table's model messages are the reference's, checked before the
// readiness wait.
func TestValidateNeedsModel(t *testing.T) {
	for name, want := range map[string]string{
		"trt":   "Please provide a model using `--model` when using `trt` backend.",
		"truss": "Please provide a model with `--model` when using truss backend. e.g. --model meta-llama/Llama-3.1-8B-Instruct",
		"vllm":  "",
	} {
		cfg := &Config{Backend: name, Host: "localhost", DatasetName: "random", Params: dataset.Params{NumPrompts: 1}}
		err := validate(cfg)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

// A rerank backend needs --rerank-docs and a dataset that builds rerank
// rows; no other backend takes --rerank-docs. All before any network call.
func TestValidateRerank(t *testing.T) {
	m := "m"
	for _, c := range []struct {
		backend, dataset string
		docs             int
		want             string
	}{
		{"vllm-rerank", "random-ids", 4, ""},
		{"tei-rerank", "random", 1, ""},
		{"vllm-score", "random-ids", 0, "--backend vllm-score: give --rerank-docs N (documents per query, with --dataset-name random or random-ids)"},
		{"vllm-rerank", "sharegpt", 4, "--backend vllm-rerank: --dataset-name sharegpt has no documents; use random or random-ids with --rerank-docs"},
		{"vllm", "random-ids", 4, "--rerank-docs: --backend vllm scores no documents; use vllm-rerank, sglang-rerank, vllm-score, tei-rerank, cohere-rerank"},
	} {
		cfg := &Config{Backend: c.backend, Host: "localhost", DatasetName: c.dataset, Model: &m,
			Params: dataset.Params{NumPrompts: 1, RandomInputLen: 8, RandomOutputLen: 8, RerankDocs: c.docs}}
		got := ""
		if err := validate(cfg); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s %s %d: %q, want %q", c.backend, c.dataset, c.docs, got, c.want)
		}
	}
}
