package backend

import (
	"bytes"
	"errors"
	"fmt"

	"benchserve/internal/jsonscan"
)

// LineKind is what a line of a batched stream is.
type LineKind uint8

// The kinds of lines.
const (
	LineSkip LineKind = iota // not a data line
	LineDone                 // data: [DONE]
	LineData                 // a chunk
)

// GenerateChunk is one chunk of a batched /generate stream.
type GenerateChunk struct {
	Index  int // the prompt's position in input_ids
	Tokens int // meta_info.completion_tokens, cumulative
	// Finish is finish_reason.type, "" while the prompt runs; FinishRaw
	// the whole finish_reason as sent, for messages.
	Finish    string
	FinishRaw string
	// NaN: the server stopped it on NaN logits.
	NaN bool
}

// ParseGenerateLine reads one line of a batched /generate stream as the
// reference does (§3.8): data: [DONE] ends it, a line that is not data:
// is skipped, and every other line must be a JSON chunk that carries its
// index and meta_info (the reference crashes on one that does not).
func ParseGenerateLine(line []byte) (GenerateChunk, LineKind, error) {
	var c GenerateChunk
	if string(line) == "data: [DONE]" {
		return c, LineDone, nil
	}
	if !bytes.HasPrefix(line, []byte("data:")) {
		return c, LineSkip, nil
	}
	v, err := jsonscan.Parse(line[5:])
	if err != nil {
		return c, LineData, fmt.Errorf("not JSON: %v", err)
	}
	if v.Kind != jsonscan.Object {
		return c, LineData, fmt.Errorf("a chunk that is not a JSON object")
	}
	if e, ok := v.Get("error"); ok {
		return c, LineData, serverError("the server sent an error: " + errorMessage(e))
	}
	idx, ok := v.Get("index")
	if !ok {
		return c, LineData, errors.New(`a chunk without "index": the server does not tag the prompts of a batched stream`)
	}
	i, ok := idx.Int()
	if !ok || i < 0 {
		return c, LineData, fmt.Errorf(`"index" is %s, not a prompt's position`, idx.Raw)
	}
	c.Index = int(i)
	meta, ok := v.Get("meta_info")
	if !ok || meta.Kind != jsonscan.Object {
		return c, LineData, errors.New(`a chunk without "meta_info"`)
	}
	ct, ok := meta.Get("completion_tokens")
	n, isInt := ct.Int()
	if !ok || !isInt || n < 0 {
		return c, LineData, errors.New(`a chunk without a count in "meta_info.completion_tokens"`)
	}
	c.Tokens = int(n)
	if fr, ok := meta.Get("finish_reason"); ok && !fr.IsNull() {
		c.FinishRaw = string(fr.Raw)
		typ, _ := fr.Get("type")
		if typ.Kind == jsonscan.String {
			c.Finish = string(typ.AppendString(nil))
		} else {
			c.Finish = "?"
		}
		if m, ok := fr.Get("matched"); ok && m.Kind == jsonscan.String && string(m.AppendString(nil)) == "NaN happened" {
			c.NaN = true
		}
	}
	return c, LineData, nil
}

// CheckFinish is the reference's validate_finish_reason: a prompt may end
// at its length, or at a stop when EOS is not ignored; NaN logits and any
// other reason (an abort) fail the batch.
func CheckFinish(c GenerateChunk, ignoreEOS bool) error {
	switch {
	case c.Finish == "" || c.Finish == "length":
		return nil
	case c.Finish == "stop" && c.NaN:
		return fmt.Errorf("request %d hit NaN logits: %s", c.Index, c.FinishRaw)
	case c.Finish == "stop" && ignoreEOS:
		return fmt.Errorf("request %d stopped early despite ignore_eos=true: %s", c.Index, c.FinishRaw)
	case c.Finish == "stop":
		return nil
	}
	return fmt.Errorf("request %d ended with an unexpected finish reason: %s", c.Index, c.FinishRaw)
}

// ParseCompletionsLine reads one line of a batched vLLM completions
// stream: "data:" stripped, [DONE] ends it, and fn gets the index of every
// choice of a chunk.
func ParseCompletionsLine(line []byte, fn func(index int)) (LineKind, error) {
	if !bytes.HasPrefix(line, []byte("data:")) {
		return LineSkip, nil
	}
	payload := bytes.TrimSpace(line[5:])
	if string(payload) == "[DONE]" {
		return LineDone, nil
	}
	v, err := jsonscan.Parse(payload)
	if err != nil {
		return LineData, fmt.Errorf("not JSON: %v", err)
	}
	if e, ok := v.Get("error"); ok {
		return LineData, serverError("the server sent an error: " + errorMessage(e))
	}
	choices, _ := v.Get("choices")
	it := choices.Elements()
	for ch, ok := it.Next(); ok; ch, ok = it.Next() {
		idx, _ := ch.Get("index")
		i, ok := idx.Int()
		if !ok || i < 0 {
			return LineData, fmt.Errorf(`a choice whose "index" is %q`, idx.Raw)
		}
		fn(int(i))
	}
	return LineData, nil
}
