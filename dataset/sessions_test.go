package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// --session-turns makes each random and random-ids row a conversation:
// turn 0 is the row the dataset builds without it (the reference's draws
// are untouched), each later turn a user message of --per-turn-input-len
// tokens drawn with --random-range-ratio, and the turn counts are drawn
// per row in [A, B] from --seed alone, the same on every build.
func TestSessionRows(t *testing.T) {
	path := writeFile(t, "sg.json", makeShareGPT(80))
	for _, name := range []string{"random", "random-ids"} {
		t.Run(name, func(t *testing.T) {
			plain := Params{Name: name, Path: path, NumPrompts: 24, RandomInputLen: 12, RandomOutputLen: 6, RandomRangeRatio: 0.5,
				Seed: 7, Backend: backendOf("sglang-oai-chat")}
			p := plain
			turns, perTurn := "2-4", 6
			p.SessionTurns, p.PerTurnInputLen = &turns, &perTurn
			load := func(p Params) ([]Row, string) {
				var out bytes.Buffer
				rows, err := Load(context.Background(), p, testEnv(11, &out))
				if err != nil {
					t.Fatal(err)
				}
				return rows, out.String()
			}
			base, _ := load(plain)
			rows, out := load(p)
			again, _ := load(p)
			if len(rows) != len(base) || len(rows) != 24 {
				t.Fatalf("%d rows, want the %d of the plain dataset", len(rows), len(base))
			}
			counts := map[int]int{}
			for i, r := range rows {
				n := len(r.Turns)
				counts[n]++
				if n < 2 || n > 4 || r.Text != "" || r.IDs != nil {
					t.Fatalf("row %d: %d turns, text %q", i, n, r.Text)
				}
				if r.PromptLen != base[i].PromptLen || r.OutputLen != base[i].OutputLen {
					t.Errorf("row %d: lengths %d/%d, the plain row's %d/%d", i, r.PromptLen, r.OutputLen, base[i].PromptLen, base[i].OutputLen)
				}
				for k, turn := range r.Turns {
					var msgs []struct{ Role, Content string }
					if err := json.Unmarshal(turn, &msgs); err != nil || len(msgs) != 1 || msgs[0].Role != "user" {
						t.Fatalf("row %d turn %d: %s (%v)", i, k, turn, err)
					}
					words := wordTok{}.Count(msgs[0].Content)
					switch {
					case k == 0 && msgs[0].Content != base[i].Text:
						t.Errorf("row %d: turn 0 is %q, the plain row's prompt %q", i, msgs[0].Content, base[i].Text)
					case k > 0 && (words < 3 || words > perTurn):
						t.Errorf("row %d turn %d: %d tokens, want 3..%d", i, k, words, perTurn)
					}
				}
				if !slices.EqualFunc(r.Turns, again[i].Turns, bytes.Equal) {
					t.Errorf("row %d differs between two builds", i)
				}
			}
			if len(counts) < 2 {
				t.Errorf("turn counts %v: one value over 24 sessions drawn from 2-4", counts)
			}
			if !strings.Contains(out, "#Sessions: 24 (turns/session min=") || !strings.Contains(out, "#Later-turn input tokens: ") {
				t.Errorf("no sessions line:\n%s", out)
			}
		})
	}
}

// Without --per-turn-input-len the later turns are --random-input-len
// long; --session-turns N gives every row N turns.
func TestSessionFixedTurns(t *testing.T) {
	turns := "3"
	p := Params{Name: "random-ids", NumPrompts: 5, RandomInputLen: 9, RandomOutputLen: 2, RandomRangeRatio: 1,
		SessionTurns: &turns, Backend: backendOf("vllm-chat")}
	rows, err := Load(context.Background(), p, testEnv(3, new(bytes.Buffer)))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if len(r.Turns) != 3 {
			t.Fatalf("row %d: %d turns, want 3", i, len(r.Turns))
		}
		var msgs []struct{ Content string }
		if err := json.Unmarshal(r.Turns[2], &msgs); err != nil || (wordTok{}).Count(msgs[0].Content) != 9 {
			t.Errorf("row %d: turn 2 is %s, want 9 tokens", i, r.Turns[2])
		}
	}
}

// Bad session flags are one message naming the flag, from Preflight (so
// before any network call) as from Load.
func TestSessionFlagsRefused(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, c := range []struct {
		turns   *string
		perTurn *int
		backend string
		ids     bool
		ratio   float64
		want    string
	}{
		{turns: s("0"), want: `--session-turns "0": expected N or A-B`},
		{turns: s("4-2"), want: `--session-turns "4-2"`},
		{turns: s("2-x"), want: `--session-turns "2-x"`},
		{turns: s(""), want: `--session-turns ""`},
		{turns: s("2"), perTurn: intp(0), want: "--per-turn-input-len: must be >= 1, got 0"},
		{turns: s("2"), backend: "sglang", want: "--session-turns: sessions are chat conversations and need a chat backend"},
		{turns: s("2"), ids: true, want: "--session-turns: sessions send chat messages, not token ids"},
		{turns: s("2"), perTurn: intp(3), ratio: 1.5, want: "--random-range-ratio 1.5: the shortest length 4 exceeds --per-turn-input-len 3"},
	} {
		b := c.backend
		if b == "" {
			b = "sglang-oai-chat"
		}
		p := Params{Name: "random-ids", NumPrompts: 2, RandomInputLen: 4, RandomOutputLen: 2, RandomRangeRatio: c.ratio,
			SessionTurns: c.turns, PerTurnInputLen: c.perTurn, Backend: backendOf(b), TokenizePrompt: c.ids}
		if c.ratio > 1 {
			p.RandomInputLen, p.RandomOutputLen = 0, 0 // only the per-turn length meets the ratio
		}
		err := Preflight(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: Preflight %v, want %q", c, err, c.want)
		}
		if _, err := Load(context.Background(), p, testEnv(1, new(bytes.Buffer))); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: Load %v, want %q", c, err, c.want)
		}
	}
}

// The session flags are read by random and random-ids only; elsewhere a
// note says so.
func TestSessionFlagNotes(t *testing.T) {
	for _, name := range []string{"random", "random-ids"} {
		if n := Note("--session-turns", Params{Name: name}); n != "" {
			t.Errorf("%s: note %q", name, n)
		}
	}
	want := "--dataset-name sharegpt ignores it (only random and random-ids make synthetic sessions)"
	if n := Note("--per-turn-input-len", Params{Name: "sharegpt"}); n != want {
		t.Errorf("sharegpt: note %q, want %q", n, want)
	}
}
