package hub

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// headTimeout bounds the metadata request, as HF_HUB_ETAG_TIMEOUT's default.
const headTimeout = 10 * time.Second

// Download returns the local path of filename from the repo at revision,
// fetching it into the cache first if needed, as huggingface_hub's
// hf_hub_download does. repoType is "model" (or ""), "dataset" or "space";
// revision "" means "main". The path is the snapshot entry,
// <cache>/<type>s--<org>--<name>/snapshots/<commit>/<filename>.
//
// When the Hub cannot be asked (offline, no network, an HTTP error other
// than 404), a cached copy for refs/<revision> is returned instead. Errors
// are *Error values.
func (c *Client) Download(ctx context.Context, repoType, repoID, filename, revision string) (string, error) {
	if repoType == "" {
		repoType = "model"
	}
	if revision == "" {
		revision = "main"
	}
	f := fileRef{repoType, repoID, filename, revision}
	if err := checkRepo(repoType, repoID); err != nil {
		return "", f.fail(nil, "%v", err)
	}
	if err := checkPath("file name", filename); err != nil {
		return "", f.fail(nil, "%v", err)
	}
	if err := checkPath("revision", revision); err != nil {
		return "", f.fail(nil, "%v", err)
	}
	storage := filepath.Join(c.cacheDir(), repoFolder(repoType, repoID))

	// A commit's files never change, so a cached one needs no request.
	if commitRE().MatchString(revision) {
		if p := pointerPath(storage, revision, filename); exists(p) {
			return p, nil
		}
	}
	if c.Offline {
		if p, ok := cachedPointer(storage, revision, filename); ok {
			return p, nil
		}
		return "", f.fail(ErrNotCached, "not in the local cache and HF_HUB_OFFLINE is set")
	}

	fileURL := c.fileURL(f)
	meta, err := c.head(ctx, f, fileURL)
	if err != nil {
		if errors.Is(err, ErrNotFound) || ctx.Err() != nil {
			return "", err
		}
		if p, ok := cachedPointer(storage, revision, filename); ok {
			return p, nil
		}
		return "", err
	}

	if revision != meta.commit {
		if err := writeRef(storage, revision, meta.commit); err != nil {
			return "", f.fail(nil, "cache: %v", err)
		}
	}
	pointer := pointerPath(storage, meta.commit, filename)
	if exists(pointer) {
		return pointer, nil
	}

	blob := filepath.Join(storage, "blobs", meta.etag)
	unlock := lockPath(blob)
	defer unlock()
	if exists(pointer) { // made while we waited
		return pointer, nil
	}
	if !exists(blob) {
		if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
			return "", f.fail(nil, "cache: %v", err)
		}
		// A redirect to another host is a CDN, which must not see the token.
		auth := sameHost(fileURL, meta.location)
		if err := c.fetch(ctx, f, meta.location, auth, blob, meta.size); err != nil {
			return "", err
		}
	}
	if err := linkBlob(blob, pointer); err != nil {
		return "", f.fail(nil, "cache: %v", err)
	}
	return pointer, nil
}

// fileURL is huggingface_hub's hf_hub_url.
func (c *Client) fileURL(f fileRef) string {
	prefix := ""
	if f.repoType != "model" {
		prefix = f.repoType + "s/"
	}
	return c.endpoint() + "/" + prefix + f.repoID + "/resolve/" + quote(f.revision, false) + "/" + quote(f.filename, true)
}

// quote is Python's urllib.parse.quote: every byte but letters, digits and
// "_.-~" is %-escaped, and "/" too unless keepSlash.
func quote(s string, keepSlash bool) string {
	const hex = "0123456789ABCDEF"
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9',
			b == '_', b == '.', b == '-', b == '~', b == '/' && keepSlash:
			sb.WriteByte(b)
		default:
			sb.WriteByte('%')
			sb.WriteByte(hex[b>>4])
			sb.WriteByte(hex[b&15])
		}
	}
	return sb.String()
}

func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Scheme == ub.Scheme && strings.EqualFold(ua.Host, ub.Host)
}

// metadata is what the Hub's answer to HEAD says about a file.
type metadata struct {
	commit, etag string
	// size is -1 when unknown.
	size int64
	// location is where to GET the bytes: the resolve URL, or the CDN URL
	// it redirects to.
	location string
}

// head asks the Hub about a file without following redirects to other
// hosts, so the X-Linked-* headers of an LFS file's redirect are seen.
// Relative redirects (a renamed repo) are followed.
func (c *Client) head(ctx context.Context, f fileRef, fileURL string) (metadata, error) {
	ctx, cancel := context.WithTimeout(ctx, headTimeout)
	defer cancel()
	hc := c.httpClient()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	target := fileURL
	for range 10 {
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, target, nil)
		if err != nil {
			return metadata{}, f.fail(nil, "bad URL %s: %v", target, err)
		}
		c.setHeaders(req.Header, true)
		resp, err := hc.Do(req)
		if err != nil {
			return metadata{}, f.unreachable(target, err)
		}
		resp.Body.Close()

		switch {
		case resp.StatusCode >= 300 && resp.StatusCode < 400:
			loc, err := req.URL.Parse(resp.Header.Get("Location"))
			if err != nil || resp.Header.Get("Location") == "" {
				return metadata{}, f.fail(nil, "HEAD %s: %d redirect with a bad Location %q", target, resp.StatusCode, resp.Header.Get("Location"))
			}
			if rel, _ := url.Parse(resp.Header.Get("Location")); rel.Host == "" {
				target = loc.String()
				continue
			}
			return f.readMetadata(target, resp, loc.String(), false)
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			return f.readMetadata(target, resp, target, true)
		default:
			return metadata{}, f.statusError(http.MethodHead, target, resp.StatusCode, resp.Header, c.Token != "")
		}
	}
	return metadata{}, f.fail(nil, "HEAD %s: too many redirects", fileURL)
}

func (f fileRef) readMetadata(target string, resp *http.Response, location string, direct bool) (metadata, error) {
	m := metadata{commit: resp.Header.Get("X-Repo-Commit"), location: location, size: -1}
	m.etag = resp.Header.Get("X-Linked-Etag")
	if m.etag == "" {
		m.etag = resp.Header.Get("ETag")
	}
	m.etag = strings.Trim(strings.TrimPrefix(m.etag, "W/"), `"`)
	size := resp.Header.Get("X-Linked-Size")
	if size == "" && direct {
		// A redirect's Content-Length is that of its own body.
		size = resp.Header.Get("Content-Length")
	}
	if n, err := strconv.ParseInt(size, 10, 64); err == nil && n >= 0 {
		m.size = n
	}
	switch {
	case m.commit == "":
		return m, f.fail(nil, "HEAD %s: no X-Repo-Commit header in the answer: is this a Hugging Face Hub?", target)
	case m.etag == "":
		return m, f.fail(nil, "HEAD %s: no ETag header in the answer: is this a Hugging Face Hub?", target)
	case !safeName(m.commit) || !safeName(m.etag):
		return m, f.fail(nil, "HEAD %s: unusable commit %q or ETag %q", target, m.commit, m.etag)
	}
	return m, nil
}

func (c *Client) setHeaders(h http.Header, auth bool) {
	h.Set("User-Agent", "benchserve")
	// Sizes must be those of the bytes stored, not of a compressed body.
	h.Set("Accept-Encoding", "identity")
	if auth && c.Token != "" {
		h.Set("Authorization", "Bearer "+c.Token)
	}
}
