// Package dataset builds the rows a benchmark sends, one file per dataset.
package dataset

import "benchserve/internal/py/pyjson"

// Row is one request's worth of input (the reference tool's DatasetRow), or
// one conversation's when Turns is set.
type Row struct {
	// Text is the prompt; IDs replaces it when --tokenize-prompt asks for
	// token ids (native backend only); Messages replaces it with an
	// OpenAI-format messages list (a JSON array), which chat backends send
	// as is.
	Text     string
	IDs      []int
	Messages []byte

	// Turns makes the row a multi-turn conversation (spec §4.5): each turn
	// is a JSON array of the messages that round adds to the history; the
	// server's reply joins the history as an assistant message after each
	// round. Rounds run one after another in one concurrency slot, and each
	// is a record of its own.
	Turns [][]byte
	// TurnInfo, when set, has one entry per turn with what a session trace
	// recorded of it (mooncake-sessions, tracelab).
	TurnInfo []TurnInfo
	// Snapshots: each turn's messages are the whole request (a trace's
	// recorded history); neither earlier turns nor the replies are sent.
	Snapshots bool

	// PromptLen is the dataset's count of prompt tokens (for random datasets,
	// the target length), OutputLen the number of tokens to ask for (per
	// round, for a conversation).
	PromptLen int
	OutputLen int
	// TextPromptLen and VisionPromptLen split PromptLen for image datasets;
	// TextPromptLen defaults to PromptLen.
	TextPromptLen   int
	VisionPromptLen int

	// Images are data URIs sent with the prompt.
	Images []string
	// Docs are the documents a rerank row scores Text (the query) against
	// (--rerank-docs); PromptLen counts the query's and theirs.
	Docs []string
	// Audio is the file a transcription row sends (the audio dataset).
	Audio *Audio
	// Timestamp is the trace time in milliseconds (HasTimestamp tells it
	// apart from 0); trace datasets send each row at its time.
	Timestamp    float64
	HasTimestamp bool
	// RoutingKey goes out as the X-SMG-Routing-Key header.
	RoutingKey string
	// Extra is this row's own extra request body; its keys override the
	// global --extra-request-body's.
	Extra *pyjson.Object
}

// TurnInfo is what a trace recorded of one turn of a session.
type TurnInfo struct {
	// DelayMs is the wait before the turn, after the reply before it
	// ended (HasDelay: the trace gave one); a first turn's is not used.
	DelayMs  float64
	HasDelay bool
	// OutputLen is the turn's number of tokens to ask for (0: the row's).
	OutputLen int
}
