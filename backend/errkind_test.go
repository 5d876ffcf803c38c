package backend

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"benchserve/internal/testenv"
	"benchserve/record"
)

// Every failure of Do gets its kind and one precise line.
func TestErrorKinds(t *testing.T) {
	eachReceiver(t, func(t *testing.T, rc receiver) {
		status := func(code int, body string) string {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(code)
				io.WriteString(w, body)
			}))
			t.Cleanup(srv.Close)
			return srv.URL
		}
		stream := func(body string) string {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, body)
			}))
			t.Cleanup(srv.Close)
			return srv.URL
		}
		refused := "http://" + testenv.RefusedAddr(t)
		// A TLS server that never answers the handshake: the connect timeout.
		silent, _ := net.Listen("tcp", "127.0.0.1:0")
		t.Cleanup(func() { silent.Close() })
		go func() {
			for {
				c, err := silent.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { c.Close() })
			}
		}()
		stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // else the server would not see the client go
			io.WriteString(w, "data: {\"choices\":[{\"text\":\"a\"}]}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		t.Cleanup(stall.Close)

		const errBody = `{"error":{"message":"slow down","type":"RateLimitError","param":null,"code":429}}`
		cases := []struct {
			name, backend, url string
			opt                Options
			kind, msg          string // msg: the whole error, or its start when it ends in "..."
		}{
			{"429", "vllm", status(429, errBody), Options{Stream: true}, record.KindHTTP429, "429 Too Many Requests: " + errBody},
			{"404", "vllm-chat", status(404, "no such model\n"), Options{Stream: true}, record.KindHTTP4xx, "404 Not Found: no such model"},
			{"500", "sglang", status(500, ""), Options{Stream: true}, record.KindHTTP5xx, "500 Internal Server Error: (empty body)"},
			{"503", "vllm", status(503, "busy"), Options{}, record.KindHTTP5xx, "503 Service Unavailable: busy"},
			{"202", "vllm", status(202, "later"), Options{Stream: true}, record.KindHTTPOther, "202 Accepted: later"},
			{"refused", "vllm", refused, Options{Stream: true}, record.KindConnect, "cannot connect to " + strings.TrimPrefix(refused, "http://") + ": connection refused"},
			{"connect timeout", "vllm", "https://" + silent.Addr().String(), Options{Stream: true}, record.KindTimeout, "no connection within --connect-timeout: ..."},
			{"request timeout", "vllm", stall.URL, Options{Stream: true, Timeout: 100 * time.Millisecond}, record.KindTimeout, "the request exceeded its 100ms limit"},
			{"reset before headers", "vllm", resetServer(t, ""), Options{Stream: true}, record.KindReset, "the connection broke before the response headers came: ..."},
			{"reset mid-stream", "vllm", resetServer(t, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n22\r\ndata: {\"choices\":[{\"text\":\"a\"}]}\n\n\r\n"),
				Options{Stream: true}, record.KindReset, "reading the response after line 2: ..."},
			{"error object", "vllm", stream("data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"error\":{\"message\":\"out of memory\",\"code\":500}}\n\ndata: [DONE]\n\n"),
				Options{Stream: true}, record.KindStreamError, "out of memory"},
			{"error object, whole", "vllm-chat", stream(`{"object":"error","message":"bad input","code":400}`), Options{}, record.KindStreamError, "bad input"},
			{"no [DONE]", "vllm-chat", stream("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"), Options{Stream: true}, record.KindIncomplete,
				"the stream ended without data: [DONE], after 1 data lines (the server stopped mid-generation)"},
			{"malformed line", "sglang", stream("data: {\"text\":\"a\",\"meta_info\":{\"completion_tokens\":1}}\n\ndata: {\"text\":\n\ndata: [DONE]\n\n"),
				Options{Stream: true}, record.KindInvalid, `line 3 of the response: invalid JSON at byte 15: unexpected end; the line starts ...`},
			{"malformed whole", "vllm", stream(`{"choices": [{"text": "a"}`), Options{}, record.KindInvalid, "the response: invalid JSON at byte ..."},
			{"no content chunk", "vllm", stream("data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"stop\"}]}\n\ndata: {\"choices\":[],\"usage\":{\"completion_tokens\":0}}\n\ndata: [DONE]\n\n"),
				Options{Stream: true}, record.KindEmpty, "the server answered 200 with no output: no chunk with content and no completion tokens in 3 data lines"},
			{"no content, chat role only", "vllm-chat", stream("data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\ndata: [DONE]\n\n"),
				Options{Stream: true}, record.KindEmpty, "the server answered 200 with no output: no chunk with content and no completion tokens in 2 data lines"},
			{"empty whole", "vllm", stream(`{"choices":[{"text":""}],"usage":{"completion_tokens":0}}`), Options{}, record.KindEmpty,
				"the server answered 200 with no output: empty text and no completion tokens"},
			{"empty whole chat", "sglang-oai-chat", stream(`{"choices":[{"message":{"content":null}}]}`), Options{}, record.KindEmpty,
				"the server answered 200 with no output: empty text and no completion tokens"},
			{"empty whole native", "sglang", stream(`{"text":"","meta_info":{"completion_tokens":0}}`), Options{}, record.KindEmpty,
				"the server answered 200 with no output: empty text and no completion tokens"},
			{"empty body", "vllm", stream(""), Options{Stream: true}, record.KindEmpty, "the server answered 200 with no data lines"},
			{"empty body, embeddings", "vllm-embedding", stream(""), Options{}, record.KindInvalid, "the server answered 200 with an empty body"},
			{"bad URL", "vllm", "http://[::1", Options{}, record.KindOther, "building the request: ..."},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				cl, err := New(c.backend, "http://unused", c.opt, nil, rc.hc(ClientOptions{ConnectTimeout: 100 * time.Millisecond}))
				if err != nil {
					t.Fatal(err)
				}
				rec := &record.Record{}
				cl.withURL(c.url).Do(context.Background(), &Input{Text: "x", OutputLen: 8}, rec, time.Now())
				if rec.Success || rec.ErrorKind != c.kind {
					t.Errorf("success %v, kind %q, want %q (error %q)", rec.Success, rec.ErrorKind, c.kind, rec.Error)
				}
				if prefix, ok := strings.CutSuffix(c.msg, "..."); ok {
					if !strings.HasPrefix(rec.Error, prefix) {
						t.Errorf("error %q, want it to start %q", rec.Error, prefix)
					}
				} else if rec.Error != c.msg {
					t.Errorf("error %q, want %q", rec.Error, c.msg)
				}
				if strings.ContainsAny(rec.Error, "\r\n") || strings.Contains(rec.Error, "goroutine ") {
					t.Errorf("error is not one line: %q", rec.Error)
				}
				if rec.OutputLen != 0 {
					t.Errorf("failed request has output length %d", rec.OutputLen)
				}
			})
		}
	})
}

// A reply with text, or one whose usage reports tokens though its text is
// empty, is not empty; nor is an embedding.
func TestNotEmpty(t *testing.T) {
	cases := []struct{ backend, body string }{
		{"vllm", `{"choices":[{"text":""}],"usage":{"completion_tokens":2}}`},
		{"sglang", `{"text":"","meta_info":{"completion_tokens":2}}`},
		{"vllm-chat", `{"choices":[{"message":{"content":""}}],"usage":{"completion_tokens":1}}`},
		{"vllm-chat", `{"choices":[{"message":{"reasoning_content":"r","content":null}}]}`},
		{"vllm-embedding", `{"data":[],"usage":{"prompt_tokens":3}}`},
	}
	for _, c := range cases {
		rec := parse(client(t, c.backend, Options{}), []byte(c.body), 1, 8, 100)
		if !rec.Success || rec.ErrorKind != "" {
			t.Errorf("%s %s: success %v, kind %q, error %q", c.backend, c.body, rec.Success, rec.ErrorKind, rec.Error)
		}
	}
	// A trt chunk counts as a token even with empty text, as in the reference.
	if rec := parse(client(t, "trt", Options{}), []byte("data: {\"text_output\":\"\"}\n"), 1, 8, 100); !rec.Success {
		t.Errorf("trt empty chunk: %q", rec.Error)
	}
}

// endless is "data: " followed by an endless line of x.
type endless struct{ head []byte }

func (e *endless) Read(p []byte) (int, error) {
	n := copy(p, e.head)
	e.head = e.head[n:]
	for i := n; i < len(p); i++ {
		p[i] = 'x'
	}
	return len(p), nil
}

func TestTooLarge(t *testing.T) {
	for _, stream := range []bool{true, false} {
		c := client(t, "vllm", Options{Stream: stream})
		rec := &record.Record{}
		c.readBody(context.Background(), &endless{head: []byte("data: {\"choices\":[{\"text\":\"")}, rec, time.Now(), 8)
		want := "line 1 of the response is longer than the 64 MiB limit"
		if !stream {
			want = "the response is larger than the 64 MiB limit"
		}
		if rec.Success || rec.ErrorKind != record.KindTooLarge || rec.Error != want {
			t.Errorf("stream %v: kind %q, error %q", stream, rec.ErrorKind, rec.Error)
		}
	}
}

// A request the caller cancels is marked as such.
func TestCancelled(t *testing.T) {
	eachReceiver(t, func(t *testing.T, rc receiver) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		rec := &record.Record{}
		rc.client(t, "vllm", Options{Stream: true}).withURL(srv.URL).Do(ctx, &Input{Text: "x"}, rec, time.Now())
		if rec.Success || rec.ErrorKind != record.KindInterrupted || rec.Error != "the request was cancelled" {
			t.Errorf("kind %q, error %q", rec.ErrorKind, rec.Error)
		}
	})
}
