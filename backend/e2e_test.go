package backend

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"benchserve/internal/testenv"
	"benchserve/record"
	"benchserve/wire/http1"
)

// Server-side delays: before the first chunk, and between chunks. The lower
// bounds they imply are exact (a chunk cannot arrive before it is sent);
// the upper bound only guards against gross mistakes, as machines are noisy.
const (
	firstDelay = 30 * time.Millisecond
	gapDelay   = 10 * time.Millisecond
	slack      = 250 * time.Millisecond
)

// streamChunks are the lines each backend's fake server sends after its
// delays; the last one comes right after the one before it.
var streamChunks = map[string][]string{
	"sglang": {
		`data: {"text":"A","meta_info":{"prompt_tokens":5,"completion_tokens":1}}`,
		`data: {"text":"AB","meta_info":{"prompt_tokens":5,"completion_tokens":2}}`,
		`data: {"text":"ABC","meta_info":{"prompt_tokens":5,"completion_tokens":3}}`,
		`data: {"text":"ABCD","meta_info":{"prompt_tokens":5,"completion_tokens":4}}`,
		`data: [DONE]`,
	},
	"vllm": {
		`data: {"choices":[{"text":"A"}]}`, `data: {"choices":[{"text":"B"}]}`,
		`data: {"choices":[{"text":"C"}]}`, `data: {"choices":[{"text":"D"}]}`,
		`data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":4}}`, `data: [DONE]`,
	},
	"vllm-chat": {
		`data: {"choices":[{"delta":{"content":"A"}}]}`, `data: {"choices":[{"delta":{"content":"B"}}]}`,
		`data: {"choices":[{"delta":{"content":"C"}}]}`, `data: {"choices":[{"delta":{"content":"D"}}]}`,
		`data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":4}}`, `data: [DONE]`,
	},
	"truss": {
		`data: {"choices":[{"text":"A"}]}`, `data: {"choices":[{"text":"B"}]}`,
		`data: {"choices":[{"text":"C"}]}`, `data: {"choices":[{"text":"D"}]}`, `data: [DONE]`,
	},
	"trt": {
		`data:{"text_output":"A"}`, `data:{"text_output":"B"}`, `data:{"text_output":"C"}`, `data:{"text_output":"D"}`,
	},
}

// fakeServer checks each request and answers with the backend's chunks.
func fakeServer(t *testing.T, backend string, want *Client, in *Input, stream bool) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := checkRequest(r, body, backend, want, in); err != nil {
			t.Error(err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(firstDelay)
		if !stream {
			w.Header().Set("Content-Type", "application/json")
			switch {
			case IsEmbedding(backend):
				io.WriteString(w, `{"object":"list","data":[{"embedding":[0.5,-1],"index":0}],"usage":{"prompt_tokens":5}}`)
			default:
				io.WriteString(w, `{"choices":[{"message":{"content":"ABCD"}}],"usage":{"prompt_tokens":5,"completion_tokens":4}}`)
			}
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunks := streamChunks[backend]
		for i, c := range chunks {
			if i > 0 && i < 4 {
				time.Sleep(gapDelay)
			}
			fmt.Fprintf(w, "%s\n\n", c)
			w.(http.Flusher).Flush()
		}
	}))
}

func checkRequest(r *http.Request, body []byte, backend string, c *Client, in *Input) error {
	if r.Method != http.MethodPost || r.URL.Path != Path(backend) {
		return fmt.Errorf("%s %s, want POST %s", r.Method, r.URL.Path, Path(backend))
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		return fmt.Errorf("Content-Type %q", got)
	}
	if want := string(c.Body(in)); string(body) != want {
		return fmt.Errorf("body %s, want %s", body, want)
	}
	if r.Header.Get("Accept-Encoding") != "" {
		return fmt.Errorf("asked for compression: %q", r.Header.Get("Accept-Encoding"))
	}
	auth, custom, key := r.Header.Get("Authorization"), r.Header.Get("X-Custom"), r.Header.Get(RoutingKeyHeader)
	switch {
	case backend == "trt":
		if auth != "" || custom != "" || key != "" {
			return fmt.Errorf("trt sent headers: %q %q %q", auth, custom, key)
		}
	case auth != "Bearer sk-test" || custom != "v=1":
		return fmt.Errorf("headers: Authorization %q, X-Custom %q", auth, custom)
	case backend == "truss" && key != "":
		return fmt.Errorf("truss sent the routing key %q", key)
	case backend != "truss" && key != "group-7":
		return fmt.Errorf("routing key %q", key)
	}
	return nil
}

func sec(d time.Duration) float64 { return d.Seconds() }

func TestEndToEnd(t *testing.T) {
	eachReceiver(t, func(t *testing.T, rc receiver) {
		header := http.Header{"Authorization": {"Bearer sk-test"}, "X-Custom": {"v=1"}}
		cases := []struct {
			backend string
			stream  bool
			text    string
			out     int // expected output length
			prompt  int // expected prompt length
			itl     int
		}{
			{"sglang", true, "ABCD", 4, 5, 3},
			{"vllm", true, "ABCD", 4, 5, 3},
			{"vllm-chat", true, "ABCD", 4, 5, 3},
			{"truss", true, "ABCD", 16, 100, 3},
			{"trt", true, "ABCD", 16, 100, 3},
			{"sglang-oai-chat", false, "ABCD", 4, 5, 0},
			{"vllm-embedding", false, "", 0, 100, 0},
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s-stream=%v", c.backend, c.stream), func(t *testing.T) {
				t.Parallel()
				in := &Input{Text: "hello", OutputLen: 16, PromptLen: 100, Model: "m", RoutingKey: "group-7"}
				o := Options{Stream: c.stream, IgnoreEOS: true}
				probe, _ := New(c.backend, "http://x", o, header, nil)
				srv := fakeServer(t, c.backend, probe, in, c.stream)
				defer srv.Close()
				cl, err := New(c.backend, srv.URL, o, header, rc.hc(ClientOptions{KeepAlive: true, MaxConns: 4}))
				if err != nil {
					t.Fatal(err)
				}
				epoch := time.Now()
				rec := &record.Record{PromptLen: in.PromptLen}
				before := time.Now()
				cl.Do(context.Background(), in, rec, epoch)
				took := time.Since(before)
				if !rec.Success {
					t.Fatalf("failed: %s", rec.Error)
				}
				if rec.Text != c.text || rec.OutputLen != c.out || rec.PromptLen != c.prompt || rec.Gaps.Len() != c.itl {
					t.Errorf("text %q out %d prompt %d itl %v", rec.Text, rec.OutputLen, rec.PromptLen, rec.Gaps.Seconds())
				}
				if rec.Start < 0 || rec.Start > sec(took)+sec(time.Since(epoch)) {
					t.Errorf("start %v", rec.Start)
				}
				if rec.Latency < sec(firstDelay) || rec.Latency > sec(took) {
					t.Errorf("latency %v, want in [%v, %v]", rec.Latency, firstDelay, took)
				}
				switch {
				case IsEmbedding(c.backend):
					if rec.TTFT != 0 {
						t.Errorf("embeddings TTFT %v", rec.TTFT)
					}
				case !c.stream:
					if rec.TTFT != rec.Latency {
						t.Errorf("non-streamed TTFT %v != latency %v", rec.TTFT, rec.Latency)
					}
				default:
					if rec.TTFT < sec(firstDelay) || rec.TTFT > sec(firstDelay+slack) {
						t.Errorf("TTFT %v, want in [%v, %v]", rec.TTFT, firstDelay, firstDelay+slack)
					}
					// Chunk k+1 cannot arrive before it was sent, k gaps after the first.
					at := rec.TTFT
					for k, x := range rec.Gaps.Seconds() {
						at += x
						if at < sec(firstDelay+time.Duration(k+1)*gapDelay) || x > sec(gapDelay+slack) {
							t.Errorf("ITL %v: chunk %d at %v", rec.Gaps.Seconds(), k+2, at)
						}
					}
				}
			})
		}
	})
}

func TestHTTPErrors(t *testing.T) {
	eachReceiver(t, func(t *testing.T, rc receiver) {
		long := strings.Repeat("é", 3000) // 6000 bytes
		cases := []struct {
			fixture, want string
		}{
			{"llm-d-inference-sim/error-unknown-model", "404 Not Found: {\"error\":{\"message\":\"The model `no-such-model` does not exist.\",\"type\":\"NotFoundError\",\"param\":null,\"code\":404}}"},
			{"llm-d-inference-sim/failure-server-error-completions-stream", "503 Service Unavailable: {\"error\":{\"message\":\"The server is overloaded or not ready yet.\",\"type\":\"InternalServerError\",\"param\":null,\"code\":503}}"},
			{"ollama/error-malformed-json", `400 Bad Request: {"error":{"message":"unexpected EOF","type":"invalid_request_error","param":null,"code":null}}`},
		}
		for _, c := range cases {
			status, body := replayFixture(t, c.fixture)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(status)
				w.Write(body)
			}))
			rec := &record.Record{}
			rc.client(t, "vllm", Options{Stream: true}).withURL(srv.URL+"/v1/completions").Do(context.Background(), &Input{Text: "x", OutputLen: 8}, rec, time.Now())
			srv.Close()
			if rec.Success || rec.Error != c.want {
				t.Errorf("%s:\n got  %q\n want %q", c.fixture, rec.Error, c.want)
			}
		}

		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "\n  Traceback:\r\n  line 1\n"+long+"  \n")
		}))
		defer srv.Close()
		rec := &record.Record{}
		rc.client(t, "sglang", Options{Stream: true}).withURL(srv.URL).Do(context.Background(), &Input{Text: "x"}, rec, time.Now())
		// 21 bytes of head, then as many whole "é" as fit in 4096 bytes.
		want := "500 Internal Server Error: Traceback:   line 1 " + strings.Repeat("é", (4096-21)/2) + " ... (6021 bytes in all)"
		if rec.Error != want {
			t.Errorf("long body:\n got  %q\n want %q", rec.Error, want)
		}
	})
}

// replayFixture returns a fixture's status code and body.
func replayFixture(t *testing.T, name string) (int, []byte) {
	head := string(fixture(t, "wire/"+name+"/response.headers"))
	var code int
	if _, err := fmt.Sscanf(head, "HTTP/1.1 %d", &code); err != nil {
		t.Fatal(err)
	}
	return code, fixture(t, "wire/"+name+"/response.body")
}

// receiver is one of the receivers (ClientOptions.Receive) a transport
// test runs against.
type receiver struct{ name, mode string }

// eachReceiver runs f as a subtest against Go's poller, the event loop
// and the event loop reading through io_uring, the event loop's skipped
// off Linux.
func eachReceiver(t *testing.T, f func(t *testing.T, rc receiver)) {
	for _, rc := range []receiver{{"poller", http1.ReceivePoller}, {"events", http1.ReceiveEvents}, {"uring", http1.ReceiveUring}} {
		t.Run(rc.name, func(t *testing.T) {
			if rc.mode != http1.ReceivePoller && runtime.GOOS != "linux" {
				t.Skip("the event loop is Linux's")
			}
			f(t, rc)
		})
	}
}

// hc is an HTTP client of rc with the options o.
func (rc receiver) hc(o ClientOptions) *http.Client {
	o.Receive = rc.mode
	return NewHTTPClient(o)
}

// client is a client of backend through rc, with keep-alive.
func (rc receiver) client(t testing.TB, backend string, o Options) *Client {
	t.Helper()
	c, err := New(backend, "http://127.0.0.1:1", o, nil, rc.hc(ClientOptions{KeepAlive: true}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// withURL points a test client somewhere else.
func (c *Client) withURL(u string) *Client {
	c.url = u
	return c
}

// rawServer answers every request with the given raw bytes, then closes
// the connection.
func rawServer(t *testing.T, response string) string { return rawListener(t, response, false) }

// resetServer answers every request with head, which may be empty, then
// resets the connection (SO_LINGER 0).
func resetServer(t *testing.T, head string) string { return rawListener(t, head, true) }

func rawListener(t *testing.T, response string, reset bool) string {
	return rawAccept(t, nil, func(conn net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		io.WriteString(conn, response)
		if reset {
			conn.(*net.TCPConn).SetLinger(0)
		}
	})
}

// rawAccept serves each connection to a loopback listener (wrapped by
// wrap, when set: TLS, say) with serve, which may read requests from br,
// then closes it. It returns the listener's address, "host:port".
func rawAccept(t *testing.T, wrap func(net.Listener) net.Listener, serve func(conn net.Conn, br *bufio.Reader)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if wrap != nil {
		ln = wrap(ln)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				serve(conn, bufio.NewReader(conn))
			}()
		}
	}()
	return "http://" + addr
}

func TestTransportFailures(t *testing.T) {
	eachReceiver(t, func(t *testing.T, rc receiver) {
		cases := []struct {
			name, response, errHas string
		}{
			{"custom reason", "HTTP/1.1 500 Engine Exploded\r\nContent-Length: 4\r\n\r\noops", "500 Engine Exploded: oops"},
			{"no reason", "HTTP/1.1 502\r\nContent-Length: 0\r\n\r\n", "502 Bad Gateway: (empty body)"},
			{"cut mid-stream", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
				"1a\r\ndata: {\"choices\":[{\"text\"\r\n", "the connection closed mid-response, after line 0 (unexpected EOF)"},
			{"cut between lines", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
				"22\r\ndata: {\"choices\":[{\"text\":\"a\"}]}\n\n\r\n", "the connection closed mid-response, after line 2 (unexpected EOF)"},
			{"clean end without [DONE]", "HTTP/1.1 200 OK\r\nContent-Length: 34\r\n\r\ndata: {\"choices\":[{\"text\":\"a\"}]}\n\n",
				"the stream ended without data: [DONE], after 1 data lines"},
		}
		for _, c := range cases {
			url := rawServer(t, c.response)
			rec := &record.Record{}
			rc.client(t, "vllm", Options{Stream: true}).withURL(url).Do(context.Background(), &Input{Text: "x", OutputLen: 8}, rec, time.Now())
			if rec.Success || !strings.Contains(rec.Error, c.errHas) || strings.ContainsAny(rec.Error, "\r\n") {
				t.Errorf("%s: error %q, want %q", c.name, rec.Error, c.errHas)
			}
		}

		// Nothing listens on a closed listener's port.
		addr := testenv.RefusedAddr(t)
		rec := &record.Record{}
		rc.client(t, "vllm", Options{Stream: true}).withURL("http://"+addr+"/v1/completions").Do(context.Background(), &Input{Text: "x"}, rec, time.Now())
		if rec.Success || !strings.Contains(rec.Error, "connection refused") || rec.Start <= 0 {
			t.Errorf("refused: %q, start %v", rec.Error, rec.Start)
		}

		// The per-request limit.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
			io.WriteString(w, "data: {\"choices\":[{\"text\":\"a\"}]}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		defer srv.Close()
		rec = &record.Record{}
		rc.client(t, "vllm", Options{Stream: true, Timeout: 100 * time.Millisecond}).withURL(srv.URL).Do(context.Background(), &Input{Text: "x"}, rec, time.Now())
		if rec.Success || rec.Error != "the request exceeded its 100ms limit" || rec.TTFT <= 0 {
			t.Errorf("timeout: %q, TTFT %v", rec.Error, rec.TTFT)
		}
	})
}

func TestNewErrors(t *testing.T) {
	if _, err := New("gserver", "http://h", Options{}, nil, nil); err == nil ||
		err.Error() != "--backend gserver: not implemented by the reference tool either (it raises NotImplementedError)" {
		t.Errorf("gserver: %v", err)
	}
	if _, err := New("tgi", "http://h", Options{}, nil, nil); err == nil || !strings.HasPrefix(err.Error(), "--backend tgi: unknown backend") {
		t.Errorf("unknown: %v", err)
	}
}

func TestTable(t *testing.T) {
	wantPort := map[string]int{
		"sglang": 30000, "sglang-native": 30000, "sglang-oai": 30000, "sglang-oai-chat": 30000, "sglang-embedding": 30000,
		"vllm": 8000, "vllm-chat": 30000, "vllm-embedding": 8000, "lmdeploy": 23333, "lmdeploy-chat": 30000,
		"trt": 8000, "gserver": 9988, "truss": 8080, "openai-responses": 8000, "anthropic-messages": 8000,
		"openai-speech": 8000,
		"vllm-rerank":   8000, "sglang-rerank": 30000, "vllm-score": 8000, "tei-rerank": 8080,
		"openai-transcription": 8000, "vllm-classify": 8000, "cohere-rerank": 8000,
	}
	for _, n := range Names() {
		if DefaultPort(n) != wantPort[n] {
			t.Errorf("DefaultPort(%s) = %d, want %d", n, DefaultPort(n), wantPort[n])
		}
		if (Path(n) == "") != (n == "gserver") {
			t.Errorf("Path(%s) = %q", n, Path(n))
		}
		if s, _ := Lookup(n); IsEmbedding(n) != (strings.HasSuffix(n, "-embedding") || s.Rerank || n == "vllm-classify") {
			t.Errorf("IsEmbedding(%s)", n)
		}
	}
	if len(Names()) != len(wantPort) {
		t.Errorf("Names() = %v", Names())
	}
	c, _ := New("vllm-chat", "http://h:1", Options{}, nil, nil)
	if c.URL() != "http://h:1/v1/chat/completions" || Path("trt") != "/v2/models/ensemble/generate_stream" || Path("truss") != "/v1/models/model:predict" {
		t.Errorf("paths: %s %s %s", c.URL(), Path("trt"), Path("truss"))
	}
}

// TestKeepAlive counts the connections five sequential requests open.
func TestKeepAlive(t *testing.T) {
	eachReceiver(t, func(t *testing.T, rc receiver) {
		for _, keep := range []bool{true, false} {
			var conns atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: [DONE]\n\n")
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			cl, _ := New("vllm", srv.URL, Options{Stream: true}, nil, rc.hc(ClientOptions{KeepAlive: keep, MaxConns: 8}))
			for range 5 {
				rec := &record.Record{}
				cl.Do(context.Background(), &Input{Text: "x"}, rec, time.Now())
				if !rec.Success {
					t.Fatal(rec.Error)
				}
			}
			srv.Close()
			want := map[bool]int32{true: 1, false: 5}[keep]
			if conns.Load() != want {
				t.Errorf("keepAlive=%v: %d connections, want %d", keep, conns.Load(), want)
			}
		}
	})
}

// TestConcurrent runs many requests at once through one client (for -race).
func TestConcurrent(t *testing.T) {
	eachReceiver(t, func(t *testing.T, rc receiver) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for i := range 5 {
				fmt.Fprintf(w, "data: {\"text\":\"%s\",\"meta_info\":{\"completion_tokens\":%d}}\n\n", strings.Repeat("x", i+1), i+1)
				w.(http.Flusher).Flush()
			}
			io.WriteString(w, "data: [DONE]\n\n")
		}))
		defer srv.Close()
		cl, _ := New("sglang", srv.URL, Options{Stream: true}, http.Header{"Authorization": {"k"}}, rc.hc(ClientOptions{KeepAlive: true, MaxConns: 32}))
		var wg sync.WaitGroup
		recs := make([]record.Record, 64)
		for i := range recs {
			wg.Go(func() {
				in := &Input{Text: "x", OutputLen: 5}
				if i%2 == 0 { // the others share the client's header map
					in.RoutingKey = fmt.Sprint(i)
				}
				cl.Do(context.Background(), in, &recs[i], time.Now())
			})
		}
		wg.Wait()
		for i, r := range recs {
			if !r.Success || r.Text != "xxxxx" || r.Gaps.Len() != 4 || r.OutputLen != 5 {
				t.Fatalf("request %d: %+v", i, r)
			}
		}
	})
}

// A --header Host goes out as the request's Host, and without keep-alive
// the request asks the server to close the connection (the rest of the
// request's head: http1's TestTransportRequest).
func TestHostHeader(t *testing.T) {
	eachReceiver(t, func(t *testing.T, rc receiver) {
		got := make(chan *http.Request, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got <- r
			io.WriteString(w, "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: [DONE]\n\n")
		}))
		defer srv.Close()
		h := http.Header{"Host": {"example.test"}, "Authorization": {"Bearer k"}}
		c, _ := New("vllm", srv.URL, Options{Stream: true}, h, rc.hc(ClientOptions{KeepAlive: false}))
		rec := &record.Record{}
		if c.Do(context.Background(), &Input{Text: "x", OutputLen: 8}, rec, time.Now()); !rec.Success {
			t.Fatal(rec.Error)
		}
		r := <-got
		if r.Host != "example.test" || !r.Close || r.Header.Get("Authorization") != "Bearer k" || r.Header.Get("Host") != "" {
			t.Errorf("host %q, close %v, header %v", r.Host, r.Close, r.Header)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A client whose Transport is not http1's sends through that
// RoundTripper (an in-memory one, here), its reply read and parsed as any.
func TestForeignTransport(t *testing.T) {
	hc := NewHTTPClient(ClientOptions{KeepAlive: true})
	var seen *http.Request
	hc.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = r
		body := "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\ndata: [DONE]\n\n"
		return &http.Response{StatusCode: 200, Header: http.Header{"X-Request-Id": {"srv-1"}}, Body: io.NopCloser(strings.NewReader(body))}, nil
	})
	c, _ := New("vllm", "http://model.test", Options{Stream: true}, nil, hc)
	rec := &record.Record{}
	c.Do(context.Background(), &Input{Text: "x", OutputLen: 2, ID: "req-1"}, rec, time.Now())
	if !rec.Success || rec.Text != "ab" || rec.Chunks != 2 || rec.ServerID != "srv-1" || seen == nil || seen.URL.Path != "/v1/completions" {
		t.Errorf("%+v", rec)
	}
	if n, err := c.Preconnect(context.Background(), 2); n != 0 || err != nil {
		t.Errorf("Preconnect through a foreign transport: %d, %v", n, err)
	}
}
