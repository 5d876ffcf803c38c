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
	read, ignored, err := readMooncakeSessions(ctx, p, label)
	if err != nil {
		return nil, err
	}
	text := newBlockText(env.Tok, p.Seed, mooncakeBlockSize)
	sessions := make([]session, len(read))
	for i, rs := range read {
		s := rs.session
		for _, l := range rs.lines {
			t := sessionTurn{inputLen: l.inputLen, info: l.info}
			switch {
			case l.msgs != nil:
				t.msgs = l.msgs
			case l.hasText:
				t.msgs, t.inputLen = userMessage(l.text), env.Tok.Count(l.text)
			default:
				t.msgs = userMessage(text.blocks(nsHash, l.hashIDs, l.inputLen, keyOf("line", strconv.Itoa(l.line))))
			}
			s.turns = append(s.turns, t)
		}
		sessions[i] = s
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

// mooncakeLine is one line of the trace, checked.
type mooncakeLine struct {
	line     int
	key      string // session_id ("": none)
	ts       *float64
	info     TurnInfo
	inputLen int
	hashIDs  []uint64
	text     string
	hasText  bool
	msgs     []byte // messages, compacted
}

// mooncakeRead is a session as read: its lines, not yet made into text.
type mooncakeRead struct {
	session
	lines []mooncakeLine
}

// readMooncakeSessions reads and checks every line (no tokenizer needed,
// so the file is checked before the run waits for a server), grouping them
// into the first --num-prompts sessions; ignored counts the fields that
// are not sent.
func readMooncakeSessions(ctx context.Context, p Params, label string) (sessions []mooncakeRead, ignored map[string]int, err error) {
	f, err := openTrace(p.Path, label, "a JSONL trace")
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	index := map[string]int{}
	ignored = map[string]int{}
	err = traceLines(ctx, f, label, func(n int, line string) error {
		if strings.TrimSpace(line) == "" {
			return nil
		}
		l, err := mooncakeParse(line, ignored)
		if err != nil {
			return fmt.Errorf("%s: line %d: %v", label, n, err)
		}
		l.line = n
		snap := l.msgs != nil
		i, ok := index[l.key]
		if l.key == "" || !ok {
			if p.NumPrompts > 0 && len(sessions) >= p.NumPrompts {
				return nil // past the sessions asked for
			}
			i = len(sessions)
			if l.key != "" {
				index[l.key] = i
			}
			s := mooncakeRead{session: session{key: l.key, line: n, snapshots: snap}}
			if l.ts != nil {
				s.at, s.timed = *l.ts, true
			}
			sessions = append(sessions, s)
		} else if sessions[i].snapshots != snap {
			return fmt.Errorf("%s: line %d: session %s: its lines mix messages (a whole request) with input_length or text_input (a turn's new input); give one or the other (its first line is %d)",
				label, n, strconv.Quote(l.key), sessions[i].line)
		}
		sessions[i].lines = append(sessions[i].lines, l)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(sessions) == 0 {
		return nil, nil, fmt.Errorf("%s: no sessions found", label)
	}
	for _, s := range sessions[1:] {
		if s.timed != sessions[0].timed {
			timed, untimed := s, sessions[0]
			if !s.timed {
				timed, untimed = sessions[0], s
			}
			return nil, nil, fmt.Errorf("%s: line %d: field timestamp: missing, but the session at line %d has one; give every session's first line a timestamp, or none",
				label, untimed.line, timed.line)
		}
	}
	return sessions, ignored, nil
}

// checkMooncakeSessions checks the file before the run waits for a server.
func checkMooncakeSessions(ctx context.Context, p Params) error {
	_, _, err := readMooncakeSessions(ctx, p, "--dataset-path "+p.Path)
	return err
}

// mooncakeParse reads one line's fields.
func mooncakeParse(data string, ignored map[string]int) (l mooncakeLine, err error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		return l, fmt.Errorf("invalid JSON object: %v", err)
	}
	if raw, ok := m["session_id"]; ok && string(raw) != "null" {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			var n json.Number
			if json.Unmarshal(raw, &n) != nil {
				return l, fmt.Errorf("field session_id: want a string, got %s", clip(raw))
			}
			s = n.String()
		}
		if s == "" {
			return l, errors.New("field session_id: must not be empty")
		}
		l.key = s
	}
	if v, ok, err := msField(m, "timestamp"); err != nil {
		return l, err
	} else if ok {
		l.ts = &v
	}
	if l.info.DelayMs, l.info.HasDelay, err = msField(m, "delay"); err != nil {
		return l, err
	}
	l.info.OutputLen = mooncakeDefaultOutput
	if v, ok, err := wholeField(m, "output_length", 1); err != nil {
		return l, err
	} else if ok {
		l.info.OutputLen = v
	}
	var given []string
	for _, k := range []string{"input_length", "text_input", "messages"} {
		if raw, ok := m[k]; ok && string(raw) != "null" {
			given = append(given, k)
		}
	}
	if len(given) != 1 {
		return l, fmt.Errorf("give exactly one of input_length, text_input and messages (got %s)", orNone(given))
	}
	if raw, ok := m["hash_ids"]; ok && string(raw) != "null" && given[0] != "input_length" {
		return l, errors.New("field hash_ids: only goes with input_length")
	}
	for _, k := range []string{"tools", "headers", "extra"} {
		if _, ok := m[k]; ok {
			ignored[k]++
		}
	}
	switch given[0] {
	case "input_length":
		if l.inputLen, _, err = wholeField(m, "input_length", 1); err != nil {
			return l, err
		}
		if raw, ok := m["hash_ids"]; ok && string(raw) != "null" {
			if json.Unmarshal(raw, &l.hashIDs) != nil {
				return l, fmt.Errorf("field hash_ids: want a list of integers >= 0, got %s", clip(raw))
			}
		}
	case "text_input":
		if json.Unmarshal(m["text_input"], &l.text) != nil {
			return l, fmt.Errorf("field text_input: want a string, got %s", clip(m["text_input"]))
		}
		l.hasText = true
	case "messages":
		raw := m["messages"]
		var msgs []map[string]json.RawMessage
		if json.Unmarshal(raw, &msgs) != nil || len(msgs) == 0 {
			return l, fmt.Errorf("field messages: want a non-empty list of message objects, got %s", clip(raw))
		}
		for j, msg := range msgs {
			var role string
			if json.Unmarshal(msg["role"], &role) != nil || role == "" {
				return l, fmt.Errorf("field messages: message %d: field role: want a string", j)
			}
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return l, fmt.Errorf("field messages: %v", err)
		}
		l.msgs = b.Bytes()
	}
	return l, nil
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
