package backend

import "slices"

// Images is how a backend carries the images of the image datasets (image,
// mmmu and the image rows of custom), as the reference's
// create_mm_data_row builds them.
type Images uint8

// The image forms.
const (
	// ImagesNone: the image datasets refuse the backend.
	ImagesNone Images = iota
	// ImagesNative: the prompt, templated by the client with the image
	// placeholders, and the images as image_data (/generate).
	ImagesNative
	// ImagesChat: the raw text and image_url parts; the server applies
	// the chat template.
	ImagesChat
)

// CacheReport is what --cache-report does with a backend.
type CacheReport uint8

// The --cache-report forms.
const (
	// CacheUnsupported: the run warns that only sglang backends support it.
	CacheUnsupported CacheReport = iota
	// CacheInMeta: the server reports cached tokens without being asked.
	CacheInMeta
	// CacheAsk: the body asks for them with return_cached_tokens_details.
	CacheAsk
)

// Spec is one --backend choice: everything the program needs to know of
// it. Every package asks this table (Lookup, Specs) instead of comparing
// names; adding a backend is adding a row.
type Spec struct {
	Name string
	// proto is its wire protocol (the reference's request function): the
	// body, the reply's rules, the path (see protocol); nil for gserver.
	proto *protocol
	// DefaultPort is used without --port: the reference's table, with
	// 30000 for every backend it leaves out (vllm-chat too).
	DefaultPort int
	// Chat: the backend sends chat messages (chat completions, and ours:
	// the Responses API's input, Anthropic's messages), so it can hold a
	// multi-turn conversation and takes messages rows.
	Chat bool
	// Embedding: the backend measures embeddings (its protocol is embeddings):
	// no tokens are generated, nothing is streamed, and the console leaves
	// out the token lines.
	Embedding bool
	// Rerank: the backend scores a query against documents (Input.Docs,
	// --rerank-docs); it is also Embedding (nothing generated).
	Rerank bool
	// AudioIn: the backend uploads audio files (the audio dataset's rows)
	// and transcribes them; no other dataset has rows for it.
	AudioIn bool
	// Images is how the image datasets send to it.
	Images Images
	// SGLang: the server is SGLang's: /flush_cache takes ?timeout=,
	// /server_info gives the speculative accept length, and
	// SGLANG_IS_IN_CI flushes the cache before the run.
	SGLang bool
	// VLLM: the server is vLLM's, whose cache flush is /reset_prefix_cache.
	VLLM bool
	// CacheReport is what --cache-report does.
	CacheReport CacheReport
	// Headers: requests carry the auth, --header and X-Request-Id headers
	// (trt sends none, as the reference).
	Headers bool
	// LoRA: requests name the --lora-name adapter.
	LoRA bool
	// Usage: streamed requests ask for the usage chunk (stream_options),
	// so that the output length is the server's count.
	Usage bool
	// ChunkLens: the records keep each chunk's length and the text, for
	// the retokenized ITL (§5.1) of sglang-oai and sglang-oai-chat.
	ChunkLens bool
	// TokenizePrompt: --tokenize-prompt may send token ids (sglang only,
	// as the reference asserts).
	TokenizePrompt bool
	// PrintRequests: --print-requests is supported (sglang-oai-chat only).
	PrintRequests bool
	// ReadyPath is what the readiness check polls, appended to the base
	// URL: /v1/models, or "" (the base URL itself) for trt.
	ReadyPath string
	// NeedsModel is the reference's message when --model is not given;
	// "" when the model can be read from /v1/models.
	NeedsModel string
	// Implemented is false for gserver, which the reference does not
	// implement either.
	Implemented bool
}

// pathModels is where the readiness check finds the models.
const pathModels = "/v1/models"

// DefaultName is the reference's default --backend.
const DefaultName = "sglang"

// specs is the table, in the reference's order of the --backend choices.
var specs = []Spec{
	{Name: "sglang", proto: protoNative, DefaultPort: 30000, Images: ImagesNative,
		SGLang: true, CacheReport: CacheInMeta, Headers: true, LoRA: true, TokenizePrompt: true,
		ReadyPath: pathModels, Implemented: true},
	{Name: "sglang-native", proto: protoNative, DefaultPort: 30000, Images: ImagesNative,
		SGLang: true, CacheReport: CacheInMeta, Headers: true, LoRA: true,
		ReadyPath: pathModels, Implemented: true},
	{Name: "sglang-oai", proto: protoCompletions, DefaultPort: 30000,
		SGLang: true, CacheReport: CacheAsk, Headers: true, LoRA: true, Usage: true, ChunkLens: true,
		ReadyPath: pathModels, Implemented: true},
	{Name: "sglang-oai-chat", proto: protoChat, DefaultPort: 30000, Chat: true, Images: ImagesChat,
		SGLang: true, CacheReport: CacheAsk, Headers: true, LoRA: true, Usage: true, ChunkLens: true, PrintRequests: true,
		ReadyPath: pathModels, Implemented: true},
	{Name: "sglang-embedding", proto: protoEmbeddings, DefaultPort: 30000, Embedding: true,
		SGLang: true, Headers: true, LoRA: true,
		ReadyPath: pathModels, Implemented: true},
	{Name: "vllm", proto: protoCompletions, DefaultPort: 8000,
		VLLM: true, Headers: true, LoRA: true, Usage: true,
		ReadyPath: pathModels, Implemented: true},
	{Name: "vllm-chat", proto: protoChat, DefaultPort: 30000, Chat: true, Images: ImagesChat,
		VLLM: true, Headers: true, LoRA: true, Usage: true,
		ReadyPath: pathModels, Implemented: true},
	{Name: "vllm-embedding", proto: protoEmbeddings, DefaultPort: 8000, Embedding: true,
		VLLM: true, Headers: true, LoRA: true,
		ReadyPath: pathModels, Implemented: true},
	{Name: "lmdeploy", proto: protoCompletions, DefaultPort: 23333,
		Headers: true, LoRA: true, Usage: true,
		ReadyPath: pathModels, Implemented: true},
	{Name: "lmdeploy-chat", proto: protoChat, DefaultPort: 30000, Chat: true,
		Headers: true, LoRA: true, Usage: true,
		ReadyPath: pathModels, Implemented: true},
	{Name: "trt", proto: protoTRT, DefaultPort: 8000,
		NeedsModel:  "Please provide a model using `--model` when using `trt` backend.",
		Implemented: true},
	{Name: "gserver", DefaultPort: 9988, Headers: true, LoRA: true,
		ReadyPath: pathModels},
	{Name: "truss", proto: protoTruss, DefaultPort: 8080, Headers: true,
		ReadyPath:   pathModels,
		NeedsModel:  "Please provide a model with `--model` when using truss backend. e.g. --model meta-llama/Llama-3.1-8B-Instruct",
		Implemented: true},
	// Ours, after the reference's choices.
	{Name: "openai-responses", proto: protoResponses, DefaultPort: 8000, Chat: true, Images: ImagesChat,
		Headers: true, LoRA: true, ReadyPath: pathModels, Implemented: true},
	{Name: "anthropic-messages", proto: protoMessages, DefaultPort: 8000, Chat: true, Images: ImagesChat,
		Headers: true, LoRA: true, ReadyPath: pathModels, Implemented: true},
	{Name: "openai-speech", proto: protoSpeech, DefaultPort: 8000,
		Headers: true, ReadyPath: pathModels, Implemented: true},
	{Name: "vllm-rerank", proto: protoRerankVLLM, DefaultPort: 8000, Embedding: true, Rerank: true,
		VLLM: true, Headers: true, LoRA: true, ReadyPath: pathModels, Implemented: true},
	{Name: "sglang-rerank", proto: protoRerankSGLang, DefaultPort: 30000, Embedding: true, Rerank: true,
		SGLang: true, Headers: true, LoRA: true, ReadyPath: pathModels, Implemented: true},
	{Name: "vllm-score", proto: protoScore, DefaultPort: 8000, Embedding: true, Rerank: true,
		VLLM: true, Headers: true, LoRA: true, ReadyPath: pathModels, Implemented: true},
	// TEI has no /v1/models; /health answers once the model is loaded.
	{Name: "tei-rerank", proto: protoRerankTEI, DefaultPort: 8080, Embedding: true, Rerank: true,
		Headers: true, ReadyPath: "/health", Implemented: true,
		NeedsModel: "Please provide a model with `--model` when using tei-rerank backend (TEI lists no models; the tokenizer is the model's)."},
	{Name: "openai-transcription", proto: protoTranscription, DefaultPort: 8000, AudioIn: true,
		Headers: true, ReadyPath: pathModels, Implemented: true},
	{Name: "vllm-classify", proto: protoClassify, DefaultPort: 8000, Embedding: true,
		VLLM: true, Headers: true, LoRA: true, ReadyPath: pathModels, Implemented: true},
	{Name: "cohere-rerank", proto: protoRerankCohere, DefaultPort: 8000, Embedding: true, Rerank: true,
		Headers: true, LoRA: true, ReadyPath: pathModels, Implemented: true},
}

// Specs returns the table, in the reference's order of the --backend
// choices. The slice is a copy.
func Specs() []Spec { return slices.Clone(specs) }

// Lookup returns the Spec of the backend name.
func Lookup(name string) (Spec, bool) {
	for _, s := range specs {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Names are the --backend choices, in the reference's order.
func Names() []string { return NamesOf(func(Spec) bool { return true }) }

// NamesOf returns the names of the backends whose Spec satisfies ok, in
// the table's order (for the messages that list them).
func NamesOf(ok func(Spec) bool) []string {
	var out []string
	for _, s := range specs {
		if ok(s) {
			out = append(out, s.Name)
		}
	}
	return out
}

// Path is the path a backend appends to the base URL; "" for gserver (which
// has none) and for unknown names.
func Path(name string) string {
	s, _ := Lookup(name)
	return s.Path()
}

// IsEmbedding reports whether the backend measures embeddings (no tokens
// are generated, so the console leaves out the token lines).
func IsEmbedding(name string) bool {
	s, _ := Lookup(name)
	return s.Embedding
}

// DefaultPort is the port used when --port is not given (Spec.DefaultPort);
// 30000 for an unknown name.
func DefaultPort(name string) int {
	if s, ok := Lookup(name); ok {
		return s.DefaultPort
	}
	return 30000
}
