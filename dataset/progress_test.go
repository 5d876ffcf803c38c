package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"benchserve/internal/py/pyrand"
)

// fakeClock moves on by step at each reading.
type fakeClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// A build that takes longer than 2 s prints a line to Progress at most
// every 2 s; stdout keeps the reference's lines.
func TestProgressLines(t *testing.T) {
	setWorkers(t, 1) // one item at a time: the counts in the lines are exact
	p := Params{Name: "random-ids", NumPrompts: 1000, RandomInputLen: 4, RandomOutputLen: 4, RandomRangeRatio: 1}
	load := func(step time.Duration, progress *bytes.Buffer) string {
		var out bytes.Buffer
		env := testEnv(1, &out)
		env.Now = (&fakeClock{step: step}).now
		if progress != nil {
			env.Progress = progress
		}
		if _, err := Load(context.Background(), p, env); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	var progress bytes.Buffer
	// Each row reads the clock once, 100 ms on: row 20 is 2 s in.
	printed := load(100*time.Millisecond, &progress)
	var want strings.Builder
	for k := 20; k <= 1000; k += 20 {
		fmt.Fprintf(&want, "Building prompts: %d/1000 (%d s)\n", k, k/10)
	}
	if progress.String() != want.String() {
		t.Errorf("progress:\n%s\nwant\n%s", progress.String(), want.String())
	}
	if plain := load(100*time.Millisecond, nil); printed != plain {
		t.Errorf("stdout with progress\n%q\nwithout\n%q", printed, plain)
	}
	// A build within 2 s prints nothing.
	progress.Reset()
	load(time.Millisecond, &progress)
	if progress.Len() != 0 {
		t.Errorf("fast build printed %q", progress.String())
	}
}

// cancelTok cancels the build's context at its at-th call and counts the
// calls; cancelled is the count once the cancel has taken effect (other
// workers may call while it runs).
type cancelTok struct {
	specialWordTok
	at        int64
	calls     atomic.Int64
	cancelled atomic.Int64
	cancel    func()
}

func (c *cancelTok) tick() {
	if c.calls.Add(1) == c.at {
		c.cancel()
		c.cancelled.Store(c.calls.Load())
	}
}

func (c *cancelTok) Count(s string) int            { c.tick(); return c.specialWordTok.Count(s) }
func (c *cancelTok) Decode(ids []int) string       { c.tick(); return c.specialWordTok.Decode(ids) }
func (c *cancelTok) Encode(s string, b bool) []int { c.tick(); return c.specialWordTok.Encode(s, b) }

// loadCancelled runs Load with a tokenizer that cancels it at its at-th
// call and checks that it stops there, with the context's error, instead
// of building the rest.
func loadCancelled(t *testing.T, p Params, at int64) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tok := &cancelTok{at: at, cancel: cancel}
	env := testEnv(1, new(bytes.Buffer))
	env.Tok, env.CacheDir = tok, t.TempDir()
	rows, err := Load(ctx, p, env)
	if !errors.Is(err, context.Canceled) || rows != nil {
		t.Fatalf("%s, cancelled at call %d: %d rows, err %v", p.Name, at, len(rows), err)
	}
	// Each worker finishes the item it holds.
	if extra := tok.calls.Load() - tok.cancelled.Load(); extra > int64(workers)+1 {
		t.Errorf("%s, cancelled at call %d: %d more calls", p.Name, at, extra)
	}
}

func TestCancelDuringBuild(t *testing.T) {
	// GSP, 32,000 rows: decoding (16 + 32,000 calls), counting each row
	// (32,000), then the mean lengths (16 + 32,000).
	gsp := Params{Name: "generated-shared-prefix", Seed: 1, GSPNumGroups: 16, GSPPromptsPerGroup: 2000, GSPSystemPromptLen: 8,
		GSPQuestionLen: 4, GSPOutputLen: 4, GSPRangeRatio: 0.5, GSPNumTurns: 1, GSPGroupDistribution: "uniform"}
	for _, at := range []int64{100, 32016 + 100, 64016 + 100, 64016 + 16 + 100} {
		loadCancelled(t, gsp, at)
	}
	// random-ids, 100,000 rows decoded one by one.
	loadCancelled(t, Params{Name: "random-ids", NumPrompts: 100_000, RandomInputLen: 8, RandomOutputLen: 4}, 100)
	// A mooncake session of 300 rounds: one count per round.
	trace := writeFile(t, "trace.jsonl", []byte(`{"timestamp": 0, "output_length": 4, "hash_ids": [1, 2]}`+"\n"))
	loadCancelled(t, Params{Name: "mooncake", Path: trace, NumPrompts: 1, MooncakeWorkload: "conversation", MooncakeNumRounds: 300, MooncakeSlowdown: 1}, 20)
}

// Loops that draw random numbers, without a tokenizer call, stop too: a
// clock that moves 1 s a reading makes the second count print a line,
// and the line cancels the build.
func TestCancelWhileDrawing(t *testing.T) {
	run := func(p Params) Env {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		env := gspEnv(t, 1, new(bytes.Buffer))
		env.Now = (&fakeClock{step: time.Second}).now
		env.Progress = writerFunc(func(b []byte) (int, error) { cancel(); return len(b), nil })
		if _, err := Load(ctx, p, env); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: err %v", p.Name, err)
		}
		return env
	}
	// GSP draws each system prompt's 1,000 tokens, then counts them: the
	// second prompt's count cancels, so Python's generator has made
	// exactly 2,000 draws.
	env := run(Params{Name: "generated-shared-prefix", Seed: 1, GSPNumGroups: 50, GSPPromptsPerGroup: 10, GSPSystemPromptLen: 1000,
		GSPQuestionLen: 4, GSPOutputLen: 4, GSPRangeRatio: 1, GSPNumTurns: 1, GSPGroupDistribution: "uniform"})
	ref := pyrand.NewPython(1)
	for range 2000 {
		ref.Random()
	}
	if env.Py.Random() != ref.Random() {
		t.Errorf("GSP: the drawing did not stop at the cancel")
	}
	// random-ids counts its length draws 4,096 at a time: NumPy's
	// generator has made two such batches.
	env = run(Params{Name: "random-ids", NumPrompts: 1_000_000, RandomInputLen: 100, RandomOutputLen: 4})
	np := pyrand.NewNumPy(1)
	for range 2 * 4096 {
		np.RandInt(1, 101)
	}
	if env.NP.RandomSample() != np.RandomSample() {
		t.Errorf("random-ids: the drawing did not stop at the cancel")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
