package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"benchserve/internal/py/pyrand"
)

// specialWordTok is wordTok with "<s>" and "<unk>" marked special, as
// reference_gsp.py's vocabulary has them, so that gen_prompt draws only
// "w0".."w99".
type specialWordTok struct{ wordTok }

func (specialWordTok) SpecialIDs() []int { return []int{0, 1} }

func gspEnv(t testing.TB, seed int64, out *bytes.Buffer) Env {
	return Env{Tok: specialWordTok{}, Py: pyrand.NewPython(seed), NP: pyrand.NewNumPy(uint32(seed)), Out: out,
		CacheDir: t.TempDir()}
}

func gspFloat(v float64) *float64 { return &v }

// gspParams are reference_gsp.py's scenarios.
func gspParams() map[string]Params {
	base := func(seed, groups, ppg, sys, q, out int) Params {
		return Params{Name: "generated-shared-prefix", Seed: seed, NumPrompts: 1000, GSPNumGroups: groups, GSPPromptsPerGroup: ppg,
			GSPSystemPromptLen: sys, GSPQuestionLen: q, GSPOutputLen: out, GSPRangeRatio: 1, GSPNumTurns: 1, GSPGroupDistribution: "uniform"}
	}
	ratio := base(7, 2, 3, 8, 4, 6)
	ratio.GSPRangeRatio, ratio.GSPOrdered = 0.5, true
	turns := base(1, 2, 2, 4, 3, 4)
	turns.GSPRangeRatio, turns.GSPNumTurns = 0.3, 3
	zipf := base(42, 4, 3, 3, 2, 4)
	zipf.GSPGroupDistribution, zipf.GSPZipfAlpha = "zipf", gspFloat(1.2)
	fast := base(5, 2, 2, 5, 2, 3)
	fast.GSPFastPrepare = true
	return map[string]Params{"uniform": base(42, 3, 2, 6, 3, 5), "ratio": ratio, "turns": turns, "zipf": zipf, "fast": fast}
}

// gspPrompts is a row's prompt as reference_gsp.py prints it: its text,
// or the user content of each turn.
func gspPrompts(t *testing.T, r Row) []string {
	t.Helper()
	if r.Turns == nil {
		return []string{r.Text}
	}
	var out []string
	for _, turn := range r.Turns {
		var msgs []map[string]string
		if err := json.Unmarshal(turn, &msgs); err != nil || len(msgs) != 1 || msgs[0]["role"] != "user" {
			t.Fatalf("turn %s: want one user message (%v)", turn, err)
		}
		out = append(out, msgs[0]["content"])
	}
	return out
}

// gspStats is what follows "Generated shared prefix dataset statistics:".
func gspStats(out string) string {
	const head = "\nGenerated shared prefix dataset statistics:\n"
	i := strings.Index(out, head)
	if i < 0 {
		return ""
	}
	s := out[i+len(head):]
	if j := strings.Index(s, "Caching generated"); j >= 0 {
		s = s[:j]
	}
	if strings.HasSuffix(s, "\n\n") {
		s = s[:len(s)-1] // the reference's last line ends in "\n\n"
	}
	return s
}

func TestGSPMatchesReference(t *testing.T) {
	for _, w := range []int{1, 2} {
		setWorkers(t, w)
		for name, p := range gspParams() {
			want := gspWant[name]
			var out bytes.Buffer
			env := gspEnv(t, int64(p.Seed), &out)
			rows, err := Load(context.Background(), p, env)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(rows) != len(want.rows) {
				t.Fatalf("%s: %d rows, want %d", name, len(rows), len(want.rows))
			}
			for i, r := range rows {
				wr := want.rows[i]
				if got := gspPrompts(t, r); !reflect.DeepEqual(got, wr.prompt) || r.PromptLen != wr.plen || r.OutputLen != wr.olen || r.TextPromptLen != wr.plen {
					t.Errorf("%s: row %d = %q %d/%d, want %q %d/%d", name, i, got, r.PromptLen, r.OutputLen, wr.prompt, wr.plen, wr.olen)
				}
				if r.RoutingKey != "" || r.Extra != nil || r.Messages != nil || r.IDs != nil {
					t.Errorf("%s: row %d has fields the dataset does not set: %+v", name, i, r)
				}
			}
			if got := gspStats(out.String()); got != want.lines {
				t.Errorf("%s: statistics\n%s\nwant\n%s", name, got, want.lines)
			}
			if py, np := env.Py.Random(), env.NP.RandomSample(); py != want.nextPy || np != want.nextNP {
				t.Errorf("%s: next draws %v, %v, want %v, %v", name, py, np, want.nextPy, want.nextNP)
			}
		}
	}
}

func TestGSPPrintedLines(t *testing.T) {
	p := gspParams()["zipf"]
	var out bytes.Buffer
	env := gspEnv(t, 42, &out)
	if _, err := Load(context.Background(), p, env); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(env.CacheDir, "generated-shared-prefix", "gen_shared_prefix_42_4_3_3_2_4_zipf_1.2_words.gsp")
	want := "\nGenerating new input data... (num_groups=4, prompts_per_group=3, system_prompt_len=3, question_len=2, output_len=4, range_ratio=1.0, num_turns=1, group_distribution='zipf', zipf_alpha=1.2)\n" +
		"\nGenerated shared prefix dataset statistics:\n" + gspWant["zipf"].lines + "\n" +
		"Caching generated input data to " + cache + "\n"
	if out.String() != want {
		t.Errorf("printed\n%q\nwant\n%q", out.String(), want)
	}

	p = gspParams()["turns"]
	p.GSPSendRoutingKey = true
	out.Reset()
	if _, err := Load(context.Background(), p, gspEnv(t, 1, &out)); err != nil {
		t.Fatal(err)
	}
	if want := "\nCache bypassed (range_ratio=0.3, send_routing_key=True, num_turns=3)\n\nGenerating new input data... (num_groups=2, prompts_per_group=2, system_prompt_len=4, question_len=3, output_len=4, range_ratio=0.3, num_turns=3, group_distribution='uniform', zipf_alpha=None)\n"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("printed\n%q\nwant it to start with\n%q", out.String(), want)
	}
}

// The cache is written on a run that may use it and read back by the next
// one, which then draws nothing (as the reference returns its pickle
// before any draw) and prints no statistics.
func TestGSPCache(t *testing.T) {
	p := gspParams()["uniform"]
	dir := t.TempDir()
	var out bytes.Buffer
	env := gspEnv(t, 42, &out)
	env.CacheDir = dir
	first, err := Load(context.Background(), p, env)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "generated-shared-prefix", "*"))
	if len(files) != 1 || filepath.Base(files[0]) != "gen_shared_prefix_42_3_2_6_3_5_words.gsp" {
		t.Fatalf("cache files %v", files)
	}

	out.Reset()
	env = gspEnv(t, 42, &out)
	env.CacheDir = dir
	again, err := Load(context.Background(), p, env)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, first) {
		t.Errorf("rows from the cache differ:\n%+v\nwant\n%+v", again, first)
	}
	if want := "\nLoading cached generated input data from " + files[0] + "\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	if py, np := env.Py.Random(), env.NP.RandomSample(); py != pyrand.NewPython(42).Random() || np != pyrand.NewNumPy(42).RandomSample() {
		t.Errorf("a cached load drew from the generators")
	}

	// A damaged file is reported and replaced.
	data, _ := os.ReadFile(files[0])
	data[len(data)/2] ^= 0xff
	os.WriteFile(files[0], data, 0o644)
	out.Reset()
	env = gspEnv(t, 42, &out)
	env.CacheDir = dir
	rows, err := Load(context.Background(), p, env)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rows, first) || !strings.Contains(out.String(), "Warning: ignoring the GSP cache") || !strings.Contains(out.String(), "checksum") {
		t.Errorf("damaged cache: printed %q", out.String())
	}
	if _, err := readGSPCache(files[0]); err != nil {
		t.Errorf("the cache was not rewritten: %v", err)
	}

	// Runs the cache does not fit neither read nor write it.
	for name, change := range map[string]func(*Params){
		"ratio":   func(p *Params) { p.GSPRangeRatio = 0.5 },
		"routing": func(p *Params) { p.GSPSendRoutingKey = true },
		"turns":   func(p *Params) { p.GSPNumTurns = 2 },
	} {
		q := p
		change(&q)
		out.Reset()
		env = gspEnv(t, 42, &out)
		env.CacheDir = t.TempDir()
		if _, err := Load(context.Background(), q, env); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), "\nCache bypassed (") || strings.Contains(out.String(), "Caching") {
			t.Errorf("%s: printed %q", name, out.String())
		}
		if files, _ := filepath.Glob(filepath.Join(env.CacheDir, "*", "*")); len(files) != 0 {
			t.Errorf("%s: wrote %v", name, files)
		}
	}
}

func TestGSPCacheNames(t *testing.T) {
	p := gspParams()["uniform"]
	names := map[string]bool{}
	for _, change := range []func(*Params){
		func(*Params) {},
		func(p *Params) { p.Seed = 43 },
		func(p *Params) { p.GSPNumGroups = 4 },
		func(p *Params) { p.GSPPromptsPerGroup = 3 },
		func(p *Params) { p.GSPSystemPromptLen = 7 },
		func(p *Params) { p.GSPQuestionLen = 4 },
		func(p *Params) { p.GSPOutputLen = 6 },
		func(p *Params) { p.GSPGroupDistribution, p.GSPZipfAlpha = "zipf", gspFloat(1) },
		func(p *Params) { p.GSPGroupDistribution, p.GSPZipfAlpha = "zipf", gspFloat(1.5) },
		func(p *Params) { p.GSPFastPrepare = true },
		func(p *Params) { p.GSPOrdered = true },
	} {
		q := p
		change(&q)
		names[gspCacheName(q, "words")] = true
	}
	names[gspCacheName(p, "org/model")] = true
	names[gspCacheName(p, "org_model")] = true
	if len(names) != 13 {
		t.Errorf("%d distinct names, want 13: %v", len(names), names)
	}
	if n := gspCacheName(p, "meta-llama/Llama-3.1-8B"); !regexp.MustCompile(`^gen_shared_prefix_42_3_2_6_3_5_meta-llama_Llama-3\.1-8B-[0-9a-f]+\.gsp$`).MatchString(n) {
		t.Errorf("name %q", n)
	}
}

func TestGSPRoutingKey(t *testing.T) {
	p := gspParams()["zipf"]
	p.GSPSendRoutingKey = true
	rows, err := Load(context.Background(), p, gspEnv(t, 42, &bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^([0-9a-f]{8}_[0-9]{14})_([0-9]+)$`)
	run := ""
	for i, r := range rows {
		m := re.FindStringSubmatch(r.RoutingKey)
		if m == nil {
			t.Fatalf("row %d: routing key %q", i, r.RoutingKey)
		}
		if run == "" {
			run = m[1]
		} else if m[1] != run {
			t.Errorf("row %d: run part %q, want %q as in the first row", i, m[1], run)
		}
		if want := gspWant["zipf"].rows[i].gr; m[2] != string(rune('0'+want)) {
			t.Errorf("row %d: group %s, want %d", i, m[2], want)
		}
	}
}

func TestGSPErrors(t *testing.T) {
	for _, c := range []struct {
		change func(*Params)
		want   string
	}{
		{func(p *Params) { p.TokenizePrompt = true }, "--tokenize-prompt: not supported by --dataset-name generated-shared-prefix"},
		{func(p *Params) { p.GSPNumGroups = 0 }, "--gsp-num-groups: must be > 0, got 0"},
		{func(p *Params) { p.GSPPromptsPerGroup = -1 }, "--gsp-prompts-per-group: must be > 0, got -1"},
		{func(p *Params) { p.GSPNumTurns = 0 }, "--gsp-num-turns: must be >= 1, got 0"},
		{func(p *Params) { p.GSPNumTurns, p.Backend = 2, backendOf("sglang") }, "--gsp-num-turns 2: multi-turn conversations need a chat backend"},
		{func(p *Params) { p.GSPRangeRatio = 1.5 }, "--gsp-range-ratio 1.5: the shortest length 9 exceeds --gsp-system-prompt-len 6"},
		{func(p *Params) { p.GSPGroupDistribution = "zipf" }, "--gsp-group-distribution=zipf requires --gsp-zipf-alpha"},
		{func(p *Params) { p.GSPZipfAlpha = gspFloat(1) }, "--gsp-zipf-alpha is only meaningful with --gsp-group-distribution=zipf"},
		{func(p *Params) { p.GSPGroupDistribution, p.GSPZipfAlpha = "zipf", gspFloat(0) }, "--gsp-zipf-alpha must be a finite float > 0, got 0.0"},
		{func(p *Params) { p.GSPGroupDistribution = "pareto" }, "--gsp-group-distribution must be 'uniform' or 'zipf', got 'pareto'"},
	} {
		p := gspParams()["uniform"]
		c.change(&p)
		_, err := Load(context.Background(), p, gspEnv(t, 42, &bytes.Buffer{}))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}
