package netproxy

import (
	"net/url"
	"strings"
	"testing"
)

func TestFromEnv(t *testing.T) {
	env := map[string]string{
		"HTTP_PROXY":  "http://up:3128",
		"http_proxy":  "http://low:3128",  // the upper-case name wins
		"https_proxy": "user:pw@sec:8080", // no scheme: http
		"no_proxy":    "direct.test,10.0.0.0/8",
	}
	f := FromEnv(func(k string) string { return env[k] })
	for _, tt := range []struct{ target, want string }{
		{"http://server.test:30000", "http://up:3128"},
		{"https://server.test", "http://user:pw@sec:8080"},
		{"http://direct.test:8000", ""},
		{"http://a.direct.test:8000", ""},
		{"http://10.1.2.3:8000", ""},
		{"http://127.0.0.1:30000", ""}, // loopback: never
		{"http://localhost:30000", ""},
		{"http://[::1]:30000", ""},
	} {
		u, _ := url.Parse(tt.target)
		p, err := f(u)
		got := ""
		if p != nil {
			got = p.String()
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.target, got, err, tt.want)
		}
	}
	// No proxy variable (NO_PROXY alone changes nothing): no proxy, and
	// nothing asked per request.
	if f := FromEnv(func(k string) string { return map[string]string{"NO_PROXY": "x.test"}[k] }); f != nil {
		t.Errorf("no proxy variables: a proxy function")
	}
	if p, err := Check(nil, &url.URL{Scheme: "http", Host: "server.test"}); p != nil || err != nil {
		t.Errorf("no proxy: %v, %v", p, err)
	}
	if Transport(nil).Proxy != nil {
		t.Error("Transport(nil) has a proxy")
	}
}

func TestCheck(t *testing.T) {
	target := &url.URL{Scheme: "https", Host: "server.test"}
	for _, tt := range []struct{ proxy, want string }{
		{"http://p:3128", ""},
		{"socks5://p:1080", "HTTPS_PROXY=socks5://p:1080: benchmark requests go only through http:// proxies"},
		{"https://user:secret@p:443", "HTTPS_PROXY=https://user:xxxxx@p:443:"},
	} {
		f := FromEnv(func(k string) string {
			if k == "HTTPS_PROXY" {
				return tt.proxy
			}
			return ""
		})
		_, err := Check(f, target)
		if (err == nil) != (tt.want == "") || err != nil && !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.proxy, err, tt.want)
		}
	}
}
