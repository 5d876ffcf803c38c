package bench

import (
	"bufio"
	"fmt"
	"os"
	"sync"
	"time"

	"benchserve/internal/py/pyjson"
	"benchserve/record"
)

// recordFile is --record-file: one JSON line per request, written as the
// request ends, so that a long run's per-request data is on disk as it
// goes (and survives a crash) rather than only in the final result.
type recordFile struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	buf  []byte
	last time.Time
	err  error
	// run is the run's start, written in every line (benchmark_start_unix)
	// so that the runs of a file several append to can be told apart.
	run []byte
}

// startRun sets the start of the run whose records follow.
func (r *recordFile) startRun(start time.Time) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.run = pyjson.AppendFloat(r.run[:0], float64(start.UnixNano())/1e9)
	r.mu.Unlock()
}

func openRecordFile(path string) (*recordFile, error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--record-file: %v", err)
	}
	return &recordFile{f: f, w: bufio.NewWriterSize(f, 256<<10), last: time.Now()}, nil
}

// write appends rec; the buffer goes to the file at least once a second.
// A nil recordFile does nothing.
func (r *recordFile) write(rec *record.Record) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buf[:0]
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
	if rec.TextCounted {
		b = append(b, `, "text_tokens": `...)
		b = pyjson.AppendInt(b, int64(rec.TextTokens))
	}
	b = append(b, `, "error": `...)
	b = pyjson.AppendString(b, rec.Error)
	b = append(b, `, "error_kind": `...)
	b = pyjson.AppendString(b, rec.ErrorKind)
	if len(r.run) > 0 {
		b = append(b, `, "benchmark_start_unix": `...)
		b = append(b, r.run...)
	}
	b = append(b, "}\n"...)
	r.buf = b
	if _, err := r.w.Write(b); err != nil && r.err == nil {
		r.err = err
	}
	if time.Since(r.last) >= time.Second {
		r.last = time.Now()
		if err := r.w.Flush(); err != nil && r.err == nil {
			r.err = err
		}
	}
}

// line appends a line of its own (a shard's header or footer).
func (r *recordFile) line(o *pyjson.Object) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.w.Write(append(o.Bytes(), '\n')); err != nil && r.err == nil {
		r.err = err
	}
}

// close flushes, syncs and closes the file, reporting the first error.
func (r *recordFile) close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.w.Flush()
	if serr := r.f.Sync(); err == nil {
		err = serr
	}
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	if r.err != nil {
		err = r.err
	}
	if err != nil {
		return fmt.Errorf("--record-file: %v", err)
	}
	return nil
}
