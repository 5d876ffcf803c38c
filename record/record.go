// Package record holds the flat per-request record: the dispatcher stamps it,
// a backend fills it, and the metrics read it. Times are float64 seconds, as in
// the reference tool, so that its formulas apply unchanged; the gaps between
// chunks, held for every token until the run ends, are kept compactly (Gaps)
// and read as the same float64 seconds.
package record

// Record is the outcome of one request (the reference tool's RequestFuncOutput).
type Record struct {
	// Seq is the dispatch order, from 0.
	Seq int
	// ID is the request's id: the one it was sent with as X-Request-Id
	// (and --print-requests printed), else the server's X-Request-Id.
	// ServerID is the server's X-Request-Id when it differs from ID.
	ID, ServerID string
	// Intended is when the schedule meant the request to leave, and Start when
	// it actually left (after its concurrency slot was taken), both in seconds
	// since the run's epoch, a monotonic instant taken before the first request.
	Intended float64
	Start    float64
	// End is when the request ended (its reply read, or its failure), in
	// the same seconds; 0 for one never sent.
	End float64
	// Sent is false for a request the run never sent (it was interrupted).
	Sent bool
	// RunStart is the run's benchmark_start_unix as a record file gives it
	// (read back only): it tells apart the runs of a file several wrote.
	RunStart float64

	Success bool
	// Latency runs from Start to the arrival of the last line of the response.
	Latency float64
	// TTFT runs from Start to the first chunk with content; 0 means none came.
	TTFT float64
	// TTFO (time to first output) runs from Start to the first chunk of
	// content after any reasoning: what a user first sees. Chat-like
	// backends set it (0: no content came); without reasoning it is TTFT.
	TTFO float64
	// ReasoningTokens and ContentTokens split a chat-like reply's
	// OutputLen: the reasoning tokens as the server counted them where it
	// reports them, else the reasoning text's own tokens; the content the
	// rest.
	ReasoningTokens, ContentTokens int
	// KernelTimed: every read of the response was timed with the kernel's
	// receive time of its bytes (see wire/netstamp), none at the read.
	KernelTimed bool
	// Gaps holds the gaps between content chunks (per token for /generate):
	// the reference's itl list, 3 to 4 bytes a gap.
	Gaps Gaps
	// ChunkTokens holds, per ITL gap, how many tokens the chunk that ended
	// it carried, by the server's own running count (OpenAI streams with
	// usage in every chunk); nil when the server did not say.
	ChunkTokens []int32
	// ChunkLens holds the byte length in Text of the chunk that ended each ITL
	// gap. Only the sglang-oai and sglang-oai-chat backends fill it: the
	// metrics retokenize their chunks with it when the server reports
	// speculative decoding (§5.1 of the spec).
	ChunkLens []int32
	// Text is the generated text. A client may leave it out of a successful
	// record once it has counted its tokens (TextCounted).
	Text string
	// TextTokens is the token count of the generated text, taken when the
	// request ended, with the tokenizer the metrics use; it counts only
	// when TextCounted is set.
	TextTokens  int
	TextCounted bool

	// InputLen, InputTextLen and InputVisionLen are the dataset's estimates,
	// which feed the input totals. PromptLen starts as InputLen and is replaced
	// by the server's prompt_tokens when it reports them.
	InputLen       int
	InputTextLen   int
	InputVisionLen int
	PromptLen      int
	// OutputLen is the server's completion_tokens where the backend reads it,
	// else the retokenized text when the server stopped early, else the
	// requested length; OutputSource says which.
	OutputLen int
	// AudioBytes and AudioSeconds are the audio a speech backend received
	// (openai-speech): its bytes and their duration, from the WAV header
	// or the PCM sample rate; 0 for other backends.
	AudioBytes   int
	AudioSeconds float64
	OutputSource OutputSource

	// SendDelay runs from when the client took the request up (its slot
	// taken) to just before its first byte was written (0 when unknown):
	// building it, waiting for a processor, connecting when it had to. Its
	// TTFT starts at the write (before the connect, when it connected), so
	// this makes the request leave late rather than its latencies long.
	SendDelay float64
	// Chunks counts the chunks with content; Bunched those that came in
	// the same read as the content chunk before them (their gap is 0, and
	// they carry the time of the read's newest bytes); LateBunched those
	// of them whose read came more than a millisecond after its newest
	// bytes arrived (see backend.LateRead), where the client, not the
	// server, may have bunched them.
	Chunks, Bunched, LateBunched int32
	// Stream is the stream integrity check of a streamed reply (0: not
	// read as a stream to its end).
	Stream Integrity

	// Error is "" on success; otherwise one line: "<status> <reason>: <body>"
	// for an HTTP error, or what went wrong. ErrorKind classifies it.
	Error     string
	ErrorKind string

	// CancelAt, for a request cancelled on purpose (KindCancelled), is
	// when the client closed its connection, in seconds since the epoch:
	// the request fully written plus --request-cancellation-delay.
	CancelAt float64
	// CancelLate is how late the client's timer closed it, in seconds
	// (a busy machine runs timers late).
	CancelLate float64

	CachedTokens int
	CacheDetails *CacheDetails

	SpecAcceptLength      float64
	SpecCapLength         float64
	SpecBlockAcceptLength float64
	SpecCapLensHistogram  []int

	// URL is the index of the --base-url the request went to (0 when the
	// run has one).
	URL int

	// Round marks a round of a multi-turn conversation: Session is the
	// conversation's plan position, Turn the round's index in it (from
	// 0), and PlannedDelay the think time planned before it, in seconds
	// (its Intended is the previous round's End plus that delay).
	// SessionTurns is how many rounds its conversation plans (0: not
	// known, in an older record file).
	Round        bool
	Session      int
	Turn         int
	PlannedDelay float64
	SessionTurns int
}

// Cancelled reports a request cancelled on purpose: counted apart from
// both the successes and the failures.
func (r *Record) Cancelled() bool { return !r.Success && r.ErrorKind == KindCancelled }

// OutputSource is where a record's OutputLen came from.
type OutputSource uint8

const (
	OutputNone        OutputSource = iota // no output: a failure, or embeddings
	OutputServer                          // the server's completion_tokens
	OutputRetokenized                     // no count, a stop reason: the text's tokens
	OutputRequested                       // no count, no stop reason: the requested length, as the reference
)

// String is the source's name in the result file.
func (s OutputSource) String() string {
	switch s {
	case OutputServer:
		return "server"
	case OutputRetokenized:
		return "retokenized"
	case OutputRequested:
		return "requested"
	}
	return "none"
}

// CacheDetails is sglang's cached_tokens_details object.
type CacheDetails struct {
	Device, Host, Storage int
	StorageBackend        string
	// Raw is the object as the server sent it, for --output-details.
	Raw []byte
}

// Error kinds, for the breakdown of failures in the result.
const (
	KindHTTP429     = "http_429"         // rate limited
	KindHTTP4xx     = "http_4xx"         // any other client error status
	KindHTTP5xx     = "http_5xx"         // a server error status
	KindHTTPOther   = "http_other"       // any other status but 200
	KindConnect     = "connect"          // no connection could be made
	KindReset       = "reset"            // the connection broke (before or during the response)
	KindTimeout     = "timeout"          // --request-timeout or --connect-timeout passed
	KindStreamError = "stream_error"     // the server sent an error object in a 200 response
	KindIncomplete  = "incomplete"       // the stream ended before [DONE]
	KindInvalid     = "invalid_response" // the response could not be parsed
	KindEmpty       = "empty_output"     // a 200 response with no output tokens
	KindTooLarge    = "too_large"        // a line or body over the size limit
	KindInterrupted = "interrupted"      // cut by the user's interrupt
	KindCancelled   = "cancelled"        // --request-cancellation-rate: the client closed it on purpose
	KindOther       = "other"
)
