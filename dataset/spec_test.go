package dataset

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"benchserve/internal/py/argparse"
)

// The table's rows are whole: a loader, shared flags that are shared
// flags, own flags that no other row declares, in the reference's order.
func TestSpecTable(t *testing.T) {
	want := []string{"agentic-trace", "sharegpt", "custom", "openai", "random", "random-ids",
		"generated-shared-prefix", "mmmu", "image", "mooncake", "longbench_v2", "speed-bench",
		"mooncake-sessions", "tracelab", "audio"}
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want the reference's %q", got, want)
	}
	if !slices.Contains(Names(), DefaultName) {
		t.Errorf("DefaultName %q is not a row", DefaultName)
	}
	declared := map[string]string{}
	for _, s := range specs {
		if s.Load == nil {
			t.Errorf("%s: no loader", s.Name)
		}
		for _, f := range s.Reads {
			if shared[f] == nil && ownerIgnored(f) == nil {
				t.Errorf("%s reads %s, which is neither a shared flag nor a dataset's own", s.Name, f)
			}
		}
		for flag := range s.Notes {
			if shared[flag] == nil || slices.Contains(s.Reads, flag) {
				t.Errorf("%s: a note for %s, which is not a shared flag it ignores", s.Name, flag)
			}
		}
		for _, f := range s.Flags {
			if by, ok := declared[f.Opt.Name]; ok || shared[f.Opt.Name] != nil {
				t.Errorf("%s declares %s, already declared by %q or shared", s.Name, f.Opt.Name, by)
			}
			declared[f.Opt.Name] = s.Name
			if f.Ignored == nil || f.Bind.Set == nil || f.Bind.Get == nil {
				t.Errorf("%s: flag %s lacks its binding or why it is ignored", s.Name, f.Opt.Name)
			}
		}
		if s.NoTemplate == "" && !slices.Contains(s.Reads, "--apply-chat-template") {
			t.Errorf("%s ignores --apply-chat-template without saying why", s.Name)
		}
	}
}

// The dataset's part of the default result file's name, the reference's:
// lengths for the random datasets, lengths and images for image, else the
// name.
func TestFileTag(t *testing.T) {
	for _, c := range []struct {
		p    Params
		want string
	}{
		{Params{Name: "image", RandomInputLen: 128, RandomOutputLen: 64, ImageCount: 2, ImageResolution: "720p"}, "128_64_2imgs_720p"},
		{Params{Name: "random", RandomInputLen: 1024, RandomOutputLen: 512}, "1024_512"},
		{Params{Name: "random-ids", RandomInputLen: 1, RandomOutputLen: 2}, "1_2"},
		{Params{Name: "generated-shared-prefix"}, "generated-shared-prefix"},
		{Params{Name: "mmmu", RandomInputLen: 5}, "mmmu"},
	} {
		if got := FileTag(c.p); got != c.want {
			t.Errorf("FileTag(%s) = %q, want %q", c.p.Name, got, c.want)
		}
	}
}

// A new dataset is one row (and its file): Load and Preflight reach it,
// its flags are listed, and the notes on shared and own flags come from
// the row.
func TestOneRowMakesADataset(t *testing.T) {
	saved := specs
	t.Cleanup(func() { specs = saved })
	refused := errors.New("--echo-words 0: must be at least 1")
	specs = append(slices.Clip(specs), Spec{Name: "echo",
		Load: func(_ context.Context, p Params, _ Env) ([]Row, error) {
			return []Row{{Text: "echo", PromptLen: 1, OutputLen: p.RandomOutputLen}}, nil
		},
		Preflight: func(p Params) error {
			if p.RandomInputLen == 0 {
				return refused
			}
			return nil
		},
		Flags: []Flag{{Opt: argparse.Option{Name: "--echo-words", Type: argparse.Int, Default: 1},
			Bind:    argparse.Val(func(p *Params) *int { return &p.RandomInputLen }),
			Ignored: func(Spec) string { return "only echo echoes" }}},
		Reads:   []string{"--random-output-len", "--tokenize-prompt"},
		Prompts: "the word echo", Outputs: "output lengths come from --random-output-len", NoTemplate: "it is one word",
	})
	p := Params{Name: "echo", NumPrompts: 1, RandomOutputLen: 3, RandomInputLen: 1}
	rows, err := Load(context.Background(), p, testEnv(1, new(bytes.Buffer)))
	if err != nil || len(rows) != 1 || rows[0].OutputLen != 3 {
		t.Fatalf("Load: %v %+v", err, rows)
	}
	if err := Preflight(Params{Name: "echo"}); err != refused {
		t.Errorf("Preflight: %v, want the row's", err)
	}
	if !slices.Contains(Names(), "echo") || !slices.ContainsFunc(Flags(), func(f Flag) bool { return f.Opt.Name == "--echo-words" }) {
		t.Errorf("echo or --echo-words not listed: %q", Names())
	}
	for _, c := range []struct{ flag, name, want string }{
		{"--random-output-len", "echo", ""},
		{"--apply-chat-template", "echo", "--dataset-name echo ignores it (it is one word)"},
		{"--random-input-len", "echo", "--dataset-name echo ignores it (its prompts come from the word echo)"},
		{"--tokenize-prompt", "sharegpt", ""},
		{"--tokenize-prompt", "mooncake", "--dataset-name mooncake ignores it (only random, random-ids and echo send token ids)"},
		{"--echo-words", "echo", ""},
		{"--echo-words", "sharegpt", "--dataset-name sharegpt ignores it (only echo echoes)"},
		{"--not-a-dataset-flag", "echo", ""},
	} {
		if got := Note(c.flag, Params{Name: c.name}); got != c.want {
			t.Errorf("Note(%s, %s) = %q, want %q", c.flag, c.name, got, c.want)
		}
	}
}
