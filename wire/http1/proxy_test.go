package http1

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeProxy is a forward proxy: a request in absolute form is sent on to
// its server in origin form, CONNECT opens a tunnel; each is logged as
// "METHOD target auth".
type fakeProxy struct {
	ln  net.Listener
	mu  sync.Mutex
	log []string
}

func startProxy(t *testing.T) *fakeProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &fakeProxy{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *fakeProxy) url(user string) *url.URL {
	u := &url.URL{Scheme: "http", Host: p.ln.Addr().String()}
	if user != "" {
		name, pass, _ := strings.Cut(user, ":")
		u.User = url.UserPassword(name, pass)
	}
	return u
}

func (p *fakeProxy) lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

func (p *fakeProxy) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		target := req.URL.Host
		if req.Method != http.MethodConnect {
			target = req.URL.String()
		}
		p.mu.Lock()
		p.log = append(p.log, req.Method+" "+target+" "+req.Header.Get("Proxy-Authorization"))
		p.mu.Unlock()
		if req.Method == http.MethodConnect {
			up, err := net.Dial("tcp", req.URL.Host)
			if err != nil {
				io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
				return
			}
			defer up.Close()
			io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
			go io.Copy(up, br)
			io.Copy(c, up)
			return
		}
		if !req.URL.IsAbs() {
			io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
			return
		}
		up, err := net.Dial("tcp", req.URL.Host)
		if err != nil {
			return
		}
		req.Header.Del("Proxy-Authorization")
		req.RequestURI = ""
		req.Write(up)
		resp, err := http.ReadResponse(bufio.NewReader(up), req)
		if err != nil {
			up.Close()
			return
		}
		resp.Write(c) // streams the body as it comes
		resp.Body.Close()
		up.Close()
	}
}

func streamHandler(w http.ResponseWriter, r *http.Request) {
	for _, s := range []string{"a", "b", "c"} {
		io.WriteString(w, event(s))
		w.(http.Flusher).Flush()
	}
	io.WriteString(w, event("[DONE]"))
}

// Plain HTTP goes to the proxy in absolute form with its credentials,
// https through a CONNECT tunnel, and the stream reads as it would
// directly, through either receiver (TestChunkStampedAtArrival checks the
// kernel's receive times through the proxy).
func TestProxy(t *testing.T) {
	run(t, func(t *testing.T, rc receiver) {
		plain := httptest.NewServer(http.HandlerFunc(streamHandler))
		defer plain.Close()
		secure := httptest.NewTLSServer(http.HandlerFunc(streamHandler))
		defer secure.Close()
		p := startProxy(t)
		via := func(u *url.URL) (*url.URL, error) { return p.url("u:s3cret"), nil }
		for _, keep := range []bool{true, false} {
			for _, srv := range []*httptest.Server{plain, secure} {
				tr := rc.transport(Options{KeepAlive: keep, TLS: &tls.Config{InsecureSkipVerify: true}, Proxy: via})
				for range 2 {
					if h := send(t, tr, srv.URL+"/v1/completions"); !h.success() || h.text() != "abc" || len(h.lines) != 4 {
						t.Errorf("%s keep-alive %v: %+v %q", srv.URL, keep, h.rec, h.lines)
					}
				}
			}
		}
		auth := "Basic dTpzM2NyZXQ=" // u:s3cret
		want := map[string]int{
			"POST " + plain.URL + "/v1/completions " + auth:                      4,
			"CONNECT " + strings.TrimPrefix(secure.URL, "https://") + " " + auth: 3, // one kept connection, then two
		}
		got := map[string]int{}
		for _, l := range p.lines() {
			got[l]++
		}
		for k, n := range want {
			if got[k] != n {
				t.Errorf("proxy saw %q %d times, want %d (all: %q)", k, got[k], n, p.lines())
			}
		}
		if len(got) != len(want) {
			t.Errorf("proxy saw %q", p.lines())
		}
	})
}

// A proxy that refuses the tunnel, or one of a scheme the transport
// cannot use, fails the request with words that name it.
func TestProxyRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			http.ReadRequest(bufio.NewReader(c))
			io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
			c.Close()
		}
	}()
	run(t, func(t *testing.T, rc receiver) {
		for _, tt := range []struct{ server, proxy, want string }{
			{"https://server.test:8443", "http://" + ln.Addr().String(), "refused CONNECT"},
			{"https://server.test:8443", "socks5://" + ln.Addr().String(), "only through http:// proxies"},
			{"http://server.test:8000", "socks5://" + ln.Addr().String(), "only through http:// proxies"},
		} {
			pu, _ := url.Parse(tt.proxy)
			tr := rc.transport(Options{KeepAlive: true, Proxy: func(*url.URL) (*url.URL, error) { return pu, nil }})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			h := sendCtx(ctx, tr, &testHandler{url: tt.server}, Send{Timeout: time.Minute, Stream: true})
			cancel()
			if h.ok || !strings.Contains(h.rec.Error, tt.want) {
				t.Errorf("%s via %s: %q, want it to say %q", tt.server, tt.proxy, h.rec.Error, tt.want)
			}
		}
	})
}
