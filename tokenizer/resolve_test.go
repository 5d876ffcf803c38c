package tokenizer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"benchserve/hub"
)

// useFakeEngine makes LoadFiles parse a fake tokenizer.json,
// {"fake": [special tokens...]}, and counts the parses.
func useFakeEngine(t *testing.T) *atomic.Int32 {
	t.Helper()
	var n atomic.Int32
	old := parseEngine
	parseEngine = func(data []byte, name string) (engine, error) {
		n.Add(1)
		var doc struct {
			Fake []string `json:"fake"`
		}
		if err := json.Unmarshal(data, &doc); err != nil || doc.Fake == nil {
			file := name // as ParseHF names the file
			if !strings.HasSuffix(name, ".json") {
				file = name + "/tokenizer.json"
			}
			return nil, errors.New(file + ": not a fake tokenizer.json")
		}
		return newFakeEngine(doc.Fake...), nil
	}
	t.Cleanup(func() { parseEngine = old })
	return &n
}

const fakeTokenizerJSON = `{"fake": ["<s>", "</s>", "<|eot|>"]}`

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustResolve(t *testing.T, name string, opt ResolveOptions) *Pretrained {
	t.Helper()
	tok, err := Resolve(context.Background(), name, opt)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := tok.(*Pretrained)
	if !ok {
		t.Fatalf("Resolve(%s) = %T, want *Pretrained", name, tok)
	}
	return p
}

func noEnv(string) string { return "" }

func TestResolveBuiltin(t *testing.T) {
	tok, err := Resolve(context.Background(), "gpt-4o", ResolveOptions{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tok.(*tiktoken); !ok || tok.Name() != "gpt-4o" {
		t.Errorf("Resolve(gpt-4o) = %T %q, want the built-in o200k_base", tok, tok.Name())
	}
}

// TestResolveLocalDir loads every companion file, each overriding the
// one before as transformers does.
func TestResolveLocalDir(t *testing.T) {
	useFakeEngine(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"tokenizer.json": fakeTokenizerJSON,
		"tokenizer_config.json": `{"bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": false},
			"eos_token": "</s>", "add_bos_token": true, "clean_up_tokenization_spaces": true,
			"additional_special_tokens": ["<x>"], "chat_template": "config:{{ messages[0].content }}"}`,
		"special_tokens_map.json": `{"eos_token": {"content": "<|eot|>"}, "additional_special_tokens": ["<x>", "<y>"]}`,
		"chat_template.jinja":     "jinja:{{ bos_token }}{{ messages[0].content }}{{ eos_token }}",
	})
	p := mustResolve(t, dir, ResolveOptions{Getenv: noEnv})
	if p.Name() != dir || p.BOSToken() != "<s>" || p.EOSToken() != "<|eot|>" {
		t.Errorf("name %q BOS %q EOS %q", p.Name(), p.BOSToken(), p.EOSToken())
	}
	if got := strings.Join(p.Config().Additional, ","); got != "<x>,<y>" {
		t.Errorf("additional_special_tokens = %s, want <x>,<y>", got)
	}
	fe := p.engine.(*fakeEngine)
	if len(fe.post) != 1 || fe.post[0] != "<s>|<|eot|>|true|false" || fe.decode != "skip=false,cleanUp=true" {
		t.Errorf("post %v decode %q", fe.post, fe.decode)
	}
	if ids := p.Encode("a", true); len(ids) != 2 || ids[0] != fe.special["<s>"] {
		t.Errorf("Encode with special tokens = %v, want BOS first", ids)
	}
	out, err := p.ApplyChatTemplate([]Message{{Role: "user", Content: "hi"}}, ChatOptions{})
	if err != nil || out != "jinja:<s>hi<|eot|>" {
		t.Errorf("template: %q, %v", out, err)
	}
	// Same directory again: the same tokenizer, not a second load.
	if again := mustResolve(t, dir, ResolveOptions{Getenv: noEnv}); again != p {
		t.Error("second Resolve loaded the tokenizer again")
	}
}

func TestResolveTokenizerFilePath(t *testing.T) {
	useFakeEngine(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"my-tokenizer.json":     fakeTokenizerJSON,
		"tokenizer_config.json": `{"bos_token": "<s>", "chat_template": [{"name": "default", "template": "D"}, {"name": "tool_use", "template": "T"}]}`,
	})
	p := mustResolve(t, filepath.Join(dir, "my-tokenizer.json"), ResolveOptions{Getenv: noEnv})
	if p.BOSToken() != "<s>" || strings.Join(p.ChatTemplateNames(), ",") != "default,tool_use" {
		t.Errorf("BOS %q templates %v", p.BOSToken(), p.ChatTemplateNames())
	}
	if len(p.engine.(*fakeEngine).post) != 0 {
		t.Error("post-processor replaced without add_bos_token/add_eos_token")
	}
}

func TestResolveLocalErrors(t *testing.T) {
	useFakeEngine(t)
	empty := t.TempDir()
	spm := t.TempDir()
	writeFiles(t, spm, map[string]string{"tokenizer.model": "x"})
	corrupt := t.TempDir()
	writeFiles(t, corrupt, map[string]string{"tokenizer.json": `{"model": `})
	badCfg := t.TempDir()
	writeFiles(t, badCfg, map[string]string{"tokenizer.json": fakeTokenizerJSON, "tokenizer_config.json": `{"bos_token": 7}`})
	noBOSInVocab := t.TempDir()
	writeFiles(t, noBOSInVocab, map[string]string{"tokenizer.json": `{"fake": []}`, "tokenizer_config.json": `{"bos_token": "<s>", "add_bos_token": true}`})

	for _, tt := range []struct{ name, want string }{
		{empty, "has no tokenizer.json"},
		{spm, "sentencepiece tokenizer.model but no tokenizer.json"},
		{filepath.Join(spm, "tokenizer.model"), "sentencepiece .model files are not supported"},
		{filepath.Join(corrupt, "tokenizer.json"), filepath.Join(corrupt, "tokenizer.json") + ": not a fake tokenizer.json"},
		{badCfg, filepath.Join(badCfg, "tokenizer_config.json") + ": bos_token: want a string or {\"content\": string}, got a number"},
		{noBOSInVocab, "tokenizer_config.json: add_bos_token/add_eos_token: post-processor: token \"<s>\" is not in the vocabulary"},
		{"./no/such/dir", "no such file or directory"},
		{"/abs/missing", "no such file or directory"},
		{"org/name/extra", "no such file or directory"},
		{"org/..name", "no such file or directory"},
	} {
		_, err := Resolve(context.Background(), tt.name, ResolveOptions{Getenv: noEnv})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Resolve(%s): %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

// fakeHubServer answers like the Hub's resolve endpoint, for the files it
// holds: "org/name/file" → body.
type fakeHubServer struct {
	*httptest.Server
	commit string

	mu     sync.Mutex
	files  map[string]string
	status int // when set, every answer
	log    []string
}

func newFakeHubServer(t *testing.T, files map[string]string) *fakeHubServer {
	h := &fakeHubServer{files: files, commit: strings.Repeat("ab", 20)}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.Close)
	return h
}

func (h *fakeHubServer) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.log = append(h.log, r.Method+" "+r.URL.Path)
	status := h.status
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 5) // org, name, resolve, rev, file
	var body string
	ok := false
	if len(parts) == 5 && parts[2] == "resolve" {
		body, ok = h.files[parts[0]+"/"+parts[1]+"/"+parts[4]]
	}
	h.mu.Unlock()
	switch {
	case status != 0:
		w.WriteHeader(status)
	case !ok:
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.Error(w, "Entry not found", http.StatusNotFound)
	default:
		sum := sha256.Sum256([]byte(body))
		w.Header().Set("X-Repo-Commit", h.commit)
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		if r.Method == http.MethodGet {
			fmt.Fprint(w, body)
		}
	}
}

func (h *fakeHubServer) requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.log...)
}

func TestResolveHub(t *testing.T) {
	parses := useFakeEngine(t)
	h := newFakeHubServer(t, map[string]string{
		"org/model/tokenizer.json":        fakeTokenizerJSON,
		"org/model/tokenizer_config.json": `{"bos_token": "<s>", "chat_template": "T{{ messages | length }}"}`,
		"org/model/chat_template.jinja":   "J{{ messages | length }}",
	})
	cache := t.TempDir()
	p := mustResolve(t, "org/model", ResolveOptions{Getenv: noEnv, Hub: &hub.Client{Endpoint: h.URL, CacheDir: cache}})
	if p.Name() != "org/model" || p.BOSToken() != "<s>" {
		t.Errorf("name %q BOS %q", p.Name(), p.BOSToken())
	}
	if out, err := p.ApplyChatTemplate(nil, ChatOptions{}); out != "J0" || err != nil {
		t.Errorf("template %q, %v: want chat_template.jinja's", out, err)
	}
	snap := filepath.Join(cache, "models--org--model", "snapshots", h.commit)
	for _, f := range []string{"tokenizer.json", "tokenizer_config.json", "chat_template.jinja"} {
		if _, err := os.Stat(filepath.Join(snap, f)); err != nil {
			t.Errorf("not in the hub cache: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(snap, "special_tokens_map.json")); err == nil {
		t.Error("a file the repo lacks is in the cache")
	}

	// Cached in the process: no more requests, no second parse.
	n := len(h.requests())
	if again := mustResolve(t, "org/model", ResolveOptions{Getenv: noEnv, Hub: &hub.Client{Endpoint: h.URL, CacheDir: cache}}); again != p {
		t.Error("second Resolve loaded again")
	}
	if len(h.requests()) != n || parses.Load() != 1 {
		t.Errorf("second Resolve made %d requests, %d parses", len(h.requests())-n, parses.Load())
	}

	// Offline, from the disk cache alone.
	h.mu.Lock()
	h.status = http.StatusInternalServerError
	h.mu.Unlock()
	off := mustResolve(t, "org/model", ResolveOptions{Getenv: noEnv, Hub: &hub.Client{Endpoint: h.URL, CacheDir: cache, Offline: true}})
	if off == p || off.BOSToken() != "<s>" || len(h.requests()) != n {
		t.Errorf("offline: same %v, BOS %q, %d requests", off == p, off.BOSToken(), len(h.requests())-n)
	}
	if out, _ := off.ApplyChatTemplate(nil, ChatOptions{}); out != "J0" {
		t.Errorf("offline template %q", out)
	}
}

func TestResolveHubErrors(t *testing.T) {
	useFakeEngine(t)
	h := newFakeHubServer(t, map[string]string{
		"org/spm/tokenizer.model":          "x",
		"org/badcfg/tokenizer.json":        fakeTokenizerJSON,
		"org/badcfg/tokenizer_config.json": `{"chat_template": 5}`,
	})
	locked := newFakeHubServer(t, nil)
	locked.status = http.StatusUnauthorized
	for _, tt := range []struct {
		name string
		hc   *hub.Client
		want []string
	}{
		{"org/spm", &hub.Client{Endpoint: h.URL, CacheDir: t.TempDir()},
			[]string{"tokenizer org/spm", "tokenizer.json", "not found", "not sentencepiece"}},
		{"org/badcfg", &hub.Client{Endpoint: h.URL, CacheDir: t.TempDir()},
			[]string{"tokenizer_config.json", "chat_template: want a string or a list"}},
		{"org/offline", &hub.Client{Endpoint: h.URL, CacheDir: t.TempDir(), Offline: true},
			[]string{"tokenizer org/offline", "file tokenizer.json", "HF_HUB_OFFLINE"}},
		{"org/private", &hub.Client{Endpoint: locked.URL, CacheDir: t.TempDir()},
			[]string{"tokenizer org/private", "401", "HF_TOKEN"}},
	} {
		_, err := Resolve(context.Background(), tt.name, ResolveOptions{Getenv: noEnv, Hub: tt.hc})
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Resolve(%s): %v, want it to contain %q", tt.name, err, w)
			}
		}
	}
}

// TestResolveConcurrent checks that concurrent Resolves of one name load
// it once (run with -race).
func TestResolveConcurrent(t *testing.T) {
	parses := useFakeEngine(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"tokenizer.json": fakeTokenizerJSON})
	var wg sync.WaitGroup
	toks := make([]Tokenizer, 32)
	for i := range toks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			toks[i], _ = Resolve(context.Background(), dir, ResolveOptions{Getenv: noEnv})
		}()
	}
	wg.Wait()
	for _, tok := range toks {
		if tok == nil || tok != toks[0] {
			t.Fatal("concurrent Resolves gave different tokenizers")
		}
	}
	if parses.Load() != 1 {
		t.Errorf("%d parses, want 1", parses.Load())
	}
}

func TestResolveRetriesAfterFailure(t *testing.T) {
	useFakeEngine(t)
	dir := t.TempDir()
	if _, err := Resolve(context.Background(), dir, ResolveOptions{Getenv: noEnv}); err == nil {
		t.Fatal("empty directory resolved")
	}
	writeFiles(t, dir, map[string]string{"tokenizer.json": fakeTokenizerJSON})
	if _, err := Resolve(context.Background(), dir, ResolveOptions{Getenv: noEnv}); err != nil {
		t.Errorf("after adding tokenizer.json: %v", err)
	}
}

// A Hugging Face tokenizer without a chat template gets the reference's
// two-line warning; one with a template, and a built-in encoding, none.
func TestNoChatTemplateWarning(t *testing.T) {
	useFakeEngine(t)
	base, chat := t.TempDir(), t.TempDir()
	writeFiles(t, base, map[string]string{"tokenizer.json": fakeTokenizerJSON, "tokenizer_config.json": `{"eos_token": "</s>"}`})
	writeFiles(t, chat, map[string]string{"tokenizer.json": fakeTokenizerJSON, "chat_template.jinja": "{{ messages[0].content }}"})
	want := "\nWARNING It is recommended to use the `Chat` or `Instruct` model for benchmarking.\n" +
		"Because when the tokenizer counts the output tokens, if there is gibberish, it might count incorrectly.\n\n"
	if got := NoChatTemplateWarning(mustResolve(t, base, ResolveOptions{Getenv: noEnv})); got != want {
		t.Errorf("base model: %q", got)
	}
	if got := NoChatTemplateWarning(mustResolve(t, chat, ResolveOptions{Getenv: noEnv})); got != "" {
		t.Errorf("chat model: %q", got)
	}
	builtin, err := Resolve(context.Background(), "o200k_base", ResolveOptions{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if got := NoChatTemplateWarning(builtin); got != "" {
		t.Errorf("built-in: %q", got)
	}
}
