package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// mooncakeBlockSize is the tokens per hash id of a Mooncake session
// trace: the Mooncake paper's and AIPerf's agentic-code generator's.
const mooncakeBlockSize = 512

// loadMooncakeSessions reads a Mooncake session trace with AIPerf's
// fields (its mooncake_trace type): one JSON object per line, lines with
// the same session_id one session in file order (a line without one is a
// session of its own). A line's new input is input_length tokens (text
// per hash_ids block, so equal ids give equal text), text_input, or
// messages (the whole request, AIPerf's recorded history: a session of
// them sends each as it is and never the replies). timestamp (ms) on a
// session's first line is its arrival, delay (ms) the wait before a later
// line, output_length its tokens to ask for (else 256).
func loadMooncakeSessions(ctx context.Context, p Params, env Env) ([]Row, error) {
	if err := preflightSessions(p); err != nil {
		return nil, err
	}
	label := "--dataset-path " + p.Path
	f, err := openTrace(p.Path, label, "a JSONL trace")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	text := newBlockText(env.Tok, p.Seed, mooncakeBlockSize)
	var sessions []session
	index := map[string]int{}
	ignored := map[string]int{}
	err = traceLines(ctx, f, label, func(n int, line string) error {
		if strings.TrimSpace(line) == "" {
			return nil
		}
		t, key, ts, err := mooncakeTurn(text, n, line, ignored)
		if err != nil {
			return fmt.Errorf("%s: line %d: %v", label, n, err)
		}
		snap := t.inputLen < 0
		t.inputLen = max(t.inputLen, 0)
		i, ok := index[key]
		if key == "" || !ok {
			if p.NumPrompts > 0 && len(sessions) >= p.NumPrompts {
				return nil // past the sessions asked for
			}
			i = len(sessions)
			if key != "" {
				index[key] = i
			}
			s := session{key: key, line: n, snapshots: snap}
			if ts != nil {
				s.at, s.timed = *ts, true
			}
			sessions = append(sessions, s)
		} else if sessions[i].snapshots != snap {
			return fmt.Errorf("%s: line %d: session %s: its lines mix messages (a whole request) with input_length or text_input (a turn's new input); give one or the other (its first line is %d)",
				label, n, strconv.Quote(key), sessions[i].line)
		}
		sessions[i].turns = append(sessions[i].turns, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(sessions) == 0 {
		return nil, fmt.Errorf("%s: no sessions found", label)
	}
	for _, s := range sessions[1:] {
		if s.timed != sessions[0].timed {
			timed, untimed := sessions[0], s
			if s.timed {
				timed, untimed = s, sessions[0]
			}
			return nil, fmt.Errorf("%s: line %d: field timestamp: missing, but the session at line %d has one; give every session's first line a timestamp, or none",
				label, untimed.line, timed.line)
		}
	}
	if len(ignored) > 0 {
		var names []string
		for _, k := range []string{"tools", "headers", "extra"} {
			if ignored[k] > 0 {
				names = append(names, fmt.Sprintf("%s (%d lines)", k, ignored[k]))
			}
		}
		fmt.Fprintf(env.Out, "Not sent: %s\n", strings.Join(names, ", "))
	}
	return sessionRows(env, sessions, label), nil
}

// mooncakeTurn reads one line: its turn (inputLen -1 for messages), its
// session key ("" for none) and its timestamp.
func mooncakeTurn(text *blockText, line int, data string, ignored map[string]int) (t sessionTurn, key string, ts *float64, err error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		return t, "", nil, fmt.Errorf("invalid JSON object: %v", err)
	}
	if raw, ok := m["session_id"]; ok && string(raw) != "null" {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			var n json.Number
			if json.Unmarshal(raw, &n) != nil {
				return t, "", nil, fmt.Errorf("field session_id: want a string, got %s", clip(raw))
			}
			s = n.String()
		}
		if s == "" {
			return t, "", nil, errors.New("field session_id: must not be empty")
		}
		key = s
	}
	if v, ok, err := msField(m, "timestamp"); err != nil {
		return t, "", nil, err
	} else if ok {
		ts = &v
	}
	if t.info.DelayMs, t.info.HasDelay, err = msField(m, "delay"); err != nil {
		return t, "", nil, err
	}
	t.info.OutputLen = mooncakeDefaultOutput
	if v, ok, err := wholeField(m, "output_length", 1); err != nil {
		return t, "", nil, err
	} else if ok {
		t.info.OutputLen = v
	}
	var given []string
	for _, k := range []string{"input_length", "text_input", "messages"} {
		if raw, ok := m[k]; ok && string(raw) != "null" {
			given = append(given, k)
		}
	}
	if len(given) != 1 {
		return t, "", nil, fmt.Errorf("give exactly one of input_length, text_input and messages (got %s)", orNone(given))
	}
	if raw, ok := m["hash_ids"]; ok && string(raw) != "null" && given[0] != "input_length" {
		return t, "", nil, errors.New("field hash_ids: only goes with input_length")
	}
	for _, k := range []string{"tools", "headers", "extra"} {
		if _, ok := m[k]; ok {
			ignored[k]++
		}
	}
	switch given[0] {
	case "input_length":
		n, _, err := wholeField(m, "input_length", 1)
		if err != nil {
			return t, "", nil, err
		}
		var ids []uint64
		if raw, ok := m["hash_ids"]; ok && string(raw) != "null" {
			if json.Unmarshal(raw, &ids) != nil {
				return t, "", nil, fmt.Errorf("field hash_ids: want a list of integers >= 0, got %s", clip(raw))
			}
		}
		t.inputLen = n
		t.msgs = userMessage(text.blocks(nsHash, ids, n, keyOf("line", strconv.Itoa(line))))
	case "text_input":
		var s string
		if json.Unmarshal(m["text_input"], &s) != nil {
			return t, "", nil, fmt.Errorf("field text_input: want a string, got %s", clip(m["text_input"]))
		}
		t.inputLen = text.tok.Count(s)
		t.msgs = userMessage(s)
	case "messages":
		raw := m["messages"]
		var msgs []map[string]json.RawMessage
		if json.Unmarshal(raw, &msgs) != nil || len(msgs) == 0 {
			return t, "", nil, fmt.Errorf("field messages: want a non-empty list of message objects, got %s", clip(raw))
		}
		for j, msg := range msgs {
			var role string
			if json.Unmarshal(msg["role"], &role) != nil || role == "" {
				return t, "", nil, fmt.Errorf("field messages: message %d: field role: want a string", j)
			}
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return t, "", nil, fmt.Errorf("field messages: %v", err)
		}
		t.msgs, t.inputLen = b.Bytes(), -1
	}
	return t, key, ts, nil
}

// msField reads an optional number of milliseconds: finite, >= 0.
func msField(m map[string]json.RawMessage, name string) (float64, bool, error) {
	raw, ok := m[name]
	if !ok || string(raw) == "null" {
		return 0, false, nil
	}
	var v float64
	if json.Unmarshal(raw, &v) != nil || math.IsInf(v, 0) || v < 0 {
		return 0, false, fmt.Errorf("field %s: want a number of milliseconds >= 0, got %s", name, clip(raw))
	}
	return v, true, nil
}

// wholeField reads an optional whole number >= lo.
func wholeField(m map[string]json.RawMessage, name string, lo int) (int, bool, error) {
	raw, ok := m[name]
	if !ok || string(raw) == "null" {
		return 0, false, nil
	}
	var v float64
	if json.Unmarshal(raw, &v) != nil || v != math.Trunc(v) || v < float64(lo) || v > 1<<31 {
		return 0, false, fmt.Errorf("field %s: want a whole number of tokens >= %d, got %s", name, lo, clip(raw))
	}
	return int(v), true, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
