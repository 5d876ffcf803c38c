package sim

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"strconv"
	"sync"
	"time"
)

// truthRec is what the simulator did for one request. Times are
// nanoseconds since the server started; -1 means "did not happen".
type truthRec struct {
	id       string
	endpoint string
	stream   bool
	body     [sha256.Size]byte // the request body's SHA-256 (a batch's prompts: the batch's)
	batch    string            // a batch's prompt: the batch request's id ("": not batched)
	index    int               // and its position in the batch

	arrival, enqueued          int64
	prefillStart, prefillEnd   int64
	firstChunk, lastChunk, end int64
	// firstContent is when the first chunk with content (not reasoning)
	// tokens returned; reasoning is how many leading tokens of the reply
	// are reasoning, sent counts the tokens of the chunks so far.
	firstContent    int64
	reasoning, sent int
	// cancelled is when the client closed the connection before the
	// reply ended (-1: it did not).
	cancelled int64

	promptTokens, cachedTokens, completionTokens int
	reasoningTokens                              int
	verify                                       int
	// divergedAt is the token from which the reply diverged (the
	// diverge fault under load; -1: it did not).
	divergedAt int
	finish     string
	err        string
	fault      Fault

	// chunks holds, per content chunk, three uvarints: nanoseconds since
	// the previous content chunk (the first: since arrival), its tokens, and
	// the nanoseconds its write and flush took. About 7 bytes a chunk.
	chunks []byte
	nChunk int
}

func newTruthRec(id, endpoint string, stream bool, arrival int64) *truthRec {
	return &truthRec{
		id: id, endpoint: endpoint, stream: stream, arrival: arrival,
		enqueued: -1, prefillStart: -1, prefillEnd: -1, firstChunk: -1, lastChunk: -1, end: -1,
		firstContent: -1, cancelled: -1, divergedAt: -1,
	}
}

// chunk records a content chunk of tokens tokens whose write and flush
// took write nanoseconds and returned at t.
func (r *truthRec) chunk(t int64, tokens int, write int64) {
	prev := r.lastChunk
	if prev < 0 {
		prev = r.arrival
		r.firstChunk = t
	}
	r.chunks = binary.AppendUvarint(r.chunks, uint64(max(t-prev, 0)))
	r.chunks = binary.AppendUvarint(r.chunks, uint64(tokens))
	r.chunks = binary.AppendUvarint(r.chunks, uint64(max(write, 0)))
	r.lastChunk = t
	r.nChunk++
	if r.firstContent < 0 && r.sent+tokens > r.reasoning {
		r.firstContent = t
	}
	r.sent += tokens
}

// truthLog keeps the last cap finished requests.
type truthLog struct {
	mu      sync.Mutex
	cap     int
	recs    []*truthRec // a ring once full
	next    int         // where the next record goes once full
	dropped uint64
}

func (l *truthLog) add(r *truthRec) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.cap == 0:
		l.dropped++
	case len(l.recs) < l.cap:
		l.recs = append(l.recs, r)
	default:
		l.recs[l.next] = r
		l.next = (l.next + 1) % l.cap
		l.dropped++
	}
}

// snapshot returns the records, oldest first, and the count dropped.
// Records are immutable once added, so they are read without the lock.
func (l *truthLog) snapshot() ([]*truthRec, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*truthRec, 0, len(l.recs))
	out = append(out, l.recs[l.next:]...)
	out = append(out, l.recs[:l.next]...)
	return out, l.dropped
}

func (l *truthLog) reset() {
	l.mu.Lock()
	l.recs, l.next, l.dropped = nil, 0, 0
	l.mu.Unlock()
}

// writeTruth writes the GET /sim/truth document (schema in docs/sim.md).
func writeTruth(w io.Writer, started time.Time, now int64, capacity int, dropped uint64, recs []*truthRec) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	b := make([]byte, 0, 4096)
	b = append(b, `{"started_at":`...)
	b = strconv.AppendQuote(b, started.UTC().Format(time.RFC3339Nano))
	b = append(b, `,"started_unix":`...)
	b = appendSeconds(b, started.UnixNano())
	b = append(b, `,"now":`...)
	b = appendSeconds(b, now)
	b = append(b, `,"capacity":`...)
	b = strconv.AppendInt(b, int64(capacity), 10)
	b = append(b, `,"dropped":`...)
	b = strconv.AppendUint(b, dropped, 10)
	b = append(b, `,"requests":[`...)
	for i, r := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		b = r.appendJSON(b)
		if len(b) > 32<<10 {
			if _, err := bw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	b = append(b, "]}\n"...)
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

func (r *truthRec) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, r.id)
	b = append(b, `,"endpoint":`...)
	b = appendJSONString(b, r.endpoint)
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, r.stream)
	b = append(b, `,"body_sha256":"`...)
	b = hex.AppendEncode(b, r.body[:])
	b = append(b, '"')
	if r.batch != "" {
		b = append(b, `,"batch":`...)
		b = appendJSONString(b, r.batch)
		b = append(b, `,"index":`...)
		b = strconv.AppendInt(b, int64(r.index), 10)
	}
	for _, f := range [...]struct {
		name string
		v    int64
	}{
		{"arrival", r.arrival}, {"enqueued", r.enqueued}, {"prefill_start", r.prefillStart},
		{"prefill_end", r.prefillEnd}, {"first_chunk", r.firstChunk}, {"first_content", r.firstContent},
		{"end", r.end}, {"cancelled_at", r.cancelled}, {"queue_time", span(r.enqueued, r.prefillStart)},
		{"ttft", span(r.arrival, r.firstChunk)}, {"ttfo", span(r.arrival, r.firstContent)},
	} {
		b = append(b, ',', '"')
		b = append(b, f.name...)
		b = append(b, '"', ':')
		if f.v < 0 {
			b = append(b, "null"...)
		} else {
			b = appendSeconds(b, f.v)
		}
	}
	b = append(b, `,"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(r.promptTokens), 10)
	b = append(b, `,"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(r.cachedTokens), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(r.completionTokens), 10)
	b = append(b, `,"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(r.reasoningTokens), 10)
	b = append(b, `,"spec_verify_ct":`...)
	b = strconv.AppendInt(b, int64(r.verify), 10)
	b = append(b, `,"finish_reason":`...)
	b = appendJSONString(b, r.finish)
	b = append(b, `,"error":`...)
	b = appendJSONString(b, r.err)
	b = append(b, `,"fault":`...)
	if r.fault.Kind == FaultNone {
		b = append(b, `"","fault_arg":null`...)
	} else {
		b = appendJSONString(b, r.fault.Kind.String())
		b = append(b, `,"fault_arg":`...)
		if _, ok := faultArgs[r.fault.Kind]; ok {
			b = strconv.AppendFloat(b, r.fault.Arg, 'g', -1, 64)
		} else {
			b = append(b, "null"...)
		}
	}
	b = append(b, `,"diverged_at":`...)
	if r.divergedAt < 0 {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(r.divergedAt), 10)
	}
	b = append(b, `,"chunks":[`...)
	t, rest := r.arrival, r.chunks
	for i := 0; len(rest) > 0; i++ {
		d, n1 := binary.Uvarint(rest)
		k, n2 := binary.Uvarint(rest[n1:])
		w, n3 := binary.Uvarint(rest[n1+n2:])
		rest = rest[n1+n2+n3:]
		t += int64(d)
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendSeconds(b, t)
		b = append(b, ',')
		b = strconv.AppendUint(b, k, 10)
		b = append(b, ',')
		b = appendSeconds(b, int64(w))
		b = append(b, ']')
	}
	return append(b, "]}"...)
}

// span is b − a, or -1 when either is missing.
func span(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	return b - a
}

// appendSeconds writes ns as seconds with all nine decimals, so no
// precision is lost.
func appendSeconds(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1e9, 10)
	b = append(b, '.')
	frac := ns % 1e9
	for d := int64(1e8); d > 0; d /= 10 {
		b = append(b, byte('0'+frac/d%10))
	}
	return b
}
