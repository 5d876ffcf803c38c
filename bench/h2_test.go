package bench

import (
	"strings"
	"testing"
)

// --http2 and --h2c are refused, naming the flag, where they cannot apply.
func TestCheckH2(t *testing.T) {
	env := func(k string) string {
		if k == "HTTP_PROXY" {
			return "http://proxy:3128"
		}
		return ""
	}
	none := func(string) string { return "" }
	for _, c := range []struct {
		cfg    Config
		bases  []string
		getenv func(string) string
		want   string // "" for no error
	}{
		{Config{}, []string{"https://a"}, none, ""},
		{Config{H2C: true}, []string{"http://a:1"}, none, ""},
		{Config{HTTP2: true}, []string{"https://a"}, none, ""},
		{Config{HTTP2: true, H2C: true}, []string{"http://a:1"}, none, "--http2 and --h2c: choose one"},
		{Config{H2C: true}, []string{"http://a:1", "https://b"}, none, "--h2c: cleartext h2 needs an http:// URL, got https://b"},
		{Config{HTTP2: true}, []string{"http://a:1"}, none, "--http2: h2 over TLS needs an https:// URL"},
		{Config{H2C: true, NoKeepalive: true}, []string{"http://a:1"}, none, "--h2c: HTTP/2 sends every request"},
		{Config{H2C: true}, []string{"http://a:1"}, env, "--h2c: requests to a:1 would go through the proxy"},
	} {
		err := checkH2(&c.cfg, c.bases, c.getenv)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v %v: %v", c.cfg, c.bases, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%+v %v: %v, want %q...", c.cfg, c.bases, err, c.want)
		}
	}
}
