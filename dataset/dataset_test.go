package dataset

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"benchserve/hub"
	"benchserve/internal/py/pyrand"
	"benchserve/tokenizer"
)

func intp(v int) *int { return &v }

// writeFile writes data to a fresh file and returns its path.
func writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// testEnv seeds both generators as --seed does.
func testEnv(seed int64, out *bytes.Buffer) Env {
	return Env{Tok: wordTok{}, Py: pyrand.NewPython(seed), NP: pyrand.NewNumPy(uint32(seed)), Out: out}
}

// backendOf is what the run tells the datasets of --backend name (bench
// fills it in from the backend table; its tests hold these same rows).
func backendOf(name string) Backend {
	b := Backend{Name: name,
		ChatNames:  []string{"sglang-oai-chat", "vllm-chat", "lmdeploy-chat"},
		ImageNames: []string{"sglang", "sglang-native", "sglang-oai-chat", "vllm-chat"}}
	b.Chat = slices.Contains(b.ChatNames, name)
	switch name {
	case "sglang", "sglang-native":
		b.Images = ImagesNative
	case "sglang-oai-chat", "vllm-chat":
		b.Images = ImagesChat
	}
	return b
}

// refScenarios are the cases of testdata/reference.py, same names, seeds and
// parameters.
func refScenarios(path string) []struct {
	name string
	seed int64
	p    Params
} {
	return []struct {
		name string
		seed int64
		p    Params
	}{
		{"sharegpt", 42, Params{Name: "sharegpt", Path: path, NumPrompts: 6}},
		{"sharegpt-fixed-suffix", 7, Params{Name: "sharegpt", Path: path, NumPrompts: 5,
			SharegptOutputLen: intp(6), SharegptContextLen: intp(12), PromptSuffix: " Answer briefly."}},
		{"sharegpt-short", 3, Params{Name: "sharegpt", Path: path, NumPrompts: 1000, SharegptContextLen: intp(0)}},
		{"random", 42, Params{Name: "random", Path: path, NumPrompts: 6, RandomInputLen: 12, RandomOutputLen: 9}},
		{"random-tokenized", 5, Params{Name: "random", Path: path, NumPrompts: 5, RandomInputLen: 20, RandomOutputLen: 4,
			RandomRangeRatio: 0.5, TokenizePrompt: true}},
		{"random-empty-targets", 42, Params{Name: "random", Path: path, NumPrompts: 4, RandomInputLen: 1, RandomRangeRatio: 1}},
		{"random-trunc", 9, Params{Name: "random", Path: path, NumPrompts: 4, RandomInputLen: 7, RandomOutputLen: 7,
			RandomRangeRatio: 0.99}},
		{"random-short", 1, Params{Name: "random", Path: path, NumPrompts: 200, RandomInputLen: 3, RandomOutputLen: 2,
			RandomRangeRatio: 1, TokenizePrompt: true}},
		{"random-ids", 11, Params{Name: "random-ids", NumPrompts: 5, RandomInputLen: 10, RandomOutputLen: 6, RandomRangeRatio: 0.3}},
		{"random-ids-tokenized", 11, Params{Name: "random-ids", NumPrompts: 5, RandomInputLen: 10, RandomOutputLen: 6,
			TokenizePrompt: true}},
	}
}

func TestGeneratorMatchesScript(t *testing.T) {
	sum := sha256.Sum256(makeShareGPT(80))
	if got := hex.EncodeToString(sum[:]); got != refFileSHA256 {
		t.Fatalf("makeShareGPT(80) sha256 = %s, reference.py built %s", got, refFileSHA256)
	}
}

// TestMatchesReference checks rows, printed lines and generator positions
// against the reference algorithm run by testdata/reference.py, serially
// and with tokenization running ahead in parallel.
func TestMatchesReference(t *testing.T) {
	path := writeFile(t, "sg.json", makeShareGPT(80))
	for _, w := range []int{1, 2, 7} {
		setWorkers(t, w)
		for _, sc := range refScenarios(path) {
			want, ok := refWant[sc.name]
			if !ok {
				t.Fatalf("%s: no expectation", sc.name)
			}
			var out bytes.Buffer
			env := testEnv(sc.seed, &out)
			rows, err := Load(context.Background(), sc.p, env)
			if err != nil {
				t.Fatalf("workers %d, %s: %v", w, sc.name, err)
			}
			if !reflect.DeepEqual(rows, want.rows) {
				t.Errorf("workers %d, %s: rows differ\n got %+v\nwant %+v", w, sc.name, rows, want.rows)
			}
			printed, warning := splitWarning(out.String())
			wantPrinted := want.printed
			if len(rows) < sc.p.NumPrompts {
				// We print what was built, and warn; the reference prints
				// the targets of all --num-prompts and says nothing.
				wantPrinted = sums(rows)
				if !strings.Contains(warning, "--num-prompts") {
					t.Errorf("workers %d, %s: no shortfall warning in %q", w, sc.name, out.String())
				}
			} else if warning != "" {
				t.Errorf("workers %d, %s: unexpected warning %q", w, sc.name, warning)
			}
			if printed != wantPrinted {
				t.Errorf("workers %d, %s: printed %q, want %q", w, sc.name, printed, wantPrinted)
			}
			if py, np := env.Py.Random(), env.NP.RandomSample(); py != want.nextPy || np != want.nextNP {
				t.Errorf("workers %d, %s: next draws %v, %v, want %v, %v", w, sc.name, py, np, want.nextPy, want.nextNP)
			}
		}
	}
}

func setWorkers(t testing.TB, n int) {
	old := workers
	workers = n
	t.Cleanup(func() { workers = old })
}

func splitWarning(s string) (rest, warning string) {
	var keep []string
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(line, "Warning:") {
			warning += line
		} else if line != "" {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, ""), warning
}

func sums(rows []Row) string {
	in, out := make([]int, len(rows)), make([]int, len(rows))
	for i, r := range rows {
		in[i], out[i] = r.PromptLen, r.OutputLen
	}
	var b bytes.Buffer
	printSums(&b, in, out)
	return b.String()
}

func TestRandomLens(t *testing.T) {
	for _, c := range []struct {
		full  int
		ratio float64
		lo    int64 // the low bound randint must be called with
	}{
		{100, 0, 1}, {100, 0.5, 50}, {100, 1, 100}, {7, 0.99, 6}, {3, 0.3, 1}, {10, -2, 1}, {100, 1.005, 100},
	} {
		np, ref := pyrand.NewNumPy(1), pyrand.NewNumPy(1)
		got, err := randomLens(np, c.full, c.ratio, 50, "--random-input-len")
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		for i, v := range got {
			if want := int(ref.RandInt(c.lo, int64(c.full)+1)); v != want {
				t.Fatalf("%v: lens[%d] = %d, want %d", c, i, v, want)
			}
		}
	}
	np := pyrand.NewNumPy(1)
	if got, err := randomLens(np, 0, 0.5, 3, "x"); err != nil || !reflect.DeepEqual(got, []int{0, 0, 0}) {
		t.Errorf("full 0: %v, %v", got, err)
	}
	if got, err := randomLens(np, -5, 0.5, 2, "x"); err != nil || !reflect.DeepEqual(got, []int{0, 0}) {
		t.Errorf("full -5: %v, %v", got, err)
	}
	if np.RandomSample() != pyrand.NewNumPy(1).RandomSample() {
		t.Error("zero lengths consumed draws")
	}
	for _, ratio := range []float64{1.5, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := randomLens(np, 100, ratio, 2, "--random-output-len"); err == nil || !strings.Contains(err.Error(), "--random-range-ratio") {
			t.Errorf("ratio %v: err %v", ratio, err)
		}
	}
	if _, err := randomLens(np, 100, 1.5, 2, "--random-output-len"); err == nil || !strings.Contains(err.Error(), "--random-output-len 100") {
		t.Errorf("ratio 1.5: err %v does not name the length flag", err)
	}
}

func TestLoadErrors(t *testing.T) {
	good := writeFile(t, "sg.json", makeShareGPT(20))
	missing := filepath.Join(t.TempDir(), "nope.json")
	for _, c := range []struct {
		name string
		p    Params
		env  func(*Env)
		want string
	}{
		{"unknown dataset", Params{Name: "autobench"}, nil, "--dataset-name autobench: unknown dataset"},
		{"output len too small", Params{Name: "sharegpt", Path: good, NumPrompts: 1, SharegptOutputLen: intp(3)}, nil,
			"--sharegpt-output-len 3: too small"},
		{"tokenize sharegpt", Params{Name: "sharegpt", Path: good, NumPrompts: 1, TokenizePrompt: true}, nil, "--tokenize-prompt"},
		{"chat template", Params{Name: "sharegpt", Path: good, NumPrompts: 1, ApplyChatTemplate: true}, nil,
			"--apply-chat-template: tokenizer words has no chat template"},
		{"missing file sharegpt", Params{Name: "sharegpt", Path: missing, NumPrompts: 1}, nil,
			"--dataset-path " + missing + ": no such file"},
		{"missing file random", Params{Name: "random", Path: missing, NumPrompts: 1, RandomInputLen: 4}, nil,
			"--dataset-path " + missing + ": no such file"},
		{"directory", Params{Name: "random", Path: t.TempDir(), NumPrompts: 1}, nil, "is a directory"},
		{"no download", Params{Name: "sharegpt", NumPrompts: 1}, nil, "--dataset-path is empty and downloading is not available"},
		{"download fails", Params{Name: "random", NumPrompts: 1}, func(e *Env) {
			e.Fetch = func(context.Context, string, string, string) (string, error) { return "", errors.New("offline") }
		}, "downloading ShareGPT_V3_unfiltered_cleaned_split.json from anon8231489123/ShareGPT_Vicuna_unfiltered failed: offline; pass --dataset-path with a local copy"},
		{"negative prompts", Params{Name: "random-ids", NumPrompts: -1}, nil, "--num-prompts"},
		{"bad ratio", Params{Name: "random-ids", NumPrompts: 1, RandomInputLen: 10, RandomRangeRatio: 2}, nil,
			"--random-range-ratio 2: the shortest length 20 exceeds --random-input-len 10"},
	} {
		env := testEnv(1, new(bytes.Buffer))
		if c.env != nil {
			c.env(&env)
		}
		_, err := Load(context.Background(), c.p, env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error spans lines: %q", c.name, err)
		}
	}
}

// TestDownload checks that an empty --dataset-path fetches ShareGPT from
// its Hub repository and reads the file it returns.
func TestDownload(t *testing.T) {
	path := writeFile(t, "sg.json", makeShareGPT(80))
	for _, name := range []string{"sharegpt", "random"} {
		var got []string
		env := testEnv(42, new(bytes.Buffer))
		env.Fetch = func(_ context.Context, repoType, repoID, file string) (string, error) {
			got = []string{repoType, repoID, file}
			return path, nil
		}
		rows, err := Load(context.Background(), Params{Name: name, NumPrompts: 6, RandomInputLen: 12, RandomOutputLen: 9}, env)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"dataset", ShareGPTRepo, ShareGPTFile}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: fetched %v, want %v", name, got, want)
		}
		if !reflect.DeepEqual(rows, refWant[name].rows) {
			t.Errorf("%s: rows from the downloaded file differ", name)
		}
	}
	// A named file is never replaced by a download, even when it is bad.
	bad := writeFile(t, "bad.json", []byte("[{"))
	env := testEnv(42, new(bytes.Buffer))
	env.Fetch = func(context.Context, string, string, string) (string, error) {
		t.Error("downloaded although --dataset-path was given")
		return path, nil
	}
	if _, err := Load(context.Background(), Params{Name: "random", Path: bad, NumPrompts: 1, RandomInputLen: 3}, env); err == nil {
		t.Error("bad --dataset-path accepted")
	}
}

// TestRealTokenizer runs both datasets with the built-in o200k_base
// encoding, which adds no special tokens: the random targets are not
// lowered, and "" encodes to nothing, so empty prompts are skipped.
func TestRealTokenizer(t *testing.T) {
	tok, err := tokenizer.Load("o200k_base")
	if err != nil {
		t.Skipf("o200k_base: %v", err)
	}
	data := []byte(`[
{"conversations": [{"value": ""}, {"value": "skipped: an empty prompt"}]},
{"conversations": [{"value": "Hello there, how are you today?"}, {"value": "Fine, thanks."}]},
{"conversations": [{"value": "Résumé of naïve café owners"}, {"value": "Sure, here it is."}]},
{"conversations": [{"value": "Hi"}, {"value": "A"}]}
]`)
	path := writeFile(t, "sg.json", data)
	env := Env{Tok: tok, Py: pyrand.NewPython(42), NP: pyrand.NewNumPy(42)}
	rows, err := Load(context.Background(), Params{Name: "random", Path: path, NumPrompts: 3, RandomInputLen: 9, RandomRangeRatio: 1}, env)
	if err != nil {
		t.Fatal(err)
	}
	// The walk, redone by hand: shuffle, skip "", cycle each prompt's ids to 9.
	prompts := []string{"", "Hello there, how are you today?", "Résumé of naïve café owners", "Hi"}
	pyrand.NewPython(42).Shuffle(len(prompts), func(i, j int) { prompts[i], prompts[j] = prompts[j], prompts[i] })
	var want []Row
	for _, p := range prompts {
		ids := tok.Encode(p, true)
		if len(ids) == 0 || len(want) == 3 {
			continue
		}
		cyc := make([]int, 9)
		for j := range cyc {
			cyc[j] = ids[j%len(ids)]
		}
		want = append(want, Row{Text: tok.Decode(cyc), PromptLen: 9, OutputLen: 0, TextPromptLen: 9})
	}
	if len(want) != 3 || !reflect.DeepEqual(rows, want) {
		t.Fatalf("random rows:\n got %+v\nwant %+v", rows, want)
	}

	env = Env{Tok: tok, Py: pyrand.NewPython(42), NP: pyrand.NewNumPy(42)}
	rows, err = Load(context.Background(), Params{Name: "sharegpt", Path: path, NumPrompts: 10}, env)
	if err != nil {
		t.Fatal(err)
	}
	// "" and "Hi"/"A" fall below 2 tokens; the other two stay, with exact counts.
	if len(rows) != 2 {
		t.Fatalf("sharegpt: %d rows, want 2: %+v", len(rows), rows)
	}
	for _, r := range rows {
		if r.PromptLen != len(tok.Encode(r.Text, true)) {
			t.Errorf("sharegpt row %q: PromptLen %d, encode gives %d", r.Text, r.PromptLen, len(tok.Encode(r.Text, true)))
		}
	}

	env = Env{Tok: tok, Py: pyrand.NewPython(42), NP: pyrand.NewNumPy(42)}
	rows, err = Load(context.Background(), Params{Name: "random-ids", NumPrompts: 2, RandomInputLen: 5, RandomRangeRatio: 1, TokenizePrompt: true}, env)
	if err != nil {
		t.Fatal(err)
	}
	off := pyrand.NewNumPy(42).RandInts(0, int64(tok.VocabSize()), 2)
	for i, r := range rows {
		for j, id := range r.IDs {
			if want := int((off[i] + int64(i+j)) % int64(tok.VocabSize())); id != want {
				t.Fatalf("random-ids row %d id %d = %d, want %d", i, j, id, want)
			}
		}
	}
}

func TestCancel(t *testing.T) {
	path := writeFile(t, "sg.json", makeShareGPT(2000))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Load(ctx, Params{Name: "sharegpt", Path: path, NumPrompts: 10}, testEnv(1, new(bytes.Buffer)))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// A failed ShareGPT download gives the offline advice once, after the
// hub's reason (which gives none).
func TestShareGPTDownloadAdviceOnce(t *testing.T) {
	hc := &hub.Client{Endpoint: "http://127.0.0.1:1", CacheDir: t.TempDir()}
	env := testEnv(1, new(bytes.Buffer))
	env.Fetch = func(ctx context.Context, repoType, repoID, file string) (string, error) {
		return hc.Download(ctx, repoType, repoID, file, "main")
	}
	_, err := Load(context.Background(), Params{Name: "sharegpt", NumPrompts: 1}, env)
	if err == nil || strings.Count(err.Error(), "--dataset-path") != 1 || strings.Contains(err.Error(), "instead") ||
		!strings.HasSuffix(err.Error(), "; pass --dataset-path with a local copy") {
		t.Errorf("error: %v", err)
	}
}
