package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"benchserve/internal/py/argparse"
	"benchserve/internal/py/pyjson"
)

// agenticOutputLen is the per-turn output length without
// --sharegpt-output-len: about the mean assistant reply of OpenHands-style
// traces.
const agenticOutputLen = 220

// loadAgentic reads an agentic trace (spec §3.8): {"conversations":
// [[{"messages": [...], "prompt_tokens": n}, ...], ...]}, where each turn
// holds only the messages it adds. Each conversation is one multi-turn row;
// bench replays its turns in order, adding the server's real replies to the
// history.
// agenticBackend refuses a backend that cannot hold a conversation.
func agenticBackend(b Backend) error {
	if b.noChat() {
		return fmt.Errorf("--backend %s: agentic-trace conversations need a chat backend (%s)", b.Name, b.chats())
	}
	return nil
}

func loadAgentic(ctx context.Context, p Params, env Env) ([]Row, error) {
	if err := agenticBackend(p.Backend); err != nil {
		return nil, err
	}
	if p.Path == "" {
		return nil, errors.New("--dataset-path: agentic-trace needs the trace's JSON file")
	}
	label := "--dataset-path " + p.Path
	data, err := os.ReadFile(p.Path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", label, unwrapPath(err))
	}
	convs, err := agenticConversations(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", label, err)
	}
	if len(convs) == 0 {
		return nil, fmt.Errorf("%s: no conversations found", label)
	}
	offset := p.DatasetOffset % len(convs)
	if offset < 0 {
		offset += len(convs)
	}
	convs = append(convs[offset:], convs[:offset]...)
	outLen := agenticOutputLen
	if p.SharegptOutputLen != nil && *p.SharegptOutputLen != 0 {
		outLen = *p.SharegptOutputLen
	}

	var rows []Row
	for _, c := range convs {
		if p.NumPrompts > 0 && len(rows) >= p.NumPrompts {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		turns, promptLen, err := agenticTurns(data, c)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", label, err)
		}
		if mt := p.AgenticMaxTurns; mt != nil && *mt != 0 {
			turns = turns[:pyCut(len(turns), *mt)]
		}
		if len(turns) == 0 {
			continue
		}
		rows = append(rows, Row{Turns: turns, PromptLen: promptLen, TextPromptLen: promptLen, OutputLen: outLen})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no usable conversations (every one is empty)", label)
	}
	n := make([]int, len(rows))
	for i, r := range rows {
		n[i] = len(r.Turns)
	}
	fmt.Fprintf(env.Out, "#Conversations: %d (offset=%d, turns/conv min=%d max=%d avg=%.1f)\n",
		len(rows), offset, slices.Min(n), slices.Max(n), meanInts(n))
	fmt.Fprintf(env.Out, "#Output tokens per turn: %d\n", outLen)
	return rows, nil
}

// pyCut is the length of s[:k] in Python for a list of length n.
func pyCut(n, k int) int {
	if k < 0 {
		return max(0, n+k)
	}
	return min(n, k)
}

// agenticConv is one conversation: its JSON and where it starts in the
// file.
type agenticConv struct {
	off int64
	raw json.RawMessage
}

// agenticConversations splits the file's "conversations" list (the last
// one, if the key repeats, as json.load keeps it).
func agenticConversations(data []byte) ([]agenticConv, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	// The decoder's offsets count from the value it was decoding; a whole
	// check of the file gives the error's place in it.
	syntax := func(err error) error {
		var whole json.RawMessage
		var se *json.SyntaxError
		if errors.As(json.Unmarshal(data, &whole), &se) {
			if se.Offset >= int64(len(data)) {
				line, col := lineCol(data, int64(len(data)))
				return fmt.Errorf("line %d, column %d: invalid JSON: unexpected end of file", line, col)
			}
			// Offset counts the bytes read, the bad one included.
			line, col := lineCol(data, se.Offset-1)
			return fmt.Errorf("line %d, column %d: invalid JSON: %v", line, col, se)
		}
		return fmt.Errorf("invalid JSON: %v", err)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, syntax(err)
	}
	if tok != json.Delim('{') {
		return nil, errors.New(`want a JSON object {"conversations": [...]}`)
	}
	var convs []agenticConv
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, syntax(err)
		}
		if key != "conversations" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, syntax(err)
			}
			continue
		}
		at := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, syntax(err)
		}
		convs = nil
		if tok == nil {
			continue
		}
		if tok != json.Delim('[') {
			line, _ := lineCol(data, skipSpace(data, at))
			return nil, fmt.Errorf("line %d: field conversations: want a list of conversations", line)
		}
		for dec.More() {
			off := skipSpace(data, dec.InputOffset())
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, syntax(err)
			}
			convs = append(convs, agenticConv{off: off, raw: raw})
		}
		if _, err := dec.Token(); err != nil {
			return nil, syntax(err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntax(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		line, col := lineCol(data, dec.InputOffset())
		return nil, fmt.Errorf("line %d, column %d: invalid JSON: extra data after the object", line, col)
	}
	return convs, nil
}

// agenticTurns reads one conversation: each turn with messages becomes a
// JSON array of its messages, copied as role and content only (as the
// reference replays them), and promptLen is the first turn's prompt_tokens.
func agenticTurns(data []byte, c agenticConv) (turns [][]byte, promptLen int, err error) {
	at := func(off int64) int {
		line, _ := lineCol(data, c.off+off)
		return line
	}
	dec := json.NewDecoder(bytes.NewReader(c.raw))
	if tok, _ := dec.Token(); tok != json.Delim('[') {
		return nil, 0, fmt.Errorf("line %d: conversation: want a list of turns", at(0))
	}
	for k := 0; dec.More(); k++ {
		off := skipSpace(c.raw, dec.InputOffset())
		var turn map[string]json.RawMessage
		if err := dec.Decode(&turn); err != nil {
			return nil, 0, fmt.Errorf("line %d: turn %d: want an object with messages", at(off), k+1)
		}
		if k == 0 {
			if promptLen, err = agenticPromptTokens(turn["prompt_tokens"]); err != nil {
				return nil, 0, fmt.Errorf("line %d: turn 1: field prompt_tokens: %v", at(off), err)
			}
		}
		raw, ok := turn["messages"]
		if !ok || isFalsy(raw) {
			continue
		}
		var msgs []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &msgs); err != nil {
			return nil, 0, fmt.Errorf("line %d: turn %d: field messages: want a list of message objects", at(off), k+1)
		}
		if len(msgs) == 0 {
			continue
		}
		b := []byte{'['}
		for j, m := range msgs {
			role, ok1 := m["role"]
			content, ok2 := m["content"]
			if !ok1 || !ok2 {
				field := "role"
				if ok1 {
					field = "content"
				}
				return nil, 0, fmt.Errorf("line %d: turn %d: messages[%d]: field %s: missing", at(off), k+1, j, field)
			}
			if j > 0 {
				b = append(b, ", "...)
			}
			b = append(b, `{"role": `...)
			if b, err = pyjson.Reformat(b, role); err != nil {
				return nil, 0, fmt.Errorf("line %d: turn %d: messages[%d]: field role: %v", at(off), k+1, j, err)
			}
			b = append(b, `, "content": `...)
			if b, err = pyjson.Reformat(b, content); err != nil {
				return nil, 0, fmt.Errorf("line %d: turn %d: messages[%d]: field content: %v", at(off), k+1, j, err)
			}
			b = append(b, '}')
		}
		turns = append(turns, append(b, ']'))
	}
	return turns, promptLen, nil
}

// agenticPromptTokens is int(turn.get("prompt_tokens", 0)).
func agenticPromptTokens(raw json.RawMessage) (int, error) {
	if len(raw) == 0 {
		return 0, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		return int(f), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if n, err := strconv.Atoi(s); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("want a number, got %s", clip(raw))
}

// isFalsy reports whether a JSON value is false in Python's sense.
func isFalsy(raw json.RawMessage) bool {
	switch string(bytes.TrimSpace(raw)) {
	case "null", "false", "0", "[]", "{}", `""`, "0.0":
		return true
	}
	return false
}

// skipSpace moves off past whitespace and commas.
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\n', '\r', ',':
			off++
		default:
			return off
		}
	}
	return off
}

// lineCol is the 1-based line and column of a byte offset.
func lineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

func preflightAgentic(p Params) error {
	if err := agenticBackend(p.Backend); err != nil {
		return err
	}
	if p.Path == "" {
		return fmt.Errorf("--dataset-path: agentic-trace needs the trace's JSON file")
	}
	return nil
}

var agenticFlags = []Flag{
	{Opt: argparse.Option{Name: "--dataset-offset", Type: argparse.Int, Default: 0,
		Help: "agentic-trace: rotate the conversation list by this many entries before sampling."},
		Bind: argparse.Val(func(p *Params) *int { return &p.DatasetOffset }), Ignored: agenticOnly},
	{Opt: argparse.Option{Name: "--agentic-max-turns", Type: argparse.Int,
		Help: "agentic-trace: keep at most this many turns per conversation. Default: all."},
		Bind: argparse.Ptr(func(p *Params) **int { return &p.AgenticMaxTurns }), Ignored: agenticOnly},
}

func agenticOnly(Spec) string { return "agentic-trace reads it" }
