package dataset

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// tracelabBlockSize is the tokens per block of the prefix a TraceLab
// session's first round shares (AIPerf's tracelab default).
const tracelabBlockSize = 64

// traceRound is one round of a TraceLab trace, validated as SGLang's
// tracelab.parse_round does.
type traceRound struct {
	line                int
	session, roundID    string
	index               int
	total, prefix, adds int
	output              int
	arrival, toolWait   float64 // ms
}

// loadTraceLab reads a TraceLab trace (SGLang's tracelab replay, spec
// §3.1): JSONL rows or the canonical CSV (.csv, optionally .gz). Rounds
// group by session, ordered by round_index; sessions arrive at their first
// round's arrival_time_ms, and a round waits the tool_wait_after_ms of the
// round before it. The trace has no text: a first round's prompt is
// prefix_tokens of text every session shares (by 64-token blocks) then
// newly_append_tokens of its own; a later round adds its
// newly_append_tokens to the live history (at least one token each).
func loadTraceLab(ctx context.Context, p Params, env Env) ([]Row, error) {
	if err := preflightSessions(p); err != nil {
		return nil, err
	}
	label := "--dataset-path " + p.Path
	read, err := traceLabSessions(ctx, p.Path, label)
	if err != nil {
		return nil, err
	}
	text := newBlockText(env.Tok, p.Seed, tracelabBlockSize)
	var sessions []session
	for _, rs := range read {
		id := rs[0].session
		s := session{key: id, line: rs[0].line, at: rs[0].arrival, timed: true}
		for k, r := range rs {
			t := sessionTurn{inputLen: r.total, info: TurnInfo{OutputLen: max(r.output, 1)}}
			own := text.draw(nsFresh, keyOf("tracelab", id, strconv.Itoa(r.index)), max(r.adds, 1))
			if k == 0 {
				ids := make([]uint64, (r.prefix+tracelabBlockSize-1)/tracelabBlockSize)
				for j := range ids {
					ids[j] = uint64(j)
				}
				own = joinText(text.blocks(nsPrefix, ids, r.prefix, 0), own)
			} else {
				t.inputLen = r.adds
				t.info.DelayMs, t.info.HasDelay = rs[k-1].toolWait, true
			}
			t.msgs = userMessage(own)
			s.turns = append(s.turns, t)
		}
		sessions = append(sessions, s)
	}
	slices.SortStableFunc(sessions, func(a, b session) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	if p.NumPrompts > 0 && len(sessions) > p.NumPrompts {
		sessions = sessions[:p.NumPrompts]
	}
	return sessionRows(env, sessions, label), nil
}

// traceLabSessions reads and checks every round (no tokenizer needed, so
// the file is checked before the run waits for a server) and groups them
// into sessions in order of appearance, each sorted by round_index.
func traceLabSessions(ctx context.Context, path, label string) ([][]traceRound, error) {
	rounds, err := readTraceLab(ctx, path, label)
	if err != nil {
		return nil, err
	}
	if len(rounds) == 0 {
		return nil, fmt.Errorf("%s: no rounds found", label)
	}
	groups := map[string][]traceRound{}
	var order []string
	for _, r := range rounds {
		if _, ok := groups[r.session]; !ok {
			order = append(order, r.session)
		}
		groups[r.session] = append(groups[r.session], r)
	}
	out := make([][]traceRound, len(order))
	for i, id := range order {
		rs := groups[id]
		slices.SortStableFunc(rs, func(a, b traceRound) int { return a.index - b.index })
		for k := 1; k < len(rs); k++ {
			if rs[k].index == rs[k-1].index {
				a, b := min(rs[k-1].line, rs[k].line), max(rs[k-1].line, rs[k].line)
				return nil, fmt.Errorf("%s: line %d: field round_index: session %s has round %d already (line %d)", label, b, strconv.Quote(id), rs[k].index, a)
			}
		}
		out[i] = rs
	}
	return out, nil
}

// checkTraceLab checks the file before the run waits for a server.
func checkTraceLab(ctx context.Context, p Params) error {
	_, err := traceLabSessions(ctx, p.Path, "--dataset-path "+p.Path)
	return err
}

// readTraceLab reads every round of the file: CSV when its name ends in
// .csv (or .csv.gz), else JSONL.
func readTraceLab(ctx context.Context, path, label string) ([]traceRound, error) {
	csvFile := strings.HasSuffix(strings.TrimSuffix(path, ".gz"), ".csv")
	want := "a TraceLab JSONL file"
	if csvFile {
		want = "a TraceLab CSV file"
	}
	f, err := openTrace(path, label, want)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if csvFile {
		return readTraceLabCSV(ctx, f, label)
	}
	var rounds []traceRound
	err = traceLines(ctx, f, label, func(n int, line string) error {
		if strings.TrimSpace(line) == "" {
			return nil
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return fmt.Errorf("%s: line %d: want a JSON object: %v", label, n, err)
		}
		r, err := traceLabRound(jsonFields(m))
		if err != nil {
			return fmt.Errorf("%s: line %d: %v", label, n, err)
		}
		r.line = n
		rounds = append(rounds, r)
		return nil
	})
	return rounds, err
}

// traceFields is a row's fields as the validation reads them: an integer,
// a number (ms), a string; each says what it got for the message.
type traceFields interface {
	str(name string) (string, bool)
	integer(name string) (int, string, bool)
	number(name string) (float64, string, bool) // absent: 0, ok
}

// traceLabRound validates a row with parse_round's rules, in its order.
func traceLabRound(f traceFields) (traceRound, error) {
	var r traceRound
	var ok bool
	if r.session, ok = f.str("session_id"); !ok {
		return r, errors.New("field session_id: must be a non-empty string")
	}
	if r.roundID, ok = f.str("round_id"); !ok {
		return r, errors.New("field round_id: must be a non-empty string")
	}
	ints := []struct {
		name string
		v    *int
	}{{"input_tokens_total", &r.total}, {"prefix_tokens", &r.prefix}, {"newly_append_tokens", &r.adds}}
	for _, x := range ints {
		v, got, ok := f.integer(x.name)
		if !ok {
			return r, fmt.Errorf("field %s: must be a nonnegative integer, got %s", x.name, got)
		}
		*x.v = v
	}
	if r.total != r.prefix+r.adds {
		return r, fmt.Errorf("field input_tokens_total: must equal prefix_tokens + newly_append_tokens (%d + %d), got %d", r.prefix, r.adds, r.total)
	}
	for _, x := range []struct {
		name string
		v    *float64
	}{{"arrival_time_ms", &r.arrival}, {"tool_wait_after_ms", &r.toolWait}} {
		v, got, ok := f.number(x.name)
		if !ok {
			return r, fmt.Errorf("field %s: must be finite and nonnegative, got %s", x.name, got)
		}
		*x.v = v
	}
	for _, x := range []struct {
		name string
		v    *int
	}{{"round_index", &r.index}, {"output_tokens", &r.output}} {
		v, got, ok := f.integer(x.name)
		if !ok {
			return r, fmt.Errorf("field %s: must be a nonnegative integer, got %s", x.name, got)
		}
		*x.v = v
	}
	return r, nil
}

// jsonFields reads a JSONL row: integers are JSON integers (not 1.0, not
// true), as Python's isinstance(value, int).
type jsonFields map[string]json.RawMessage

func (m jsonFields) got(name string) string {
	raw, ok := m[name]
	if !ok {
		return "nothing (missing)"
	}
	return clip(raw)
}

func (m jsonFields) str(name string) (string, bool) {
	var s string
	err := json.Unmarshal(m[name], &s)
	return s, err == nil && s != ""
}

func (m jsonFields) integer(name string) (int, string, bool) {
	raw := strings.TrimSpace(string(m[name]))
	if raw == "" || strings.ContainsAny(raw, ".eE\"tfn[{") {
		return 0, m.got(name), false
	}
	v, err := strconv.Atoi(raw)
	return v, m.got(name), err == nil && v >= 0
}

func (m jsonFields) number(name string) (float64, string, bool) {
	raw, ok := m[name]
	if !ok {
		return 0, "", true
	}
	var v float64
	if s := strings.TrimSpace(string(raw)); s == "" || strings.ContainsAny(s[:1], "\"tfn[{") {
		return 0, m.got(name), false
	}
	err := json.Unmarshal(raw, &v)
	return v, m.got(name), err == nil && !math.IsInf(v, 0) && v >= 0
}

// readTraceLabCSV reads the canonical CSV: a header naming the columns
// id (or session_id), input_len, output_len, round_idx, prefix_len, and
// optionally arrival_time and tool_wait_after_ms. Lines are the file's.
func readTraceLabCSV(ctx context.Context, r io.Reader, label string) ([]traceRound, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: no header line", label)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %v", label, err)
	}
	col := map[string]int{}
	for i, h := range head {
		if _, dup := col[strings.TrimSpace(h)]; !dup {
			col[strings.TrimSpace(h)] = i
		}
	}
	_, hasID := col["id"]
	_, hasSession := col["session_id"]
	if !hasID && !hasSession {
		return nil, fmt.Errorf("%s: line 1: no column id or session_id in the header", label)
	}
	for _, c := range []string{"input_len", "output_len", "round_idx", "prefix_len"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s: line 1: no column %s in the header", label, c)
		}
	}
	var rounds []traceRound
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rounds, nil
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", label, err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		row, err := csvRound(rec, col)
		if err == nil {
			var r traceRound
			if r, err = traceLabRound(row); err == nil {
				r.line = line
				rounds = append(rounds, r)
				continue
			}
		}
		return nil, fmt.Errorf("%s: line %d: %v", label, line, err)
	}
}

// csvRound maps a CSV record to the JSONL fields, as parse_csv_record:
// input_tokens_total = prefix_len + input_len, round_id "<session>:<round_idx>".
func csvRound(rec []string, col map[string]int) (csvFields, error) {
	get := func(c string) string {
		if i, ok := col[c]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	session := get("session_id")
	if session == "" {
		session = get("id")
	}
	f := csvFields{"session_id": session, "round_id": session + ":" + get("round_idx"),
		"round_index": get("round_idx"), "output_tokens": get("output_len"),
		"prefix_tokens": get("prefix_len"), "newly_append_tokens": get("input_len"),
		"arrival_time_ms": get("arrival_time"), "tool_wait_after_ms": get("tool_wait_after_ms")}
	src := map[string]string{"round_index": "round_idx", "output_tokens": "output_len", "prefix_tokens": "prefix_len", "newly_append_tokens": "input_len"}
	for k, c := range src {
		if _, err := pyInt(f[k]); err != nil {
			return nil, fmt.Errorf("column %s: want an integer, got %q", c, f[k])
		}
	}
	p, _ := pyInt(f["prefix_tokens"])
	a, _ := pyInt(f["newly_append_tokens"])
	f["input_tokens_total"] = strconv.Itoa(p + a)
	return f, nil
}

// pyInt is Python's int() of a string: spaces around, an optional sign.
func pyInt(s string) (int, error) {
	return strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(s), "+"))
}

// csvFields are a CSV record's values under the JSONL names.
type csvFields map[string]string

func (f csvFields) str(name string) (string, bool) { return f[name], f[name] != "" }

func (f csvFields) integer(name string) (int, string, bool) {
	v, err := pyInt(f[name])
	return v, f[name], err == nil && v >= 0
}

func (f csvFields) number(name string) (float64, string, bool) {
	s := strings.TrimSpace(f[name])
	if s == "" {
		return 0, "", true // float(record.get(...) or 0)
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, f[name], err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0
}
