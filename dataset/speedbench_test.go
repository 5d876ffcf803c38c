package dataset

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"benchserve/internal/py/pyjson"
	"benchserve/internal/py/pyrand"
)

const speedBenchFile = `{"question_id": 1, "category": "low_entropy", "turns": ["w1 w2", "w3"]}
{"question_id": 2, "category": "mixed", "turns": ["w4"]}

{"question_id": 3, "category": "low_entropy", "turns": []}
{"question_id": 4, "category": "low_entropy", "turns": ["w5 w6 w7"]}
{"question_id": 5, "category": "high_entropy", "turns": ["w8 w9"]}
`

func TestSpeedBench(t *testing.T) {
	path := writeFile(t, "speed.jsonl", []byte(speedBenchFile))
	tok := chatWordTok(t, wordChatTemplate)
	low := strings.Fields("w1_w2 w5_w6_w7")
	all := strings.Fields("w1_w2 w4 w5_w6_w7 w8_w9")
	templated := func(p string) Row {
		ids := tok.Encode("<s><|user|> "+strings.ReplaceAll(p, "_", " ")+" <|assistant|>", false)
		return Row{Text: tok.Decode(ids), PromptLen: len(ids), TextPromptLen: len(ids), OutputLen: 64}
	}
	for _, c := range []struct {
		category string
		n        int
		pool     []string
	}{{"", 3, all}, {"low_entropy", 2, low}, {"low_entropy", 5, low}, {"", 0, all}} {
		var out bytes.Buffer
		env := Env{Tok: tok, Py: pyrand.NewPython(9), NP: pyrand.NewNumPy(9), Out: &out}
		p := Params{Name: "speed-bench", Path: path, NumPrompts: c.n, SpeedBenchOutputLen: 64}
		if c.category != "" {
			p.SpeedBenchCategory = &c.category
		}
		rows, err := Load(context.Background(), p, env)
		if err != nil {
			t.Fatal(err)
		}
		py := pyrand.NewPython(9)
		var want []Row
		if c.n <= len(c.pool) {
			for _, k := range py.Sample(len(c.pool), c.n) {
				want = append(want, templated(c.pool[k]))
			}
		} else {
			for i := range c.n {
				want = append(want, templated(c.pool[i%len(c.pool)]))
			}
			py.Shuffle(c.n, func(i, j int) { want[i], want[j] = want[j], want[i] })
		}
		if len(rows) != len(want) || len(rows) > 0 && !reflect.DeepEqual(rows, want) {
			t.Errorf("category %q, %d prompts: rows\n%+v\nwant\n%+v", c.category, c.n, rows, want)
		}
		if env.Py.Random() != py.Random() {
			t.Errorf("category %q, %d prompts: drew a different number of values", c.category, c.n)
		}
		if out.Len() != 0 {
			t.Errorf("printed %q; the reference prints nothing", out.String())
		}
	}
	if got := templated("w1_w2").Text; got != "<s> <|user|> w1 w2 <|assistant|>" {
		t.Errorf("decoded template %q", got)
	}

	// Without a chat template, the plain text and its encoding.
	rows, err := Load(context.Background(), Params{Name: "speed-bench", Path: path, NumPrompts: 1, SpeedBenchOutputLen: 5}, testEnv(4, new(bytes.Buffer)))
	if err != nil || len(rows) != 1 {
		t.Fatalf("%v, %v", rows, err)
	}
	if r := rows[0]; r.PromptLen != len(wordTok{}.Encode(r.Text, true)) || !strings.HasPrefix(r.Text, "w") || strings.Contains(r.Text, "<") {
		t.Errorf("fallback row %+v", r)
	}
	if got, want := sentBody(t, "sglang", rows[0], &pyjson.Object{}),
		`{"text": `+string(pyjson.String(rows[0].Text))+`, "sampling_params": {"temperature": 0.0, "max_new_tokens": 5, "ignore_eos": true}, "stream": true, "lora_path": null, "return_logprob": false, "return_routed_experts": false, "logprob_start_len": -1}`; got != want {
		t.Errorf("body\n%s\nwant\n%s", got, want)
	}
}

func TestSpeedBenchErrors(t *testing.T) {
	for _, c := range []struct {
		data, category, want string
	}{
		{speedBenchFile + "{\"turns\": [\"w1\"\n", "", ": line 7: invalid JSON at column"},
		{speedBenchFile + "[1]\n", "", ": line 7: not a JSON object but a list"},
		{speedBenchFile + `{"turns": [7]}` + "\n", "", `: line 7: turns[0]: want a string, got a number`},
		{speedBenchFile + `{"turns": {"a": 1}}` + "\n", "", `: line 7: turns: want a list of strings, got a dict`},
		{speedBenchFile, "medium", "--dataset-name speed-bench: No rows found in "},
	} {
		path := writeFile(t, "speed.jsonl", []byte(c.data))
		p := Params{Name: "speed-bench", Path: path, NumPrompts: 1, SpeedBenchOutputLen: 5}
		if c.category != "" {
			p.SpeedBenchCategory = &c.category
		}
		_, err := Load(context.Background(), p, testEnv(4, new(bytes.Buffer)))
		if err == nil || !strings.Contains(err.Error(), c.want) || c.category == "" && !strings.Contains(err.Error(), "--dataset-path "+path) {
			t.Errorf("err %v, want %q", err, c.want)
		}
	}
	if _, err := Load(context.Background(), Params{Name: "speed-bench", NumPrompts: 1}, testEnv(4, new(bytes.Buffer))); err == nil || !strings.Contains(err.Error(), "--dataset-path must point to the SPEED-Bench JSONL file") {
		t.Errorf("no path: %v", err)
	}
}
