package backend

import (
	"net/http"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
	"benchserve/record"
)

// protocol is one wire protocol (the reference's request functions, and
// ours): the body a request sends and the rules its reply is read by. Each
// is one file (native.go, completions.go, chat.go, embeddings.go, trt.go,
// truss.go, responses.go, messages.go) that declares its protocol value;
// a Spec row names it. The parser calls the hooks; nothing else asks
// which protocol it is. Hooks take the parser alone (the picked members
// are in p.f or p.ev), so that a call through them moves nothing to the
// heap.
type protocol struct {
	name string
	path string // appended to the base URL
	body func(c *Client, in *Input) *pyjson.Object
	// raw, when set, builds a body that is not JSON (transcription's
	// multipart form), sent as contentType says.
	raw         func(c *Client, in *Input) []byte
	contentType string
	// audioIn: the request uploads Input.Audio, which the record's audio
	// figures count.
	audioIn bool

	// chunk reads one JSON document of an OpenAI-like reply (p.f holds
	// its top-level members); nil: nothing to read beyond the error.
	chunk func(p *parser, at time.Time) error
	// events: the reply is a stream of typed events ("event:" lines,
	// then data whose "type" names it), each read by event with p.ev
	// holding its members and t its type.
	events bool
	event  func(p *parser, t []byte, v jsonscan.Value, at time.Time) error
	// whole reads a non-streamed reply; nil: as one chunk.
	whole func(p *parser, doc []byte, at time.Time) error
	// output sets a successful reply's output length and its source.
	output func(p *parser, r *record.Record)
	// cached is --cache-report's cached-token count from what the reply
	// carried (d: its cached_tokens_details); nil: the reply has none.
	cached func(p *parser, d *record.CacheDetails) (int, bool)

	// end names what ends a complete SSE stream; "": the stream may end
	// without it.
	end    string
	stream streaming
	// finishes: a complete stream names a finish reason (finish_reason,
	// meta_info.finish_reason, stop_reason, the Responses terminal event).
	finishes bool
	// embedding: nothing is generated (an empty reply is no failure, an
	// empty body is invalid, the output length is 0).
	embedding bool
	// splitReasoning: a chunk's text may begin with reasoning, kept apart
	// from the content (chat's reasoning_content).
	splitReasoning bool
	// audio: the reply is audio (speech): a whole body is binary, read
	// as it came.
	audio bool
	// latencyAtChunk: the latency is the last chunk's arrival, not the
	// last line's; textInPlace: the text is built in place and kept when
	// the reply fails (trt).
	latencyAtChunk, textInPlace bool
	// auth turns the OpenAI-style auth headers into the protocol's, with
	// the environment's keys (getenv); nil: they stay as they are.
	auth func(h http.Header, getenv func(string) string) http.Header
	// noRoutingKey: requests never carry the routing-key header.
	noRoutingKey bool
	// sampling: the body carries --temperature, --top-p,
	// --token-ids-logprob, --logprob-start-len and --return-routed-experts.
	sampling bool
	logprobs Logprobs
}

// streaming is whether a 200 reply is read as a stream.
type streaming uint8

const (
	streamAsAsked streaming = iota // as --disable-stream says
	streamAlways
	streamNever
)

// doneLine ends the OpenAI and /generate SSE streams.
const doneLine = "data: [DONE]"

// Logprobs is which logprob flags a backend's body carries.
type Logprobs uint8

// The logprob forms.
const (
	// LogprobsNone: neither --return-logprob nor --top-logprobs-num.
	LogprobsNone Logprobs = iota
	// LogprobsBoth: both, as given (/generate).
	LogprobsBoth
	// LogprobsTop: logprobs, only when --return-logprob and
	// --top-logprobs-num > 0 are both given (completions).
	LogprobsTop
)

// Protocol names the backend's wire protocol ("" for one it lacks:
// gserver), for the messages and tables that group backends by it.
func (s Spec) Protocol() string {
	if s.proto == nil {
		return ""
	}
	return s.proto.name
}

// Path is appended to the base URL; "" where Implemented is false.
func (s Spec) Path() string {
	if s.proto == nil {
		return ""
	}
	return s.proto.path
}

// AlwaysStreams reports whether replies stream whatever --disable-stream
// says (trt).
func (s Spec) AlwaysStreams() bool { return s.proto != nil && s.proto.stream == streamAlways }

// Sampling reports whether the body carries --temperature, --top-p,
// --token-ids-logprob, --logprob-start-len and --return-routed-experts
// (the native /generate).
func (s Spec) Sampling() bool { return s.proto != nil && s.proto.sampling }

// Logprobs is which logprob flags the body carries.
func (s Spec) Logprobs() Logprobs {
	if s.proto == nil {
		return LogprobsNone
	}
	return s.proto.logprobs
}

// Auth is the backend's auth headers, from the OpenAI-style h
// (Authorization from OPENAI_API_KEY or API_KEY) and the environment's
// keys (getenv): h itself, or the protocol's (anthropic-messages:
// x-api-key from ANTHROPIC_API_KEY, and anthropic-version).
func (s Spec) Auth(h http.Header, getenv func(string) string) http.Header {
	if s.proto == nil || s.proto.auth == nil {
		return h
	}
	return s.proto.auth(h, getenv)
}

// Body returns the request body for in, byte for byte what the reference
// tool's json.dumps(payload) sends (in.Body when it is set).
func (c *Client) Body(in *Input) []byte {
	if in.Body != nil {
		return in.Body
	}
	if c.proto == nil {
		return (&pyjson.Object{}).Bytes()
	}
	if c.proto.raw != nil {
		return c.proto.raw(c, in)
	}
	return c.proto.body(c, in).Bytes()
}
