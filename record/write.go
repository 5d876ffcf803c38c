package record

import (
	"bufio"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"benchserve/internal/py/pyjson"
)

// Writer writes a record file (--record-file): one JSON line per request,
// written as the request ends, so that a long run's per-request data is on
// disk as it goes (and survives a crash) rather than only in the final
// result; a shard's file opens with a Header line and ends with an End
// line. Read reads all three back.
type Writer struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	last time.Time
	err  error
	// run is the run's start, written in every line (benchmark_start_unix)
	// so that the runs of a file several append to can be told apart.
	run atomic.Pointer[[]byte]
	// urls: each line says which --base-url its request went to.
	urls atomic.Bool
}

// lines are the buffers lines are made in, outside the lock: many
// requests end at once on as many processors, and only the copy into the
// file's buffer is one at a time.
var lines = sync.Pool{New: func() any { return new([]byte) }}

// IndexURLs makes each line end with the record's "url" index: for a run
// of several --base-url (with one, the lines stay as they were).
func (w *Writer) IndexURLs() {
	if w != nil {
		w.urls.Store(true)
	}
}

// appendURL puts rec's "url" key last in its line b.
func appendURL(b []byte, rec *Record) []byte {
	b = append(b[:len(b)-len("}\n")], `, "url": `...)
	b = pyjson.AppendInt(b, int64(rec.URL))
	return append(b, "}\n"...)
}

// Create opens path for appending, creating it if need be.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return &Writer{f: f, w: bufio.NewWriterSize(f, 256<<10), last: time.Now()}, nil
}

// StartRun sets the start of the run whose records follow. A nil Writer
// does nothing, here and in every method.
func (w *Writer) StartRun(start time.Time) {
	if w == nil {
		return
	}
	run := pyjson.AppendFloat(nil, float64(start.UnixNano())/1e9)
	w.run.Store(&run)
}

// Write appends rec; the buffer goes to the file at least once a second.
func (w *Writer) Write(rec *Record) {
	if w == nil {
		return
	}
	var run []byte
	if p := w.run.Load(); p != nil {
		run = *p
	}
	bp := lines.Get().(*[]byte)
	b := appendLine((*bp)[:0], rec, run)
	if w.urls.Load() {
		b = appendURL(b, rec)
	}
	w.mu.Lock()
	defer func() {
		w.mu.Unlock()
		if cap(b) <= 64<<10 {
			*bp = b
			lines.Put(bp)
		}
	}()
	w.put(b)
	if time.Since(w.last) >= time.Second {
		w.last = time.Now()
		if err := w.w.Flush(); err != nil && w.err == nil {
			w.err = err
		}
	}
}

// appendLine is rec's line; run, when not empty, is the run's start.
func appendLine(b []byte, rec *Record, run []byte) []byte {
	b = append(b, `{"seq": `...)
	b = pyjson.AppendInt(b, int64(rec.Seq))
	b = append(b, `, "id": `...)
	b = pyjson.AppendString(b, rec.ID)
	if rec.ServerID != "" {
		b = append(b, `, "server_id": `...)
		b = pyjson.AppendString(b, rec.ServerID)
	}
	b = append(b, `, "intended": `...)
	b = pyjson.AppendFloat(b, rec.Intended)
	b = append(b, `, "start": `...)
	b = pyjson.AppendFloat(b, rec.Start)
	b = append(b, `, "success": `...)
	b = pyjson.AppendBool(b, rec.Success)
	b = append(b, `, "latency": `...)
	b = pyjson.AppendFloat(b, rec.Latency)
	b = append(b, `, "ttft": `...)
	b = pyjson.AppendFloat(b, rec.TTFT)
	b = append(b, `, "ttfo": `...)
	b = pyjson.AppendFloat(b, rec.TTFO)
	b = append(b, `, "itl": [`...)
	for i, d := range rec.Gaps.All() {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = pyjson.AppendFloat(b, d.Seconds())
	}
	b = append(b, `], "prompt_len": `...)
	b = pyjson.AppendInt(b, int64(rec.PromptLen))
	b = append(b, `, "output_len": `...)
	b = pyjson.AppendInt(b, int64(rec.OutputLen))
	b = append(b, `, "reasoning_tokens": `...)
	b = pyjson.AppendInt(b, int64(rec.ReasoningTokens))
	b = append(b, `, "input_len": `...)
	b = pyjson.AppendInt(b, int64(rec.InputLen))
	if rec.AudioBytes > 0 {
		b = append(b, `, "audio_bytes": `...)
		b = pyjson.AppendInt(b, int64(rec.AudioBytes))
		b = append(b, `, "audio_seconds": `...)
		b = pyjson.AppendFloat(b, rec.AudioSeconds)
	}
	if rec.TextCounted {
		b = append(b, `, "text_tokens": `...)
		b = pyjson.AppendInt(b, int64(rec.TextTokens))
	}
	b = append(b, `, "error": `...)
	b = pyjson.AppendString(b, rec.Error)
	b = append(b, `, "error_kind": `...)
	b = pyjson.AppendString(b, rec.ErrorKind)
	if rec.Stream.Has(StreamRead) {
		b = append(b, `, "stream_integrity": `...)
		b = pyjson.AppendString(b, rec.Stream.Problems())
	}
	if rec.CancelAt != 0 {
		b = append(b, `, "cancel_at": `...)
		b = pyjson.AppendFloat(b, rec.CancelAt)
		b = append(b, `, "cancel_late": `...)
		b = pyjson.AppendFloat(b, rec.CancelLate)
	}
	if rec.Round {
		b = append(b, `, "session": `...)
		b = pyjson.AppendInt(b, int64(rec.Session))
		b = append(b, `, "turn": `...)
		b = pyjson.AppendInt(b, int64(rec.Turn))
		b = append(b, `, "planned_delay": `...)
		b = pyjson.AppendFloat(b, rec.PlannedDelay)
		b = append(b, `, "session_turns": `...)
		b = pyjson.AppendInt(b, int64(rec.SessionTurns))
	}
	if len(run) > 0 {
		b = append(b, `, "benchmark_start_unix": `...)
		b = append(b, run...)
	}
	return append(b, "}\n"...)
}

// WriteHeader writes a shard's header line, to the file at once: a merge
// waiting for the shards knows the file's shard before its first record.
func (w *Writer) WriteHeader(h *Header) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.put(append(h.object().Bytes(), '\n'))
	if err := w.w.Flush(); err != nil && w.err == nil {
		w.err = err
	}
}

// WriteEnd writes a shard's end line.
func (w *Writer) WriteEnd(e *End) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.put(append(e.object().Bytes(), '\n'))
}

func (w *Writer) put(b []byte) {
	if _, err := w.w.Write(b); err != nil && w.err == nil {
		w.err = err
	}
}

// Close flushes, syncs and closes the file, reporting the first error
// since Create.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.w.Flush()
	if serr := w.f.Sync(); err == nil {
		err = serr
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if w.err != nil {
		err = w.err
	}
	return err
}
