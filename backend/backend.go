// Package backend sends one benchmark request to an inference server and
// reads the reply into a record.Record, one request function per backend of
// the reference tool (spec §2): the same body, key for key, and the same
// rules for TTFT, ITL, latency and output length.
package backend

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"benchserve/internal/hist"
	"benchserve/internal/py/pyjson"
	"benchserve/wire/http1"
)

// Options are the run-wide request settings, from the flags.
type Options struct {
	Stream              bool    // !--disable-stream
	IgnoreEOS           bool    // !--disable-ignore-eos
	Temperature         float64 // native backend only, like --top-p
	TopP                float64 // sent only when < 1: set it to 1.0 (the flag's default) for none
	ReturnLogprob       bool
	TopLogprobsNum      int
	TokenIDsLogprob     []int // nil: not given
	LogprobStartLen     int
	ReturnRoutedExperts bool
	// CacheReport reads the servers' cached-token figures (--cache-report);
	// the body keys it needs come in through Input.Extra.
	CacheReport bool
	// Timeout bounds each request; 0 means the reference tool's 6 hours.
	Timeout time.Duration
	// Counter, when set, counts the tokens of each successful reply's text
	// as the request ends (Record.TextTokens, TextCounted): the metrics'
	// retokenized output count, taken while the text is at hand. Use the
	// tokenizer the metrics are given.
	// ContinuousUsage asks streamed OpenAI requests for the usage in
	// every chunk (stream_options.continuous_usage_stats), so that each
	// chunk says how many tokens it carried.
	ContinuousUsage bool
	Counter         Counter
	// Runaway, when set, is called once for each reply that runs past
	// twice its requested length (and 64 tokens more than it), with the
	// requested length and the chunks (tokens, for /generate) so far: a
	// server that ignores the length limit, whose replies may run on for
	// as long as --request-timeout allows.
	Runaway func(requested, got int)
	// DropText leaves the text out of the records Counter has counted,
	// except for the backends with Spec.ChunkLens, whose text the metrics
	// may retokenize chunk by chunk. Records then hold
	// little more than their gaps, 4 bytes a token.
	DropText bool
	// DeferCount leaves the counting (and the dropping) of a reply's text
	// to the caller, who calls Client.CountText once the request's
	// concurrency slot is free, so that the count never delays the next
	// send; Do still counts when it needs the count itself (a server that
	// stopped early without saying how many tokens it sent).
	DeferCount bool
}

// Counter counts the tokens of a text, as
// len(tokenizer.encode(text, add_special_tokens=False)).
type Counter interface {
	Count(text string) int
}

// DefaultTimeout is the reference tool's total limit per request.
const DefaultTimeout = 6 * time.Hour

// Input is one request.
type Input struct {
	// Text is the prompt. IDs replaces it with token ids (native backend:
	// the body then has "input_ids"). Messages, when set, is a prompt that is
	// a list (OpenAI messages or multi-turn history), already encoded as
	// json.dumps writes it; the chat backend sends it as "messages", the
	// others as their prompt, as the reference tool does with a list prompt.
	Text     string
	IDs      []int
	Messages []byte

	PromptLen int
	OutputLen int
	Model     string
	// LoRA is the adapter picked for this request, "" for none.
	LoRA string
	// Images are data URIs.
	Images []string
	// Docs are the documents a rerank backend scores Text against.
	Docs []string
	// Audio is the file a transcription backend uploads.
	Audio *Audio
	// Extra is the merged extra request body; nil for none.
	Extra *pyjson.Object
	// RoutingKey, when set, goes out as the X-SMG-Routing-Key header.
	RoutingKey string
	// ID, when set, is the request's id: sent as X-Request-Id (unless
	// the headers already have one, or the backend sends no headers) and
	// kept in the record unless the server answers with an id of its own.
	ID string
	// Gate, when set and closed before the request is written, keeps it
	// from being sent (an interrupt that came while it waited to go out).
	Gate *http1.Gate
	// Cancel: the client cancels the request on purpose when its reply
	// has not ended CancelAfter after it was written
	// (--request-cancellation-rate; see http1.Send).
	Cancel      bool
	CancelAfter time.Duration
	// Probe: a consistency probe (--consistency-probes), sent at
	// temperature 0 whatever the flags and the extra body say, its text
	// kept whatever Options.DropText says.
	Probe bool
	// Body, when set, is sent as it is instead of the body the protocol
	// builds from the fields above (a replayed plan's).
	Body []byte
	// Header, when set, is added to the client's headers, replacing those
	// of the same names (a replayed plan's headers).
	Header http.Header
}

// RoutingKeyHeader carries Input.RoutingKey.
const RoutingKeyHeader = "X-SMG-Routing-Key"

// Client sends requests for one backend.
type Client struct {
	spec   Spec
	proto  *protocol // spec.proto
	url    string
	opt    Options
	header http.Header // read-only, shared by all requests
	host   string      // a custom Host header, which net/http takes from Request.Host
	http   *http.Client
	rt     http.RoundTripper // http's: an http1.Transport, or another the requests go through
	// ownID: the headers carry no X-Request-Id of their own.
	ownID bool

	mu     sync.Mutex
	delays hist.H // read delays of every request since ResetTiming
}

// LateRead is how long after its newest bytes arrived a read may come
// before the chunks it bunches together count as bunched by the client
// (record.Record.LateBunched).
const LateRead = time.Millisecond

// ReadDelays returns the delays of the kernel-timed reads of every
// request since ResetTiming: from the kernel's receive time of a read's
// newest bytes to the read.
func (c *Client) ReadDelays() hist.H {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.delays
}

// ResetTiming forgets the read delays gathered so far (those of the
// warmup, say).
func (c *Client) ResetTiming() {
	c.mu.Lock()
	c.delays.Reset()
	c.mu.Unlock()
}

func (c *Client) addDelays(f *hist.Few) {
	if f.Count() == 0 {
		return
	}
	c.mu.Lock()
	c.delays.AddFew(f)
	c.mu.Unlock()
}

// New returns a client for the backend name. header holds the auth and
// custom headers (ignored by a backend that sends none: trt); client nil
// means NewHTTPClient(ClientOptions{KeepAlive: true}). Requests go through
// client's Transport: the http1 state machine and its receivers when it is
// an http1.Transport, else that RoundTripper (see http1.Exchange.Start).
func New(name, baseURL string, opt Options, header http.Header, client *http.Client) (*Client, error) {
	s, ok := Lookup(name)
	switch {
	case !ok:
		return nil, fmt.Errorf("--backend %s: unknown backend (choose from %s)", name, strings.Join(Names(), ", "))
	case !s.Implemented:
		return nil, fmt.Errorf("--backend %s: not implemented by the reference tool either (it raises NotImplementedError)", name)
	}
	if client == nil {
		client = NewHTTPClient(ClientOptions{KeepAlive: true})
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	c := &Client{spec: s, proto: s.proto, url: baseURL + s.Path(), opt: opt, http: client, rt: client.Transport, header: http.Header{}}
	if c.rt == nil {
		c.rt = http.DefaultTransport
	}
	if s.Headers {
		for key, vals := range header {
			c.header[http.CanonicalHeaderKey(key)] = append([]string(nil), vals...)
		}
	}
	// aiohttp sets the JSON content type only when the caller has not;
	// a form's names its boundary, so it is the protocol's.
	if s.proto.contentType != "" {
		c.header.Set("Content-Type", s.proto.contentType)
	} else if c.header.Get("Content-Type") == "" {
		c.header.Set("Content-Type", "application/json")
	}
	if h := c.header.Get("Host"); h != "" {
		c.host = h
		c.header.Del("Host")
	}
	c.ownID = s.Headers && c.header.Get(requestIDHeader) == ""
	return c, nil
}

// Name is the backend name.
func (c *Client) Name() string { return c.spec.Name }

// Spec is the backend's row of the table.
func (c *Client) Spec() Spec { return c.spec }

// URL is the API URL requests go to.
func (c *Client) URL() string { return c.url }

// Preconnect opens n keep-alive connections to the server at once (with
// their TLS handshakes, for https) and keeps them for the requests to
// come: the first requests of a run then find a connection ready instead
// of each connecting on its own (at high concurrency the client connects
// one after another, and a request's TTFT, which like the reference's
// starts before connecting, counts the wait). It does nothing without
// keep-alive or with a client not made by NewHTTPClient. It returns how
// many connections it opened and the first connect error.
func (c *Client) Preconnect(ctx context.Context, n int) (int, error) {
	t, ok := c.rt.(*http1.Transport)
	if !ok {
		return 0, nil
	}
	u, err := url.Parse(c.url)
	if err != nil {
		return 0, nil
	}
	return t.Preconnect(ctx, &http.Request{URL: u}, n)
}

// CloseIdleConnections closes the client's idle keep-alive connections.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// requestIDHeader carries Input.ID.
const requestIDHeader = "X-Request-Id"

// headerFor returns the headers of one request.
func (c *Client) headerFor(in *Input) http.Header {
	route := in.RoutingKey != "" && c.spec.Headers && !c.proto.noRoutingKey
	id := in.ID != "" && c.ownID
	if !route && !id && in.Header == nil {
		return c.header
	}
	h := make(http.Header, len(c.header)+len(in.Header)+2)
	for k, v := range c.header {
		h[k] = v // shared, read-only
	}
	for k, v := range in.Header {
		h[http.CanonicalHeaderKey(k)] = v // shared, read-only
	}
	if route {
		h.Set(RoutingKeyHeader, in.RoutingKey)
	}
	if id {
		h.Set(requestIDHeader, in.ID)
	}
	return h
}

// Planned is what the request in would carry, without sending it: the
// path after the base URL, the headers (the X-Request-Id each send adds
// is not among them) and the body, byte for byte. A plan file
// (--save-plan) keeps them.
func (c *Client) Planned(in *Input) (path string, h http.Header, body []byte) {
	q := *in
	q.ID = ""
	return c.spec.Path(), c.headerFor(&q).Clone(), c.Body(&q)
}
