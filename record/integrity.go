package record

import "strings"

// Integrity is what the client found wrong with a streamed reply, one bit
// per problem (docs/metrics.md, "Stream integrity"); 0 for a reply that was
// not read as a stream to its end.
type Integrity uint8

// The bits of Integrity.
const (
	// StreamRead: a streamed 200 reply read to its end, or to an error
	// event; the other bits count only with it.
	StreamRead Integrity = 1 << iota
	// NoTerminator: the stream ended without its API's terminator
	// (data: [DONE], message_stop, response.completed).
	NoTerminator
	// NoFinish: it ended with its terminator but no finish reason.
	NoFinish
	// UsageMismatch: the server's token count disagrees with the content
	// received (fewer tokens than content chunks, a running count that
	// went back, or far fewer than the text retokenizes to).
	UsageMismatch
	// BadIndex: a non-monotonic or duplicate index (choices index,
	// sequence_number, content block index, /generate's completion_tokens).
	BadIndex
	// ErrorAfterContent: an error event came after content.
	ErrorAfterContent
)

// IntegrityProblems are the problem bits, in the order they are reported.
var IntegrityProblems = []Integrity{NoTerminator, NoFinish, UsageMismatch, BadIndex, ErrorAfterContent}

// Name is the problem's key in the record file and the result line.
func (s Integrity) Name() string {
	switch s {
	case NoTerminator:
		return "no_terminator"
	case NoFinish:
		return "no_finish_reason"
	case UsageMismatch:
		return "usage_mismatch"
	case BadIndex:
		return "bad_index"
	case ErrorAfterContent:
		return "error_after_content"
	}
	return ""
}

// Has reports whether every bit of b is set.
func (s Integrity) Has(b Integrity) bool { return s&b == b }

// Problems names the problems set, "" for none.
func (s Integrity) Problems() string {
	var out []string
	for _, b := range IntegrityProblems {
		if s.Has(b) {
			out = append(out, b.Name())
		}
	}
	return strings.Join(out, ",")
}

// ParseIntegrity reads Problems' form back (the record file), as a read
// stream.
func ParseIntegrity(s string) Integrity {
	v := StreamRead
	for _, name := range strings.Split(s, ",") {
		for _, b := range IntegrityProblems {
			if b.Name() == name {
				v |= b
			}
		}
	}
	return v
}
