package tokenizer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"benchserve/hub"
	"benchserve/internal/netproxy"
)

// ModelScope, as the modelscope library's model_file_download uses it:
// the file list at
// {endpoint}/api/v1/models/{org}/{name}/repo/files?Revision=..&Recursive=true
// gives each file's commit and SHA-256; a file is fetched from
// {endpoint}/api/v1/models/{org}/{name}/repo?Revision=..&FilePath=.. and
// cached as {MODELSCOPE_CACHE or ~/.cache/modelscope/hub}/models/{org}/{name}/{path},
// with '.' in the name written "___". The library's own index of the cache
// (.msc, a pickle) is not written: it re-downloads our files once, and we
// check its files by their SHA-256.
const (
	modelScopeRevision      = "master"
	modelScopeDefaultDomain = "www.modelscope.cn"
	modelScopeTempDir       = "._____temp"
	modelScopeListTimeout   = 60 * time.Second
	modelScopeMaxFile       = 1 << 30
)

type modelScope struct {
	endpoint string // scheme://host
	cacheDir string // the models root: .../hub/models
	offline  bool
	http     *http.Client
}

func newModelScope(opt ResolveOptions) *modelScope {
	ms := &modelScope{http: opt.HTTP}
	if ms.http == nil { // the proxy variables as Getenv reads them
		ms.http = &http.Client{Transport: netproxy.Transport(netproxy.FromEnv(opt.Getenv))}
	}
	domain := strings.TrimRight(opt.Getenv("MODELSCOPE_DOMAIN"), "/")
	switch {
	case domain == "":
		ms.endpoint = "https://" + modelScopeDefaultDomain
	case strings.Contains(domain, "://"):
		ms.endpoint = domain
	default:
		ms.endpoint = "https://" + domain
	}
	root := opt.Getenv("MODELSCOPE_CACHE")
	if root == "" {
		home := opt.Getenv("HOME")
		if runtime.GOOS == "windows" {
			home = opt.Getenv("USERPROFILE")
		}
		root = filepath.Join(home, ".cache", "modelscope", "hub")
	}
	ms.cacheDir = filepath.Join(root, "models")
	// The reference passes local_files_only=HF_HUB_OFFLINE to ModelScope.
	ms.offline = isTrue(opt.Getenv("HF_HUB_OFFLINE"))
	return ms
}

// msFile is one entry of the file list.
type msFile struct {
	Path     string `json:"Path"`
	Revision string `json:"Revision"`
	Sha256   string `json:"Sha256"`
	Size     int64  `json:"Size"`
	Type     string `json:"Type"`
}

// loadModelScope fetches repo's tokenizer files into the ModelScope cache.
func loadModelScope(ctx context.Context, ms *modelScope, repo, revision string) (Tokenizer, error) {
	org, name, ok := strings.Cut(repo, "/")
	if !ok {
		return nil, fmt.Errorf("tokenizer %s: ModelScope model ids are org/name", repo)
	}
	dir := filepath.Join(ms.cacheDir, org, strings.ReplaceAll(name, ".", "___"))
	wanted := append([]string{fileTokenizer}, optionalFiles...)

	var f Files
	if ms.offline {
		for _, w := range wanted {
			if p := filepath.Join(dir, w); isFile(p) {
				f.set(w, p)
			}
		}
		if f.Tokenizer == "" {
			return nil, fmt.Errorf("tokenizer %s: ModelScope: %s is not in the cache (%s) and HF_HUB_OFFLINE is set", repo, fileTokenizer, dir)
		}
		return LoadFiles(repo, f)
	}

	files, err := ms.list(ctx, repo, revision)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: ModelScope: %v", repo, err)
	}
	byPath := map[string]msFile{}
	for _, file := range files {
		if file.Type != "tree" {
			byPath[file.Path] = file
		}
	}
	if _, ok := byPath[fileTokenizer]; !ok {
		return nil, fmt.Errorf("tokenizer %s: ModelScope: the repo has no %s at revision %s (only tokenizer.json is supported, not sentencepiece tokenizer.model)", repo, fileTokenizer, revision)
	}
	for _, w := range wanted {
		file, ok := byPath[w]
		if !ok {
			continue
		}
		p, err := ms.fetch(ctx, repo, revision, dir, file)
		if err != nil {
			return nil, fmt.Errorf("tokenizer %s: ModelScope: file %s: %v", repo, w, err)
		}
		f.set(w, p)
	}
	return LoadFiles(repo, f)
}

// list returns the repo's files at revision.
func (ms *modelScope) list(ctx context.Context, repo, revision string) ([]msFile, error) {
	ctx, cancel := context.WithTimeout(ctx, modelScopeListTimeout)
	defer cancel()
	u := fmt.Sprintf("%s/api/v1/models/%s/repo/files?Revision=%s&Recursive=true", ms.endpoint, repo, url.QueryEscape(revision))
	resp, err := ms.get(ctx, u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %v", u, err)
	}
	var answer struct {
		Code    any    `json:"Code"`
		Message string `json:"Message"`
		Data    struct {
			Files []msFile `json:"Files"`
		} `json:"Data"`
	}
	jerr := json.Unmarshal(body, &answer)
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("GET %s: %s: the model is private or gated: log in with the modelscope CLI and download it, then pass the local directory", u, resp.Status)
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("GET %s: %s: no such model or revision %q%s", u, resp.Status, revision, message(answer.Message))
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: %s%s", u, resp.Status, message(answer.Message))
	case jerr != nil:
		return nil, fmt.Errorf("GET %s: the answer is not ModelScope's file list: %v", u, jerr)
	case answer.Code != nil && fmt.Sprint(answer.Code) != "200":
		return nil, fmt.Errorf("GET %s: code %v%s", u, answer.Code, message(answer.Message))
	}
	return answer.Data.Files, nil
}

func message(m string) string {
	if m == "" {
		return ""
	}
	return ": " + m
}

// fetch returns the cached copy of file, downloading it when the cache
// has none with the listed SHA-256 (or, without one, the listed size). The
// download goes through the library's temporary folder, where a partial
// file is kept and resumed by the next try, as the library does.
func (ms *modelScope) fetch(ctx context.Context, repo, revision, dir string, file msFile) (string, error) {
	if strings.Contains(file.Path, "..") || filepath.IsAbs(file.Path) {
		return "", fmt.Errorf("unsafe path %q in the file list", file.Path)
	}
	target := filepath.Join(dir, filepath.FromSlash(file.Path))
	if cachedMatches(target, file) {
		return target, nil
	}
	q := url.Values{"Revision": {revision}, "FilePath": {file.Path}}
	u := fmt.Sprintf("%s/api/v1/models/%s/repo?%s", ms.endpoint, repo, q.Encode())
	org, name, _ := strings.Cut(repo, "/")
	opt := hub.FetchOptions{
		Header:  http.Header{"User-Agent": {"benchserve"}},
		Size:    -1,
		Partial: filepath.Join(ms.cacheDir, modelScopeTempDir, org, name, filepath.FromSlash(file.Path)),
		Limit:   modelScopeMaxFile,
	}
	if file.Sha256 != "" {
		// The SHA-256 decides, as before any size check.
		opt.Verify = func(p string) error {
			sum, n, err := fileSHA256(p)
			if err != nil {
				return fmt.Errorf("cache: %v", err)
			}
			if !strings.EqualFold(sum, file.Sha256) {
				return fmt.Errorf("GET %s: got %d bytes with SHA-256 %s, the file list says %s: the download is corrupt, try again", u, n, sum, file.Sha256)
			}
			return nil
		}
	} else if file.Size > 0 {
		opt.Size = file.Size
	}
	err := hub.Fetch(ctx, ms.http, u, target, opt)
	if err == nil {
		return target, nil
	}
	var fe *hub.FetchError
	if !errors.As(err, &fe) {
		return "", err
	}
	switch fe.Step {
	case hub.FetchFile:
		return "", fmt.Errorf("cache: %v", fe.Err)
	case hub.FetchConnect:
		return "", fmt.Errorf("%v; a local copy of the tokenizer can be passed instead", fe)
	case hub.FetchBody:
		return "", fmt.Errorf("GET %s: %v", u, fe.Err)
	case hub.FetchSize:
		return "", fmt.Errorf("GET %s: got %d bytes, the file list says %d", u, fe.Got, fe.Want)
	}
	return "", fe // FetchURL, FetchStatus, FetchRange and FetchVerify say it already
}

func (ms *modelScope) get(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("bad URL %s: %v", u, err)
	}
	req.Header.Set("User-Agent", "benchserve")
	resp, err := ms.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("cannot reach %s: %v; a local copy of the tokenizer can be passed instead", u, err)
	}
	return resp, nil
}

// cachedMatches reports whether the cached file at p is the listed one.
func cachedMatches(p string, file msFile) bool {
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	if file.Sha256 == "" {
		return file.Size > 0 && st.Size() == file.Size
	}
	if file.Size > 0 && st.Size() != file.Size {
		return false
	}
	sum, _, err := fileSHA256(p)
	return err == nil && strings.EqualFold(sum, file.Sha256)
}

// fileSHA256 returns the hex SHA-256 of the file at p and its length.
func fileSHA256(p string) (string, int64, error) {
	fh, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer fh.Close()
	h := sha256.New()
	n, err := io.Copy(h, fh)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
