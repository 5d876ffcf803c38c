package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// agenticFile has three conversations; the second has an empty turn and
// messages with fields that replay leaves out.
const agenticFile = `{
  "metadata": {"source": "test"},
  "conversations": [
    [
      {"messages": [{"role": "system", "content": "sys A"}, {"role": "user", "content": "hello A"}], "prompt_tokens": 120},
      {"messages": [{"role": "user", "content": "more A"}], "prompt_tokens": 150}
    ],
    [
      {"messages": [{"role": "user", "content": [{"type": "text", "text": "caf\u00e9 B"}], "name": "x"}], "prompt_tokens": "80"},
      {"messages": []},
      {"messages": [{"role": "tool", "content": "out B", "tool_call_id": "t1"}], "prompt_tokens": 99},
      {"messages": [{"role": "user", "content": null}]}
    ],
    [
      {"messages": [{"role": "user", "content": "only C"}]}
    ]
  ]
}
`

func TestLoadAgentic(t *testing.T) {
	path := writeFile(t, "trace.json", []byte(agenticFile))
	var out bytes.Buffer
	p := Params{Name: "agentic-trace", Path: path, Backend: backendOf("sglang-oai-chat"), DatasetOffset: 4}
	rows, err := Load(context.Background(), p, testEnv(1, &out))
	if err != nil {
		t.Fatal(err)
	}
	// Offset 4 % 3 = 1: B, C, A.
	want := [][]string{
		{`[{"role": "user", "content": [{"type": "text", "text": "caf\u00e9 B"}]}]`,
			`[{"role": "tool", "content": "out B"}]`,
			`[{"role": "user", "content": null}]`},
		{`[{"role": "user", "content": "only C"}]`},
		{`[{"role": "system", "content": "sys A"}, {"role": "user", "content": "hello A"}]`,
			`[{"role": "user", "content": "more A"}]`},
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		var got []string
		for _, turn := range r.Turns {
			got = append(got, string(turn))
		}
		if strings.Join(got, "\n") != strings.Join(want[i], "\n") {
			t.Errorf("conversation %d turns:\n%s\nwant:\n%s", i, strings.Join(got, "\n"), strings.Join(want[i], "\n"))
		}
		if r.OutputLen != 220 || r.Text != "" || r.Messages != nil {
			t.Errorf("conversation %d: %+v", i, r)
		}
	}
	if rows[0].PromptLen != 80 || rows[1].PromptLen != 0 || rows[2].PromptLen != 120 {
		t.Errorf("prompt lens %d %d %d", rows[0].PromptLen, rows[1].PromptLen, rows[2].PromptLen)
	}
	if want := "#Conversations: 3 (offset=1, turns/conv min=1 max=3 avg=2.0)\n#Output tokens per turn: 220\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}

	// --num-prompts, --agentic-max-turns and --sharegpt-output-len.
	out.Reset()
	p.DatasetOffset, p.NumPrompts, p.AgenticMaxTurns, p.SharegptOutputLen = -1, 2, intp(1), intp(33)
	rows, err = Load(context.Background(), p, testEnv(1, &out))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || len(rows[0].Turns) != 1 || string(rows[0].Turns[0]) != `[{"role": "user", "content": "only C"}]` || rows[1].OutputLen != 33 {
		t.Errorf("rows %+v", rows)
	}
	if want := "#Conversations: 2 (offset=2, turns/conv min=1 max=1 avg=1.0)\n#Output tokens per turn: 33\n"; out.String() != want {
		t.Errorf("printed %q", out.String())
	}
	// Python's s[:-1] for a negative --agentic-max-turns.
	p.DatasetOffset, p.NumPrompts, p.AgenticMaxTurns = 1, 1, intp(-1)
	if rows, _ = Load(context.Background(), p, testEnv(1, &out)); len(rows) != 1 || len(rows[0].Turns) != 2 {
		t.Errorf("max turns -1: %d turns", len(rows[0].Turns))
	}
}

func TestLoadAgenticBadInput(t *testing.T) {
	for _, tt := range []struct {
		name, file, backend, want string
	}{
		{"backend", agenticFile, "sglang", "--backend sglang: agentic-trace conversations need a chat backend"},
		{"syntax", "{\n  \"conversations\": [\n    [{\"messages\": [}]\n  ]\n}", "", "line 3, column 20: invalid JSON"},
		{"truncated", "{\"conversations\": [[", "", "line 1, column 21: invalid JSON: unexpected end of file"},
		{"not object", "[1]", "", `want a JSON object {"conversations": [...]}`},
		{"conversations not list", "{\n\"conversations\": 5}", "", "line 2: field conversations: want a list"},
		{"no conversations", `{"metadata": {}}`, "", "no conversations found"},
		{"empty", `{"conversations": [[], [{"messages": []}]]}`, "", "no usable conversations"},
		{"turn not object", "{\"conversations\": [\n[\n  {\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]},\n  7\n]]}", "", "line 4: turn 2: want an object with messages"},
		{"no role", "{\"conversations\": [\n[{\"messages\": [{\"content\": \"x\"}]}]]}", "", "line 2: turn 1: messages[0]: field role: missing"},
		{"no content", "{\"conversations\": [\n[{\"messages\": [{\"role\": \"user\"}]}]]}", "", "line 2: turn 1: messages[0]: field content: missing"},
		{"messages not list", "{\"conversations\": [[{\"messages\": \"hi\"}]]}", "", "line 1: turn 1: field messages: want a list of message objects"},
		{"prompt tokens", "{\"conversations\": [[{\"messages\": [], \"prompt_tokens\": [1]}]]}", "", "line 1: turn 1: field prompt_tokens: want a number"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "trace.json", []byte(tt.file))
			_, err := Load(context.Background(), Params{Name: "agentic-trace", Path: path, Backend: backendOf(tt.backend)}, testEnv(1, &bytes.Buffer{}))
			prefix := "--dataset-path " + path + ": "
			if tt.name == "backend" {
				prefix = ""
			}
			if err == nil || !strings.HasPrefix(err.Error(), prefix+tt.want) {
				t.Errorf("err %v\nwant %q", err, prefix+tt.want)
			}
		})
	}
	_, err := Load(context.Background(), Params{Name: "agentic-trace"}, testEnv(1, &bytes.Buffer{}))
	if err == nil || !strings.Contains(err.Error(), "--dataset-path") {
		t.Errorf("no path: %v", err)
	}
}

func FuzzAgentic(f *testing.F) {
	f.Add([]byte(agenticFile))
	f.Add([]byte(`{"conversations": [[{"messages": [{"role": "user", "content": "x"}]}]], "conversations": null}`))
	f.Add([]byte(`{"conversations": [[{"messages": [{"role": 1, "content": {"a": [1.5e300]}}], "prompt_tokens": "7"}]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		convs, err := agenticConversations(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			return
		}
		for _, c := range convs {
			turns, _, err := agenticTurns(data, c)
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error spans lines: %q", err)
				}
				continue
			}
			for _, turn := range turns {
				if !json.Valid(turn) {
					t.Errorf("turn is not JSON: %s", turn)
				}
			}
		}
	})
}
