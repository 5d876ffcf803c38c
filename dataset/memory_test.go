package dataset

import (
	"bytes"
	"context"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

func memEnv(avail float64) Env {
	env := testEnv(1, new(bytes.Buffer))
	env.MemAvailable = func() (float64, bool) { return avail, true }
	return env
}

// A build that would not fit is refused at once, with the estimate, the
// memory available and the flags to lower; it fits when the memory is
// there, and nothing is refused when the memory is unknown.
func TestMemoryRefusal(t *testing.T) {
	trace := writeFile(t, "trace.jsonl", []byte(`{"timestamp": 0, "output_length": 256, "hash_ids": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}
{"timestamp": 5, "output_length": 256, "hash_ids": [11, 12, 13, 14, 15, 16, 17, 18, 19, 20]}
`))
	sg := writeFile(t, "sg.json", makeShareGPT(50))
	for _, c := range []struct {
		p    Params
		want string // the error's pattern
	}{
		{Params{Name: "random-ids", NumPrompts: 1_000_000_000, RandomInputLen: 1024, RandomOutputLen: 1024},
			`^--num-prompts 1000000000: the prompts would take about 1\.[0-9] TB of memory, more than the 20\.3 GB available; lower --num-prompts or --random-input-len$`},
		{Params{Name: "random-ids", NumPrompts: 1_000_000_000, RandomInputLen: 1024, RandomOutputLen: 1024, TokenizePrompt: true},
			`^--num-prompts 1000000000: the prompts would take about 4\.[0-9] TB of memory`},
		// Two sessions of 1,000 rounds: each round holds all the rounds
		// before it, about 5.4 GB.
		{Params{Name: "mooncake", Path: trace, NumPrompts: 1_000_000_000, MooncakeWorkload: "conversation", MooncakeNumRounds: 1000},
			`^--mooncake-num-rounds 1000 with 2 sessions \(--num-prompts 1000000000\): the prompts would take about 5\.[0-9] GB of memory, more than the 20\.3 GB available`},
		// 1,500 random 1080p JPEGs are about 2.9 GB of data URIs.
		{Params{Name: "image", NumPrompts: 1500, ImageCount: 1, ImageResolution: "1080p", ImageFormat: "jpeg", ImageContent: "random", RandomInputLen: 10, RandomOutputLen: 10},
			`^--num-prompts 1500 with --image-count 1: the prompts would take about 2\.[0-9] GB of memory, more than the 20\.3 GB available; lower --num-prompts, --image-count or --image-resolution$`},
		{Params{Name: "generated-shared-prefix", GSPNumGroups: 1000, GSPPromptsPerGroup: 100_000, GSPSystemPromptLen: 2048, GSPQuestionLen: 128,
			GSPOutputLen: 256, GSPRangeRatio: 1, GSPNumTurns: 1}, `^--gsp-num-groups 1000 --gsp-prompts-per-group 100000: the prompts would take about 7[0-9][0-9]\.[0-9] GB`},
		{Params{Name: "speed-bench", Path: writeFile(t, "sb.jsonl", []byte(`{"category": "mixed", "turns": ["w1"]}`+"\n")), NumPrompts: 1_000_000_000, SpeedBenchOutputLen: 4},
			`^--num-prompts 1000000000: the prompts would take about [0-9.]+ GB`},
	} {
		// 20.3 GB is too little for all but mooncake and image, which get
		// a tenth of it.
		avail := 20.3e9
		if c.p.Name == "mooncake" || c.p.Name == "image" {
			avail = 2.03e9
			c.want = strings.Replace(c.want, `20\.3 GB`, `2\.0 GB`, 1)
		}
		start := time.Now()
		_, err := Load(context.Background(), c.p, memEnv(avail))
		if err == nil || !regexp.MustCompile(c.want).MatchString(err.Error()) {
			t.Errorf("%s: err %v\nwant %s", c.p.Name, err, c.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: refused after %v, not up front", c.p.Name, d)
		}
	}

	// Small builds fit; unknown memory refuses nothing.
	for _, avail := range []float64{20.3e9, -1} {
		env := memEnv(avail)
		if avail < 0 {
			env.MemAvailable = func() (float64, bool) { return 0, false }
		}
		for _, p := range []Params{
			{Name: "random-ids", NumPrompts: 100, RandomInputLen: 16, RandomOutputLen: 4},
			{Name: "random", Path: sg, NumPrompts: 10, RandomInputLen: 16, RandomOutputLen: 4},
			{Name: "mooncake", Path: trace, NumPrompts: 2, MooncakeWorkload: "conversation", MooncakeNumRounds: 3},
		} {
			if _, err := Load(context.Background(), p, env); err != nil {
				t.Errorf("%s with %v bytes: %v", p.Name, avail, err)
			}
		}
	}
}

// The mooncake estimate is below the prompts' real size (so a refusal is
// never a close call) but not far below.
func TestMooncakeEstimate(t *testing.T) {
	trace := writeFile(t, "trace.jsonl", []byte(`{"timestamp": 0, "output_length": 30, "hash_ids": [1, 22, 333]}
{"timestamp": 5, "output_length": 7, "hash_ids": [4444]}
`))
	recs, err := readTrace(nil, trace, "trace", 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"sglang", "sglang-oai-chat"} {
		p := Params{Name: "mooncake", Path: trace, NumPrompts: 2, MooncakeWorkload: "conversation", MooncakeNumRounds: 20, Backend: backendOf(backend)}
		rows, err := Load(context.Background(), p, testEnv(1, new(bytes.Buffer)))
		if err != nil {
			t.Fatal(err)
		}
		real := 0.0
		for _, r := range rows {
			real += rowBytes + float64(len(r.Text)+len(r.Messages))
		}
		if est := mooncakeBytes(recs, 20); est > real || est < real/2 {
			t.Errorf("%s: estimate %.0f bytes, the rows take %.0f", backend, est, real)
		}
	}
}

// random holds no more lengths than ShareGPT has prompts: a huge
// --num-prompts draws them all (the generator must end where the
// reference's does) but keeps a few.
func TestRandomHugeNumPrompts(t *testing.T) {
	sg := writeFile(t, "sg.json", makeShareGPT(40))
	p := Params{Name: "random", Path: sg, NumPrompts: 1_000_000, RandomInputLen: 16, RandomOutputLen: 4}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var out bytes.Buffer
	rows, err := Load(context.Background(), p, testEnv(1, &out))
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 || len(rows) > 40 || !strings.Contains(out.String(), "gave only") {
		t.Errorf("%d rows, printed %q", len(rows), out.String())
	}
	// Two lists of a million lengths would be 16 MB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("allocated %d bytes", alloc)
	}
	// The same prompts as with --num-prompts at the file's size: the input
	// lengths are the first ones drawn either way (the output lengths come
	// after all n input lengths, as in the reference).
	small := p
	small.NumPrompts = len(rows)
	want, err := Load(context.Background(), small, testEnv(1, new(bytes.Buffer)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if rows[i].Text != want[i].Text || rows[i].PromptLen != want[i].PromptLen {
			t.Fatalf("row %d differs: %q, want %q", i, rows[i].Text, want[i].Text)
		}
	}
	// sharegpt's rows are bounded by the file in any case.
	rows, err = Load(context.Background(), Params{Name: "sharegpt", Path: sg, NumPrompts: 1_000_000_000}, testEnv(1, new(bytes.Buffer)))
	if err != nil || len(rows) == 0 || len(rows) > 40 {
		t.Errorf("sharegpt: %d rows, %v", len(rows), err)
	}
}

func TestMemInfo(t *testing.T) {
	data := []byte("MemTotal:       32768000 kB\nMemFree:         1000 kB\nMemAvailable:   19824220 kB\n")
	if got, ok := memInfoAvailable(data); !ok || got != 19824220*1024 {
		t.Errorf("MemAvailable = %v, %v", got, ok)
	}
	if _, ok := memInfoAvailable([]byte("MemTotal: 1 kB\n")); ok {
		t.Error("no MemAvailable line read as known")
	}
	for n, want := range map[float64]string{999: "999 bytes", 20.3e9: "20.3 GB", 4.12e12: "4.1 TB", 1500: "1.5 kB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%v) = %q, want %q", n, got, want)
		}
	}
}

// A small build does not read the system's memory.
func TestMemorySmallBuildNotChecked(t *testing.T) {
	env := testEnv(1, new(bytes.Buffer))
	asked := 0
	env.MemAvailable = func() (float64, bool) { asked++; return 1, true }
	if err := fitMemory(env, smallBuild-1, "--num-prompts 1", "--num-prompts"); err != nil || asked != 0 {
		t.Errorf("a build under %d bytes: err %v, memory read %d times, want nil and 0", smallBuild, err, asked)
	}
	if err := fitMemory(env, smallBuild, "--num-prompts 1", "--num-prompts"); err == nil || asked != 1 {
		t.Errorf("a build of %d bytes with 1 byte available: err %v, memory read %d times, want a refusal and 1", smallBuild, err, asked)
	}
}
