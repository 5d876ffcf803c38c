package backend

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// referenceNames are the reference's --backend choices, in its order.
var referenceNames = []string{
	"sglang", "sglang-native", "sglang-oai", "sglang-oai-chat", "sglang-embedding",
	"vllm", "vllm-chat", "vllm-embedding", "lmdeploy", "lmdeploy-chat", "trt", "gserver", "truss",
}

// ourNames come after the reference's.
var ourNames = []string{"openai-responses", "anthropic-messages", "openai-speech", "vllm-rerank", "sglang-rerank", "vllm-score", "tei-rerank", "openai-transcription", "vllm-classify", "cohere-rerank"}

// TestSpecInvariants checks that the rows of the table agree with each
// other and with what the request functions do.
func TestSpecInvariants(t *testing.T) {
	if got := Names(); !slices.Equal(got, append(slices.Clone(referenceNames), ourNames...)) {
		t.Errorf("Names() = %v, want the reference's %v, then ours %v", got, referenceNames, ourNames)
	}
	openAI := func(p *protocol) bool { return p == protoCompletions || p == protoChat }
	protoPath := map[*protocol]string{}
	protoName := map[string]*protocol{}
	seen := map[string]bool{}
	for _, s := range Specs() {
		fail := func(format string, a ...any) { t.Helper(); t.Errorf(s.Name+": "+format, a...) }
		if s.Name == "" || seen[s.Name] {
			fail("name empty or repeated")
		}
		seen[s.Name] = true
		if got, ok := Lookup(s.Name); !ok || got != s {
			fail("Lookup = %+v, %v", got, ok)
		}
		if s.Implemented != (s.proto != nil) {
			fail("Implemented %v with protocol %v", s.Implemented, s.proto)
		}
		if s.Implemented != (s.Path() != "") || s.Path() != "" && !strings.HasPrefix(s.Path(), "/") {
			fail("Implemented %v with path %q", s.Implemented, s.Path())
		}
		if p, ok := protoPath[s.proto]; ok && p != s.Path() {
			fail("path %q, another backend of its protocol has %q", s.Path(), p)
		}
		protoPath[s.proto] = s.Path()
		if p, ok := protoName[s.Protocol()]; ok && p != s.proto {
			fail("protocol name %q names another protocol too", s.Protocol())
		}
		protoName[s.Protocol()] = s.proto
		if s.DefaultPort < 1 || s.DefaultPort > 65535 {
			fail("default port %d", s.DefaultPort)
		}
		if s.ReadyPath != "" && !strings.HasPrefix(s.ReadyPath, "/") {
			fail("ready path %q", s.ReadyPath)
		}
		if s.Chat != (s.proto == protoChat || s.proto == protoResponses || s.proto == protoMessages) {
			fail("Chat %v with protocol %q", s.Chat, s.Protocol())
		}
		if s.Embedding != (s.proto != nil && s.proto.embedding) {
			fail("Embedding %v with protocol %q", s.Embedding, s.Protocol())
		}
		if s.Usage != openAI(s.proto) {
			fail("Usage %v with protocol %q (completions and chat ask for it)", s.Usage, s.Protocol())
		}
		if s.ChunkLens && !(s.SGLang && openAI(s.proto)) {
			fail("ChunkLens without an SGLang OpenAI API (the accept length comes from /server_info)")
		}
		if s.SGLang && s.VLLM {
			fail("both SGLang and vLLM")
		}
		switch s.Images {
		case ImagesNative:
			if s.proto != protoNative {
				fail("native images need /generate")
			}
		case ImagesChat:
			if !s.Chat {
				fail("image_url parts need chat messages")
			}
		}
		switch s.CacheReport {
		case CacheInMeta:
			if !s.SGLang || s.proto != protoNative {
				fail("cached tokens in meta_info unasked: SGLang's /generate only")
			}
		case CacheAsk:
			if !s.SGLang || !openAI(s.proto) {
				fail("return_cached_tokens_details: SGLang's OpenAI APIs only")
			}
		}
		if s.TokenizePrompt && s.proto != protoNative {
			fail("--tokenize-prompt sends input_ids, which only /generate takes")
		}
		if s.PrintRequests && !s.Chat {
			fail("--print-requests prints chat messages")
		}
		if s.Rerank != (s.proto == protoRerankVLLM || s.proto == protoRerankSGLang || s.proto == protoScore || s.proto == protoRerankTEI || s.proto == protoRerankCohere) || s.Rerank && !s.Embedding {
			fail("Rerank %v with protocol %q (a rerank backend generates nothing, as embeddings)", s.Rerank, s.Protocol())
		}
		if !s.Headers && s.LoRA {
			fail("a LoRA adapter without headers: not a request function we have")
		}
	}
	if _, ok := Lookup("tgi"); ok {
		t.Error("Lookup(tgi) found a backend")
	}
	specs := Specs()
	specs[0].Name = "changed"
	if Names()[0] != "sglang" {
		t.Error("Specs() shares the table")
	}
}

// TestNamesOf lists the backends of each capability that messages name.
func TestNamesOf(t *testing.T) {
	for _, c := range []struct {
		what string
		ok   func(Spec) bool
		want string
	}{
		{"chat", func(s Spec) bool { return s.Chat }, "sglang-oai-chat vllm-chat lmdeploy-chat openai-responses anthropic-messages"},
		{"embedding", func(s Spec) bool { return s.Embedding }, "sglang-embedding vllm-embedding vllm-rerank sglang-rerank vllm-score tei-rerank vllm-classify cohere-rerank"},
		{"rerank", func(s Spec) bool { return s.Rerank }, "vllm-rerank sglang-rerank vllm-score tei-rerank cohere-rerank"},
		{"images", func(s Spec) bool { return s.Images != ImagesNone }, "sglang sglang-native sglang-oai-chat vllm-chat openai-responses anthropic-messages"},
		{"native", func(s Spec) bool { return s.proto == protoNative }, "sglang sglang-native"},
		{"sampling flags", func(s Spec) bool { return s.Sampling() }, "sglang sglang-native"},
		{"always streams", func(s Spec) bool { return s.AlwaysStreams() }, "trt"},
		{"logprobs", func(s Spec) bool { return s.Logprobs() != LogprobsNone }, "sglang sglang-native sglang-oai vllm lmdeploy"},
		{"chunk lengths", func(s Spec) bool { return s.ChunkLens }, "sglang-oai sglang-oai-chat"},
		{"no headers", func(s Spec) bool { return !s.Headers }, "trt"},
		{"no LoRA", func(s Spec) bool { return s.Implemented && !s.LoRA }, "trt truss openai-speech tei-rerank openai-transcription"},
		{"not implemented", func(s Spec) bool { return !s.Implemented }, "gserver"},
		{"needs --model", func(s Spec) bool { return s.NeedsModel != "" }, "trt truss tei-rerank"},
		{"vllm", func(s Spec) bool { return s.VLLM }, "vllm vllm-chat vllm-embedding vllm-rerank vllm-score vllm-classify"},
		{"sglang", func(s Spec) bool { return s.SGLang }, "sglang sglang-native sglang-oai sglang-oai-chat sglang-embedding sglang-rerank"},
	} {
		if got := strings.Join(NamesOf(c.ok), " "); got != c.want {
			t.Errorf("%s: %s, want %s", c.what, got, c.want)
		}
	}
}

// TestAuth: the Messages API authenticates with x-api-key from
// ANTHROPIC_API_KEY (the bearer stays without it) and carries
// anthropic-version; the other backends keep the headers given.
func TestAuth(t *testing.T) {
	bearer := http.Header{"Authorization": {"Bearer sk-1"}}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "ANTHROPIC_API_KEY" {
				return v
			}
			return ""
		}
	}
	m, _ := Lookup("anthropic-messages")
	if h := m.Auth(bearer, env("ak-2")); h.Get("Authorization") != "" || h.Get("X-Api-Key") != "ak-2" || h.Get("Anthropic-Version") != AnthropicVersion {
		t.Errorf("with ANTHROPIC_API_KEY: %v", h)
	}
	if h := m.Auth(bearer, env("")); h.Get("Authorization") != "Bearer sk-1" || h.Get("X-Api-Key") != "" || h.Get("Anthropic-Version") != AnthropicVersion {
		t.Errorf("without ANTHROPIC_API_KEY: %v", h)
	}
	if bearer.Get("Anthropic-Version") != "" {
		t.Error("Auth changed the headers it was given")
	}
	for _, s := range Specs() {
		if s.Name != m.Name {
			if h := s.Auth(bearer, env("ak-2")); len(h) != 1 || h.Get("Authorization") != "Bearer sk-1" {
				t.Errorf("%s: %v", s.Name, h)
			}
		}
	}
}
