package dataset

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchserve/internal/py/pyrand"
)

// FuzzJSONLDatasets runs the JSONL loaders (openai, custom, speed-bench,
// longbench_v2) over arbitrary files: each must return rows or a one-line
// error naming the file, never panic.
func FuzzJSONLDatasets(f *testing.F) {
	for _, s := range []string{
		`{"messages": [{"role": "user", "content": "w1"}], "max_tokens": 3, "tools": []}`,
		`{"conversations": [{"content": "w1 w2"}, {"value": "w3 w4"}], "image": "x.png"}`,
		`{"category": "mixed", "turns": ["w1", "w2"]}`,
		`{"context": "w1", "question": "w2", "choice_A": "a", "choice_B": "b", "choice_C": "c", "choice_D": "d"}`,
		"[{\"context\": 1}]", "{\"messages\": {}}\n\n{]", "\"x\"\n", "",
	} {
		f.Add([]byte(s + "\n" + s))
	}
	tok := chatWordTok(f, wordChatTemplate)
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "d.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"openai", "custom", "speed-bench", "longbench_v2"} {
			env := Env{Tok: tok, Py: pyrand.NewPython(1), NP: pyrand.NewNumPy(1), Out: new(bytes.Buffer)}
			rows, err := Load(context.Background(), Params{Name: name, Path: path, NumPrompts: 3, SpeedBenchOutputLen: 4}, env)
			if err != nil {
				if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, path) && !strings.Contains(msg, "speed-bench: No rows") {
					t.Errorf("%s: error %q", name, msg)
				}
				continue
			}
			for _, r := range rows {
				if r.PromptLen < 0 || r.OutputLen < 0 {
					t.Errorf("%s: row %+v", name, r)
				}
			}
		}
	})
}
