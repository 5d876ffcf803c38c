// Package serverctl makes the control-plane calls to an inference server
// (spec §8): readiness, model and tokenizer discovery, cache flush, the
// profiler, /server_info. They send the auth header only; their failures
// are plain errors, which the caller words as it needs.
package serverctl

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"benchserve/internal/py/pyfmt"
	"benchserve/wire/neterr"
)

// Server is one inference server's control plane: Base is its URL (no
// trailing slash), Auth the headers every call carries (the API key),
// HTTP the client the calls go through.
type Server struct {
	Base string
	Auth http.Header
	HTTP *http.Client

	// models is /v1/models as a readiness check that polled it found it
	// (200), for FirstModel to read instead of asking again.
	models []byte
}

func (c *Server) get(ctx context.Context, path string, timeout time.Duration) (int, []byte, error) {
	return c.Do(ctx, http.MethodGet, c.Base+path, nil, c.Auth, timeout)
}

// Do makes one call to u with the headers h (and a JSON content type when
// there is a body), bounded by timeout when it is positive, and returns the
// status and up to 64 MiB of the body.
func (c *Server) Do(ctx context.Context, method, u string, body []byte, h http.Header, timeout time.Duration) (int, []byte, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return 0, nil, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, data, err
}

// WaitReady polls u once a second until it answers 200 or timeout passes,
// printing the reference tool's lines. An answer no retry can change (401
// or 403, a certificate that does not verify) ends the wait at once; the
// reference retries those until the timeout.
func (c *Server) WaitReady(ctx context.Context, out io.Writer, u string, timeout int) error {
	fmt.Fprintf(out, "Waiting up to %ds for %s to become ready...\n", timeout, Redact(u))
	start := time.Now()
	last := ""
	for {
		status, body, err := c.Do(ctx, http.MethodGet, u, nil, c.Auth, 5*time.Second)
		if err == nil && status == http.StatusOK {
			if u == c.Base+"/v1/models" {
				c.models = body
			}
			fmt.Fprintf(out, "Server ready in %.1fs.\n", time.Since(start).Seconds())
			return nil
		}
		if hopeless := readyHopeless(status, err, c.Auth); hopeless != "" {
			fmt.Fprintf(out, "Server at %s is not ready. Exiting.\n", Redact(u))
			return fmt.Errorf("the server at %s %s", Redact(u), hopeless)
		}
		if err == nil && c.v1Hint(status) != "" {
			// A base URL copied from an OpenAI client's settings: every
			// path gets a second /v1, and no wait fixes that.
			fmt.Fprintf(out, "Server at %s is not ready. Exiting.\n", Redact(u))
			return fmt.Errorf("--base-url ends in /v1: the paths are appended to it (%s answered 404); drop /v1", Redact(u))
		}
		if err != nil {
			last = shortErr(err)
		} else {
			last = fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
		}
		if time.Since(start) >= time.Duration(timeout)*time.Second || ctx.Err() != nil {
			fmt.Fprintf(out, "Server did not become ready within %ds timeout.\n", timeout)
			fmt.Fprintf(out, "Server at %s is not ready. Exiting.\n", Redact(u))
			return fmt.Errorf("server at %s is not ready after %ds (last attempt: %s); check --host/--port/--base-url, or raise --ready-check-timeout-sec",
				Redact(u), timeout, last)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// v1Hint says what a 404 means when the base URL ends in /v1 (every path
// gets a second one), "" otherwise.
func (c *Server) v1Hint(status int) string {
	if status != http.StatusNotFound || !strings.HasSuffix(c.Base, "/v1") {
		return ""
	}
	return "--base-url ends in /v1: the paths are appended to it; drop /v1"
}

// readyHopeless says why a readiness answer will not change by waiting,
// "" when it might.
func readyHopeless(status int, err error, auth http.Header) string {
	var cert *tls.CertificateVerificationError
	switch {
	case err != nil && errors.As(err, &cert):
		return "has a certificate that does not verify (" + shortErr(err) + "); pass --cacert with its CA, or --insecure"
	case err != nil:
		return ""
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		key := "no key was sent: set OPENAI_API_KEY (sent as \"Authorization: Bearer <key>\") or API_KEY (sent as is)"
		if auth.Get("Authorization") != "" {
			key = "the key from OPENAI_API_KEY or API_KEY was refused: check it"
		}
		return fmt.Sprintf("answered %d %s to the readiness check: %s; the check does not send --header, and --ready-check-timeout-sec 0 skips it",
			status, http.StatusText(status), key)
	}
	return ""
}

// FirstModel returns data[0].id of GET /v1/models, "" for an empty list:
// the answer the readiness check just had, if it polled /v1/models.
func (c *Server) FirstModel(ctx context.Context) (string, error) {
	status, body := http.StatusOK, c.models
	if body == nil {
		var err error
		if status, body, err = c.get(ctx, "/v1/models", 30*time.Second); err != nil {
			return "", errors.New(shortErr(err))
		}
	}
	c.models = nil
	if status != http.StatusOK {
		if hint := c.v1Hint(status); hint != "" {
			return "", fmt.Errorf("HTTP %d: %s; %s", status, oneLine(body, 200), hint)
		}
		return "", fmt.Errorf("HTTP %d: %s", status, oneLine(body, 200))
	}
	var v struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return "", fmt.Errorf("invalid JSON: %v", err)
	}
	if len(v.Data) == 0 {
		return "", nil
	}
	return v.Data[0].ID, nil
}

// TokenizerPath returns tokenizer_path or model_path from GET /model_info,
// "" when the server has neither; errors are ignored, as the reference does.
func (c *Server) TokenizerPath(ctx context.Context) string {
	status, body, err := c.get(ctx, "/model_info", 5*time.Second)
	if err != nil || status != http.StatusOK {
		return ""
	}
	var v struct {
		TokenizerPath string `json:"tokenizer_path"`
		ModelPath     string `json:"model_path"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	if v.TokenizerPath != "" {
		return v.TokenizerPath
	}
	return v.ModelPath
}

// Flush says how a server's prefix cache is emptied.
type Flush int

const (
	FlushPlain  Flush = iota // POST /flush_cache
	FlushSGLang              // POST /flush_cache?timeout=<seconds>
	FlushVLLM                // POST /reset_prefix_cache
)

// Flush empties the server's prefix cache (§8.2) the way style says,
// waiting up to timeout seconds (SGLang); a non-2xx answer is an error.
func (c *Server) Flush(ctx context.Context, style Flush, timeout float64) error {
	u := c.Base + "/flush_cache"
	switch style {
	case FlushVLLM:
		u = c.Base + "/reset_prefix_cache"
	case FlushSGLang:
		u += "?" + url.Values{"timeout": {pyfmt.Float(timeout)}}.Encode() // str(float), as requests sends it
	}
	status, body, err := c.Do(ctx, http.MethodPost, u, nil, c.Auth, 0)
	if err != nil {
		return fmt.Errorf("--flush-cache: POST %s: %s", Redact(u), shortErr(err))
	}
	if status < 200 || status > 299 {
		hint := ""
		if status == http.StatusNotFound && style == FlushVLLM {
			hint = "; vLLM serves /reset_prefix_cache only when started with VLLM_SERVER_DEV_MODE=1"
		}
		return fmt.Errorf("--flush-cache: POST %s answered %d %s: %s%s", Redact(u), status, http.StatusText(status), oneLine(body, 300), hint)
	}
	return nil
}

// Info returns the body of GET /server_info when it answers 200 with
// JSON, else nil.
func (c *Server) Info(ctx context.Context) []byte {
	status, body, err := c.serverInfo(ctx, 30*time.Second)
	if err != nil || status != http.StatusOK || !json.Valid(body) {
		return nil
	}
	return body
}

// serverInfo is GET /server_info, or /get_server_info when that answers
// 404: older SGLang served only the older name (the older guide
// names it).
func (c *Server) serverInfo(ctx context.Context, timeout time.Duration) (int, []byte, error) {
	status, body, err := c.get(ctx, "/server_info", timeout)
	if err == nil && status == http.StatusNotFound {
		return c.get(ctx, "/get_server_info", timeout)
	}
	return status, body, err
}

// AcceptLength reads internal_states[0].avg_spec_accept_length from a
// /server_info body (decode[0] first for a PD router), nil when absent.
func AcceptLength(info []byte) *float64 {
	if info == nil {
		return nil
	}
	var v struct {
		Decode         []json.RawMessage `json:"decode"`
		InternalStates []struct {
			Avg *float64 `json:"avg_spec_accept_length"`
		} `json:"internal_states"`
	}
	if json.Unmarshal(info, &v) != nil {
		return nil
	}
	if v.Decode != nil {
		if len(v.Decode) == 0 {
			return nil
		}
		return AcceptLength(v.Decode[0])
	}
	if len(v.InternalStates) == 0 {
		return nil
	}
	return v.InternalStates[0].Avg
}

// shortErr words a transport error as the requests' records do.
func shortErr(err error) string { return neterr.Describe(err) }

// oneLine returns b as one line of at most n bytes.
func oneLine(b []byte, n int) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// Redact hides a password in a URL (https://user:xxxxx@host), so that
// credentials in --base-url never reach the console or the result.
func Redact(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	return p.Redacted()
}
