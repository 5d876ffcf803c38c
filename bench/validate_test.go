package bench

import (
	"reflect"
	"testing"

	"benchserve/backend"
	"benchserve/dataset"
)

// TestDatasetBackend checks what the datasets are told of each backend:
// the rows dataset's tests use (backendOf there), from the table.
func TestDatasetBackend(t *testing.T) {
	chats := []string{"sglang-oai-chat", "vllm-chat", "lmdeploy-chat"}
	images := []string{"sglang", "sglang-native", "sglang-oai-chat", "vllm-chat"}
	want := map[string]dataset.Backend{
		"sglang":          {Images: dataset.ImagesNative},
		"sglang-native":   {Images: dataset.ImagesNative},
		"sglang-oai-chat": {Chat: true, Images: dataset.ImagesChat},
		"vllm-chat":       {Chat: true, Images: dataset.ImagesChat},
		"lmdeploy-chat":   {Chat: true},
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
