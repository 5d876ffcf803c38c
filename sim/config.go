package sim

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Config is everything the simulator needs. Preset gives a complete one;
// the command line overrides single fields.
type Config struct {
	// Host and Port are where Start's caller listens (Start takes a listener,
	// so they are informational there; URL reports the real address).
	Host string
	Port int
	// TLSCert and TLSKey are PEM files to serve HTTPS with (HTTP/1.1 and
	// h2 by ALPN); TLSSelfSigned instead makes a certificate and writes it
	// to that file, for the client's --cacert. All "": cleartext.
	TLSCert, TLSKey, TLSSelfSigned string
	// Model is the served model name: /v1/models lists it and the OpenAI
	// endpoints accept it.
	Model string
	// Tokenizer names the tokenizer (tokenizer.Load) that counts prompt
	// tokens and whose ids the output words are; /model_info reports it so
	// that benchserve picks the same one.
	Tokenizer string
	// Getenv is the environment a hub tokenizer is looked up with (its
	// cache and offline variables); nil is an empty one.
	Getenv func(string) string
	// Preset is the name of the preset the engine values came from, for
	// /server_info.
	Preset string

	// MaxRunningRequests caps the decode batch; KVTokens is the KV-cache pool
	// in tokens. A request reserves prompt + max new tokens of it while it runs.
	MaxRunningRequests int
	KVTokens           int
	// MaxPrefillTokens caps the uncached prompt tokens of one prefill batch
	// (a longer prompt is still prefilled, alone).
	MaxPrefillTokens int
	// PageSize is the prefix cache's granularity in tokens.
	PageSize int
	// ContextLength is the longest prompt + max new tokens accepted.
	ContextLength int

	// Prefill step time = PrefillOverhead + uncached tokens / PrefillTokensPerSec
	// (+Inf: no per-token cost). Decode step time = DecodeBase +
	// DecodePerRequest × running requests.
	PrefillTokensPerSec float64
	PrefillOverhead     time.Duration
	DecodeBase          time.Duration
	DecodePerRequest    time.Duration

	// SpeculativeAcceptLength is the mean number of tokens a request gains
	// per decode step; 0 (or 1) turns speculative decoding off.
	SpeculativeAcceptLength float64
	// EOSProbability is the chance that generation stops after each token
	// when the request does not ask to ignore EOS.
	EOSProbability float64
	// ReasoningTokens is how many leading tokens of each chat-like reply are
	// reasoning: chat's reasoning_content, the Responses reasoning item, the
	// Messages thinking block.
	ReasoningTokens int
	// EmbeddingDim is the length of each /v1/embeddings vector.
	EmbeddingDim int

	Seed int64
	// APIKey, when set, is required as "Authorization: Bearer <key>" on
	// every endpoint except /health.
	APIKey string
	// TruthCapacity is how many finished requests /sim/truth keeps.
	TruthCapacity int

	// Faults are injected at their rates, drawn per request from Seed
	// (docs/sim.md, "Faults"); the X-Sim-Fault header overrides them.
	Faults []FaultRate

	// SpeechRTF is /v1/audio/speech's real-time factor: seconds of audio
	// per wall second, each reply's audio paced to it.
	SpeechRTF float64
	// TranscriptionRTF is /v1/audio/transcriptions' real-time factor:
	// seconds of audio transcribed per wall second of each reply.
	TranscriptionRTF float64

	// PDRouter makes /server_info answer as an SGLang PD router does
	// (router_manager, prefill and decode workers, no internal_states), for
	// clients' router guards.
	PDRouter bool
}

// Preset names.
const (
	PresetH100Llama8B = "h100-llama3-8b"
	PresetInstant     = "instant"
)

// Presets lists the preset names, the default first.
var Presets = []string{PresetH100Llama8B, PresetInstant}

// Defaults that no preset changes.
const (
	DefaultHost             = "127.0.0.1"
	DefaultPort             = 30000
	DefaultModel            = "benchserve-sim"
	DefaultTokenizer        = "o200k_base"
	DefaultTruthCapacity    = 100_000
	DefaultSeed             = 42
	DefaultSpeechRTF        = 20.0
	DefaultTranscriptionRTF = 40.0
)

// Preset returns a complete Config for a preset: the engine values from
// the preset and the defaults above for the rest. docs/sim.md derives the
// h100-llama3-8b numbers from published measurements.
func Preset(name string) (Config, error) {
	c := Config{
		Host:             DefaultHost,
		Port:             DefaultPort,
		Model:            DefaultModel,
		Tokenizer:        DefaultTokenizer,
		Preset:           name,
		PageSize:         16,
		EmbeddingDim:     384,
		SpeechRTF:        DefaultSpeechRTF,
		TranscriptionRTF: DefaultTranscriptionRTF,
		Seed:             DefaultSeed,
		TruthCapacity:    DefaultTruthCapacity,
	}
	switch name {
	case PresetH100Llama8B:
		c.MaxRunningRequests = 256
		c.KVTokens = 450_000
		c.MaxPrefillTokens = 16384
		c.ContextLength = 131072
		c.PrefillTokensPerSec = 30_000
		c.PrefillOverhead = 5 * time.Millisecond
		c.DecodeBase = 6 * time.Millisecond
		c.DecodePerRequest = 40 * time.Microsecond
		c.EOSProbability = 0.005
	case PresetInstant:
		c.MaxRunningRequests = 1 << 20
		c.KVTokens = 1 << 40
		c.MaxPrefillTokens = 1 << 40
		c.ContextLength = 1 << 30
		c.PrefillTokensPerSec = math.Inf(1)
		c.EOSProbability = 0.005
	default:
		return Config{}, fmt.Errorf("--preset: unknown preset %q (choose from %s)", name, strings.Join(Presets, ", "))
	}
	return c, nil
}

// Validate checks every field, naming the flag that sets it.
func (c *Config) Validate() error {
	switch {
	case c.Model == "":
		return fmt.Errorf("--model: must not be empty")
	case c.Tokenizer == "":
		return fmt.Errorf("--tokenizer: must not be empty")
	case c.Port < 0 || c.Port > 65535:
		return fmt.Errorf("--port: must be 0..65535, got %d", c.Port)
	case c.MaxRunningRequests < 1:
		return fmt.Errorf("--max-running-requests: must be >= 1, got %d", c.MaxRunningRequests)
	case c.KVTokens < 1:
		return fmt.Errorf("--max-total-tokens: must be >= 1, got %d", c.KVTokens)
	case c.MaxPrefillTokens < 1:
		return fmt.Errorf("--max-prefill-tokens: must be >= 1, got %d", c.MaxPrefillTokens)
	case c.PageSize < 1:
		return fmt.Errorf("--page-size: must be >= 1, got %d", c.PageSize)
	case c.ContextLength < 1:
		return fmt.Errorf("--context-length: must be >= 1, got %d", c.ContextLength)
	case math.IsNaN(c.PrefillTokensPerSec) || c.PrefillTokensPerSec <= 0:
		return fmt.Errorf("--prefill-tokens-per-sec: must be > 0 (or inf), got %v", c.PrefillTokensPerSec)
	case c.PrefillOverhead < 0:
		return fmt.Errorf("--prefill-overhead-ms: must be >= 0, got %v", ms(c.PrefillOverhead))
	case c.DecodeBase < 0:
		return fmt.Errorf("--decode-base-ms: must be >= 0, got %v", ms(c.DecodeBase))
	case c.DecodePerRequest < 0:
		return fmt.Errorf("--decode-per-request-ms: must be >= 0, got %v", ms(c.DecodePerRequest))
	case math.IsNaN(c.SpeculativeAcceptLength) || math.IsInf(c.SpeculativeAcceptLength, 0) ||
		c.SpeculativeAcceptLength != 0 && c.SpeculativeAcceptLength < 1 || c.SpeculativeAcceptLength > maxAcceptLength:
		return fmt.Errorf("--speculative-accept-length: must be 0 (off) or between 1 and %d, got %v", maxAcceptLength, c.SpeculativeAcceptLength)
	case math.IsNaN(c.EOSProbability) || c.EOSProbability < 0 || c.EOSProbability >= 1:
		return fmt.Errorf("--eos-probability: must be in [0, 1), got %v", c.EOSProbability)
	case c.ReasoningTokens < 0:
		return fmt.Errorf("--reasoning-tokens: must be >= 0, got %d", c.ReasoningTokens)
	case !(c.SpeechRTF > 0 && c.SpeechRTF <= 1e6):
		return fmt.Errorf("--speech-rtf: must be > 0 and at most 1e6, got %v", c.SpeechRTF)
	case !(c.TranscriptionRTF > 0 && c.TranscriptionRTF <= 1e6):
		return fmt.Errorf("--transcription-rtf: must be > 0 and at most 1e6, got %v", c.TranscriptionRTF)
	case c.EmbeddingDim < 1 || c.EmbeddingDim > 1<<16:
		return fmt.Errorf("--embedding-dim: must be 1..65536, got %d", c.EmbeddingDim)
	case c.TruthCapacity < 0:
		return fmt.Errorf("--truth-capacity: must be >= 0, got %d", c.TruthCapacity)
	}
	return validateFaults(c.Faults)
}

// lockstep reports whether decode steps take no time. The engine then lets
// a request run its next step only once its last chunk has been taken by
// the writer, so that every step is still one chunk on the wire.
func (c *Config) lockstep() bool { return c.DecodeBase == 0 && c.DecodePerRequest == 0 }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
