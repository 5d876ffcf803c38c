package tokenizer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"benchserve/hub"
)

// ResolveOptions says where Resolve finds tokenizers that are not local.
type ResolveOptions struct {
	// Hub downloads from the Hugging Face Hub into its cache (which it
	// reads first); nil means hub.FromEnv(Getenv).
	Hub *hub.Client
	// Getenv reads SGLANG_USE_MODELSCOPE and ModelScope's MODELSCOPE_CACHE,
	// MODELSCOPE_DOMAIN and HF_HUB_OFFLINE (the command's environment; nil
	// is an empty one: a library never reads the process's own).
	Getenv func(string) string
	// HTTP is the client for ModelScope; nil means one with the proxy
	// variables Getenv reads.
	HTTP *http.Client
	// Revision is the hub revision; "" means the default branch.
	Revision string
}

// Resolve returns the tokenizer that --tokenizer or --model name selects,
// looking in this order:
//
//  1. a built-in encoding (Load: o200k_base, cl100k_base, OpenAI model names);
//  2. a local directory holding tokenizer.json, with its optional
//     companion files (tokenizer_config.json, special_tokens_map.json,
//     chat_template.jinja, chat_template.json);
//  3. a path to a tokenizer.json file, whose directory supplies them;
//  4. a hub id ("org/name"): the same files from the Hugging Face Hub
//     through its cache, or from ModelScope when SGLANG_USE_MODELSCOPE is
//     true.
//
// Sentencepiece .model files are refused. A tokenizer is loaded once per
// process and source; later calls share it.
func Resolve(ctx context.Context, name string, opt ResolveOptions) (Tokenizer, error) {
	if name == "" {
		return nil, errors.New("tokenizer: no name given")
	}
	if lookup(name) != nil {
		return Load(name)
	}
	if opt.Getenv == nil {
		opt.Getenv = func(string) string { return "" }
	}
	key, load, err := locate(name, opt)
	if err != nil {
		return nil, err
	}
	return resolved.get(ctx, key, func() (Tokenizer, error) { return load(ctx) })
}

// locate decides where name comes from, returning the cache key and the
// loader.
func locate(name string, opt ResolveOptions) (string, func(context.Context) (Tokenizer, error), error) {
	if strings.HasSuffix(name, ".model") {
		return "", nil, fmt.Errorf("tokenizer %s: sentencepiece .model files are not supported: pass the directory or hub id that has the tokenizer.json", name)
	}
	st, err := os.Stat(name)
	switch {
	case err == nil && st.IsDir():
		abs, _ := filepath.Abs(name)
		return "dir:" + abs, func(context.Context) (Tokenizer, error) { return loadDir(name) }, nil
	case err == nil:
		abs, _ := filepath.Abs(name)
		return "file:" + abs, func(context.Context) (Tokenizer, error) {
			f := filesInDir(filepath.Dir(name))
			f.Tokenizer = name
			return LoadFiles(name, f)
		}, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", nil, fmt.Errorf("tokenizer %s: %v", name, err)
	case !hubID().MatchString(name) || strings.Contains(name, "..") || strings.Contains(name, "--"):
		return "", nil, fmt.Errorf("tokenizer %s: no such file or directory, and not a hub id (org/name)", name)
	}

	if isTrue(opt.Getenv("SGLANG_USE_MODELSCOPE")) {
		ms := newModelScope(opt)
		rev := opt.Revision
		if rev == "" {
			rev = modelScopeRevision
		}
		key := fmt.Sprintf("modelscope:%s|%s|%v|%s|%s", ms.endpoint, ms.cacheDir, ms.offline, rev, name)
		return key, func(ctx context.Context) (Tokenizer, error) { return loadModelScope(ctx, ms, name, rev) }, nil
	}
	hc := opt.Hub
	if hc == nil {
		hc = hub.FromEnv(opt.Getenv)
	}
	key := fmt.Sprintf("hub:%s|%s|%v|%s|%s", hc.Endpoint, hc.CacheDir, hc.Offline, opt.Revision, name)
	return key, func(ctx context.Context) (Tokenizer, error) { return loadHub(ctx, hc, name, opt.Revision) }, nil
}

// hubID is a repo id as the Hub accepts it: a name, or org/name, of
// letters, digits, '-', '_' and '.'.
var hubID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$`)
})

func loadDir(dir string) (Tokenizer, error) {
	f := filesInDir(dir)
	if _, err := os.Stat(f.Tokenizer); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "tokenizer.model")); serr == nil {
			return nil, fmt.Errorf("tokenizer %s: the directory has a sentencepiece tokenizer.model but no tokenizer.json, and only tokenizer.json is supported", dir)
		}
		return nil, fmt.Errorf("tokenizer %s: the directory has no tokenizer.json", dir)
	}
	return LoadFiles(dir, f)
}

// optionalFiles are fetched from a hub when present; a repo without one
// is fine. chat_template.json is read as in a local directory, so that a
// hub id and its downloaded snapshot give the same tokenizer.
var optionalFiles = []string{fileConfig, fileSpecialMap, fileChatJinja, fileChatJSON}

// loadHub fetches the tokenizer files of repo through the hub cache.
func loadHub(ctx context.Context, hc *hub.Client, repo, revision string) (Tokenizer, error) {
	tokPath, err := hc.Download(ctx, "model", repo, fileTokenizer, revision)
	if err != nil {
		if errors.Is(err, hub.ErrNotFound) && !hubMissingRepo(err) {
			return nil, fmt.Errorf("tokenizer %s: %w (only tokenizer.json is supported, not sentencepiece tokenizer.model)", repo, err)
		}
		return nil, fmt.Errorf("tokenizer %s: %w", repo, err)
	}
	f := Files{Tokenizer: tokPath}
	for _, name := range optionalFiles {
		p, err := hc.Download(ctx, "model", repo, name, revision)
		switch {
		case err == nil:
			f.set(name, p)
		case errors.Is(err, hub.ErrNotFound) || errors.Is(err, hub.ErrNotCached):
			// Optional: absent from the repo, or (offline) never fetched.
		default:
			return nil, fmt.Errorf("tokenizer %s: %w", repo, err)
		}
	}
	return LoadFiles(repo, f)
}

// hubMissingRepo reports whether a 404 is for the repo or revision rather
// than the file.
func hubMissingRepo(err error) bool {
	return !strings.Contains(err.Error(), "has no file")
}

// set records the local path of a companion file by its name.
func (f *Files) set(name, path string) {
	switch name {
	case fileTokenizer:
		f.Tokenizer = path
	case fileConfig:
		f.Config = path
	case fileSpecialMap:
		f.SpecialTokensMap = path
	case fileChatJinja:
		f.ChatTemplateJinja = path
	case fileChatJSON:
		f.ChatTemplateJSON = path
	}
}

// isTrue reads a boolean environment variable as SGLang and
// huggingface_hub do: 1, true, yes or on, any case.
func isTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// resolveCache holds the tokenizers loaded in this process. Concurrent
// Resolves of the same key wait for one load; a failed load is forgotten,
// so a later call tries again.
type resolveCache struct {
	mu sync.Mutex
	m  map[string]*resolveEntry
}

type resolveEntry struct {
	done chan struct{}
	tok  Tokenizer
	err  error
}

var resolved resolveCache

func (c *resolveCache) get(ctx context.Context, key string, load func() (Tokenizer, error)) (Tokenizer, error) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*resolveEntry{}
	}
	e, ok := c.m[key]
	if !ok {
		e = &resolveEntry{done: make(chan struct{})}
		c.m[key] = e
		c.mu.Unlock()
		e.tok, e.err = load()
		if e.err != nil {
			c.mu.Lock()
			delete(c.m, key)
			c.mu.Unlock()
		}
		close(e.done)
		return e.tok, e.err
	}
	c.mu.Unlock()
	select {
	case <-e.done:
		return e.tok, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
