package dataset

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeTrace writes lines (joined by newlines) to a file of that name in a
// fresh directory; a name ending in .gz is gzipped.
func writeTrace(t *testing.T, name string, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	data := []byte(strings.Join(lines, "\n") + "\n")
	if strings.HasSuffix(name, ".gz") {
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		z.Write(data)
		z.Close()
		data = b.Bytes()
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func loadSessions(t *testing.T, name, path string) ([]Row, string, error) {
	t.Helper()
	var out bytes.Buffer
	rows, err := Load(context.Background(), Params{Name: name, Path: path, Seed: 1}, testEnv(1, &out))
	return rows, out.String(), err
}

// turnText is the content of a turn's only message.
func turnText(t *testing.T, turn []byte) string {
	t.Helper()
	var msgs []struct{ Role, Content string }
	if err := json.Unmarshal(turn, &msgs); err != nil || len(msgs) != 1 || msgs[0].Role != "user" {
		t.Fatalf("turn %s: %v", turn, err)
	}
	return msgs[0].Content
}

// A Mooncake session trace (AIPerf's fields): lines group into sessions
// by session_id in file order, a line without one is its own session;
// timestamp is the session's arrival, delay and output_length each turn's;
// input_length is that many tokens, equal hash ids giving equal text.
func TestMooncakeSessions(t *testing.T) {
	path := writeTrace(t, "s.jsonl",
		`{"session_id": "a", "timestamp": 1000, "input_length": 700, "hash_ids": [1, 2], "output_length": 8}`,
		`{"session_id": "b", "timestamp": 1500, "input_length": 600, "hash_ids": [1, 3], "output_length": 4}`,
		`{"session_id": "a", "delay": 250, "input_length": 30, "hash_ids": [9], "output_length": 6}`,
		``,
		`{"timestamp": 1200, "text_input": "hello there world"}`,
		`{"session_id": "a", "input_length": 5, "output_length": 2}`,
		`{"session_id": "b", "delay": 40.5, "input_length": 512, "hash_ids": [2]}`,
		`{"session_id": "m", "timestamp": 3000, "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q1"}], "output_length": 3}`,
		`{"session_id": "m", "delay": 10, "messages": [{"role": "user", "content": "q2"}], "tools": []}`,
	)
	rows, out, err := loadSessions(t, "mooncake-sessions", path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	a, b, lone, m := rows[0], rows[1], rows[2], rows[3]
	for _, c := range []struct {
		name  string
		row   Row
		at    float64
		turns int
		info  []TurnInfo
	}{
		{"a", a, 1000, 3, []TurnInfo{{OutputLen: 8}, {DelayMs: 250, HasDelay: true, OutputLen: 6}, {OutputLen: 2}}},
		{"b", b, 1500, 2, []TurnInfo{{OutputLen: 4}, {DelayMs: 40.5, HasDelay: true, OutputLen: 256}}},
		{"lone", lone, 1200, 1, []TurnInfo{{OutputLen: 256}}},
		{"m", m, 3000, 2, []TurnInfo{{OutputLen: 3}, {DelayMs: 10, HasDelay: true, OutputLen: 256}}},
	} {
		if !c.row.HasTimestamp || c.row.Timestamp != c.at || len(c.row.Turns) != c.turns || !reflect.DeepEqual(c.row.TurnInfo, c.info) {
			t.Errorf("session %s: at %v (%v), %d turns, info %+v; want %v, %d, %+v", c.name, c.row.Timestamp, c.row.HasTimestamp, len(c.row.Turns), c.row.TurnInfo, c.at, c.turns, c.info)
		}
	}
	// Token counts: the word tokenizer counts the text as made.
	for _, c := range []struct {
		turn []byte
		n    int
	}{{a.Turns[0], 700}, {a.Turns[1], 30}, {a.Turns[2], 5}, {b.Turns[0], 600}, {b.Turns[1], 512}} {
		if got := (wordTok{}).Count(turnText(t, c.turn)); got != c.n {
			t.Errorf("a turn of %d tokens has %d", c.n, got)
		}
	}
	if a.PromptLen != 700 || a.OutputLen != 8 {
		t.Errorf("session a: prompt %d, output %d", a.PromptLen, a.OutputLen)
	}
	// Hash id 1 opens both a and b: the same first 512 tokens; then 2 and
	// 3 differ. Block 2 is a's second and b's second turn.
	words := func(turn []byte) []string { return strings.Fields(turnText(t, turn)) }
	aw, bw := words(a.Turns[0]), words(b.Turns[0])
	if !reflect.DeepEqual(aw[:512], bw[:512]) || reflect.DeepEqual(aw[512:600], bw[512:600]) {
		t.Errorf("hash id 1 gave different text, or 2 and 3 the same")
	}
	if !reflect.DeepEqual(aw[512:700], words(b.Turns[1])[:188]) {
		t.Errorf("hash id 2 gave different text in two sessions")
	}
	if turnText(t, lone.Turns[0]) != "hello there world" || lone.Snapshots || a.Snapshots {
		t.Errorf("text_input: %s", lone.Turns[0])
	}
	// messages are whole requests, sent as they are.
	if !m.Snapshots || string(m.Turns[0]) != `[{"role":"system","content":"s"},{"role":"user","content":"q1"}]` {
		t.Errorf("messages: snapshots %v, %s", m.Snapshots, m.Turns[0])
	}
	for _, s := range []string{"#Sessions: 4 (turns/session min=1 max=3 avg=2.0, arrivals over 2.000 s", "#Recorded delays: 3, mean 100.2 ms", "Not sent: tools (1 lines)"} {
		if !strings.Contains(out, s) {
			t.Errorf("no %q in:\n%s", s, out)
		}
	}
	// The same file, the same text: reruns send the same prompts.
	again, _, _ := loadSessions(t, "mooncake-sessions", path)
	if !reflect.DeepEqual(again, rows) {
		t.Errorf("a second load differs")
	}
	// --num-prompts takes the first sessions; without timestamps the
	// sessions are not timed (the schedule sends them).
	var o bytes.Buffer
	two, err := Load(context.Background(), Params{Name: "mooncake-sessions", Path: path, NumPrompts: 2}, testEnv(1, &o))
	if err != nil || len(two) != 2 || len(two[0].Turns) != 3 || len(two[1].Turns) != 2 {
		t.Errorf("--num-prompts 2: %d rows, %v", len(two), err)
	}
	untimed := writeTrace(t, "u.jsonl", `{"session_id": "x", "input_length": 3}`, `{"session_id": "x", "delay": 5, "input_length": 3}`)
	rows, _, err = loadSessions(t, "mooncake-sessions", untimed)
	if err != nil || len(rows) != 1 || rows[0].HasTimestamp || !rows[0].TurnInfo[1].HasDelay {
		t.Errorf("untimed: %+v, %v", rows, err)
	}
}

// Each bad line is one error naming the file, the line and the field.
func TestMooncakeSessionsErrors(t *testing.T) {
	ok := `{"session_id": "a", "timestamp": 0, "input_length": 4}`
	for _, c := range []struct {
		lines []string
		want  string
	}{
		{[]string{ok, `{"session_id": "a", "input_length": 4, "delay": -1}`}, "line 2: field delay: want a number of milliseconds >= 0, got -1"},
		{[]string{ok, `{"session_id": "b", "timestamp": "x", "input_length": 4}`}, "line 2: field timestamp: want a number of milliseconds >= 0"},
		{[]string{ok, `{"session_id": "a", "input_length": 2.5}`}, "line 2: field input_length: want a whole number of tokens >= 1, got 2.5"},
		{[]string{ok, `{"session_id": "a", "input_length": 0}`}, "line 2: field input_length: want a whole number of tokens >= 1, got 0"},
		{[]string{ok, `{"session_id": "a", "input_length": 4, "output_length": 0}`}, "line 2: field output_length: want a whole number of tokens >= 1"},
		{[]string{ok, `{"session_id": "a", "input_length": 4, "hash_ids": [1, "x"]}`}, `line 2: field hash_ids: want a list of integers >= 0, got [1, "x"]`},
		{[]string{ok, `{"session_id": "a", "text_input": "x", "hash_ids": [1]}`}, "line 2: field hash_ids: only goes with input_length"},
		{[]string{ok, `{"session_id": "a", "input_length": 4, "text_input": "x"}`}, "line 2: give exactly one of input_length, text_input and messages (got input_length, text_input)"},
		{[]string{ok, `{"session_id": "a"}`}, "line 2: give exactly one of input_length, text_input and messages (got none)"},
		{[]string{ok, `{"session_id": "a", "messages": [{"content": "x"}]}`}, "line 2: field messages: message 0: field role: want a string"},
		{[]string{ok, `{"session_id": "a", "messages": []}`}, "line 2: field messages: want a non-empty list of message objects"},
		{[]string{ok, `{"session_id": "a", "messages": [{"role": "user", "content": "x"}]}`}, `line 2: session "a": its lines mix messages`},
		{[]string{ok, `{"session_id": ["a"], "input_length": 4}`}, "line 2: field session_id: want a string"},
		{[]string{ok, `{"session_id": "a", "input_length": 4`}, "line 2: invalid JSON object"},
		{[]string{ok, `{"session_id": "b", "input_length": 4}`}, "line 2: field timestamp: missing, but the session at line 1 has one"},
		{[]string{`{"session_id": "b", "input_length": 4}`, ok}, "line 1: field timestamp: missing, but the session at line 2 has one"},
		{[]string{""}, "no sessions found"},
	} {
		path := writeTrace(t, "bad.jsonl", c.lines...)
		_, _, err := loadSessions(t, "mooncake-sessions", path)
		want := "--dataset-path " + path + ": " + c.want
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %s", c.lines, err, want)
		}
	}
	for _, p := range []Params{{Name: "mooncake-sessions"}, {Name: "tracelab"}} {
		if err := Preflight(p); err == nil || err.Error() != "--dataset-path: "+p.Name+" needs the trace file" {
			t.Errorf("%s without a path: %v", p.Name, err)
		}
	}
	p := Params{Name: "tracelab", Path: "x", Backend: Backend{Name: "sglang", ChatNames: []string{"vllm-chat"}}}
	if err := Preflight(p); err == nil || err.Error() != "--backend sglang: tracelab sessions need a chat backend (vllm-chat)" {
		t.Errorf("a completions backend: %v", err)
	}
}

// The same TraceLab trace as JSONL (gzipped too) and as the canonical
// CSV gives the same sessions: ordered by arrival, rounds by round_index,
// each later round waiting the tool wait of the round before; a first
// round's prefix is text every session shares.
func TestTraceLab(t *testing.T) {
	jsonl := []string{
		`{"session_id": "s2", "round_id": "r", "round_index": 1, "input_tokens_total": 150, "prefix_tokens": 140, "newly_append_tokens": 10, "output_tokens": 7, "arrival_time_ms": 500, "tool_wait_after_ms": 0, "provider": "x"}`,
		`{"session_id": "s2", "round_id": "r", "round_index": 0, "input_tokens_total": 100, "prefix_tokens": 96, "newly_append_tokens": 4, "output_tokens": 20, "arrival_time_ms": 500, "tool_wait_after_ms": 1200.5}`,
		`{"session_id": "s1", "round_id": "q", "round_index": 0, "input_tokens_total": 80, "prefix_tokens": 64, "newly_append_tokens": 16, "output_tokens": 0, "arrival_time_ms": 100, "tool_wait_after_ms": 30}`,
		`{"session_id": "s1", "round_id": "q", "round_index": 3, "input_tokens_total": 5, "prefix_tokens": 0, "newly_append_tokens": 5, "output_tokens": 9, "arrival_time_ms": 100}`,
	}
	csv := []string{
		"id,input_len,output_len,arrival_time,round_idx,tool_wait_after_ms,prefix_len",
		"s2,10,7,500,1,0,140",
		"s2,4,20,500,0,1200.5,96",
		"s1,16,0,100,0,30,64",
		"s1,5,9,100,3,,0",
	}
	var got [][]Row
	for _, p := range []string{writeTrace(t, "t.jsonl", jsonl...), writeTrace(t, "t.jsonl.gz", jsonl...), writeTrace(t, "t.csv", csv...), writeTrace(t, "t.csv.gz", csv...)} {
		rows, out, err := loadSessions(t, "tracelab", p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "#Sessions: 2 (turns/session min=2 max=2 avg=2.0, arrivals over 0.400 s") {
			t.Errorf("%s:\n%s", p, out)
		}
		got = append(got, rows)
	}
	for i := 1; i < len(got); i++ {
		if !reflect.DeepEqual(got[i], got[0]) {
			t.Errorf("file %d gave other rows than the JSONL", i)
		}
	}
	rows := got[0]
	s1, s2 := rows[0], rows[1]
	if s1.Timestamp != 100 || s2.Timestamp != 500 || !s1.HasTimestamp {
		t.Fatalf("arrivals %v, %v", s1.Timestamp, s2.Timestamp)
	}
	for _, c := range []struct {
		row  Row
		info []TurnInfo
	}{
		{s1, []TurnInfo{{OutputLen: 1}, {DelayMs: 30, HasDelay: true, OutputLen: 9}}},
		{s2, []TurnInfo{{OutputLen: 20}, {DelayMs: 1200.5, HasDelay: true, OutputLen: 7}}},
	} {
		if !reflect.DeepEqual(c.row.TurnInfo, c.info) {
			t.Errorf("info %+v, want %+v", c.row.TurnInfo, c.info)
		}
	}
	count := func(turn []byte) int { return (wordTok{}).Count(turnText(t, turn)) }
	if n := []int{count(s1.Turns[0]), count(s1.Turns[1]), count(s2.Turns[0]), count(s2.Turns[1])}; !reflect.DeepEqual(n, []int{80, 5, 100, 10}) {
		t.Errorf("turn tokens %v, want the first round's total and later rounds' new tokens", n)
	}
	if s1.PromptLen != 80 || s2.PromptLen != 100 {
		t.Errorf("prompt lengths %d, %d", s1.PromptLen, s2.PromptLen)
	}
	// The first 64 tokens (one block) of the first rounds are the same text.
	w1, w2 := strings.Fields(turnText(t, s1.Turns[0])), strings.Fields(turnText(t, s2.Turns[0]))
	if !reflect.DeepEqual(w1[:64], w2[:64]) || reflect.DeepEqual(w1[64:80], w2[64:80]) {
		t.Errorf("the shared prefix is not shared, or the sessions' own text is")
	}
}

// parse_round's rules, each an error naming the file, line and field, as
// JSONL and as CSV.
func TestTraceLabErrors(t *testing.T) {
	row := func(fields string) string {
		base := map[string]string{"session_id": `"s"`, "round_id": `"r"`, "round_index": "0", "input_tokens_total": "3",
			"prefix_tokens": "1", "newly_append_tokens": "2", "output_tokens": "4"}
		for _, kv := range strings.Split(fields, ";") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				if v == "-" {
					delete(base, k)
				} else {
					base[k] = v
				}
			}
		}
		var parts []string
		for _, k := range []string{"session_id", "round_id", "round_index", "input_tokens_total", "prefix_tokens", "newly_append_tokens", "output_tokens", "arrival_time_ms", "tool_wait_after_ms"} {
			if v, ok := base[k]; ok {
				parts = append(parts, `"`+k+`": `+v)
			}
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	good := row("")
	for _, c := range []struct{ line, want string }{
		{row("session_id=\"\""), "field session_id: must be a non-empty string"},
		{row("session_id=5"), "field session_id: must be a non-empty string"},
		{row("round_id=-"), "field round_id: must be a non-empty string"},
		{row("input_tokens_total=3.0"), "field input_tokens_total: must be a nonnegative integer, got 3.0"},
		{row("input_tokens_total=true"), "field input_tokens_total: must be a nonnegative integer, got true"},
		{row("prefix_tokens=-1;input_tokens_total=1"), "field prefix_tokens: must be a nonnegative integer, got -1"},
		{row("newly_append_tokens=-"), "field newly_append_tokens: must be a nonnegative integer, got nothing (missing)"},
		{row("input_tokens_total=4"), "field input_tokens_total: must equal prefix_tokens + newly_append_tokens (1 + 2), got 4"},
		{row("arrival_time_ms=-0.5"), "field arrival_time_ms: must be finite and nonnegative, got -0.5"},
		{row(`tool_wait_after_ms="5"`), `field tool_wait_after_ms: must be finite and nonnegative, got "5"`},
		{row("round_index=-1"), "field round_index: must be a nonnegative integer, got -1"},
		{row("output_tokens=1e3"), "field output_tokens: must be a nonnegative integer, got 1e3"},
		{`[1]`, "want a JSON object"},
		{good, `field round_index: session "s" has round 0 already (line 1)`},
	} {
		path := writeTrace(t, "t.jsonl", good, "", c.line)
		_, _, err := loadSessions(t, "tracelab", path)
		want := "--dataset-path " + path + ": line 3: " + c.want
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %s", c.line, err, want)
		}
	}
	head := "id,input_len,output_len,arrival_time,round_idx,tool_wait_after_ms,prefix_len"
	first := "s,1,1,0,0,0,0"
	for _, c := range []struct{ head, first, line, want string }{
		{head, first, ",1,1,0,0,0,0", "line 3: field session_id: must be a non-empty string"},
		{head, first, "s,1.5,1,0,0,0,0", `line 3: column input_len: want an integer, got "1.5"`},
		{head, first, "s,1,-2,0,0,0,0", "line 3: field output_tokens: must be a nonnegative integer, got -2"},
		{head, first, "s,1,1,nan,0,0,0", "line 3: field arrival_time_ms: must be finite and nonnegative, got nan"},
		{head, first, "s,1,1,0,0,-4,0", "line 3: field tool_wait_after_ms: must be finite and nonnegative, got -4"},
		{head, first, "s,1,1,0,1,0,-1", "line 3: field prefix_tokens: must be a nonnegative integer, got -1"},
		{head, first, "s,1,1,0,1,0,x", `line 3: column prefix_len: want an integer, got "x"`},
		{head, first, "t,2,2,0,0,0,0", ""}, // valid, another session
		{"session_id,input_len,output_len,round_idx,prefix_len", "s,1,1,0,0", "s,1,1,0,0", `line 3: field round_index: session "s" has round 0 already (line 2)`},
		{"id,input_len,output_len,round_idx", "s,1,1,0", "s,1,1,1", "line 1: no column prefix_len in the header"},
		{"input_len,output_len,round_idx,prefix_len", "1,1,0,0", "1,1,1,0", "line 1: no column id or session_id in the header"},
	} {
		path := writeTrace(t, "t.csv", c.head, c.first, c.line)
		_, _, err := loadSessions(t, "tracelab", path)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.line, err)
			}
			continue
		}
		want := "--dataset-path " + path + ": " + c.want
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s / %s:\n got %v\nwant %s", c.head, c.line, err, want)
		}
	}
}
