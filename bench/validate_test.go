package bench

import "testing"

func TestCheckTarget(t *testing.T) {
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	cases := []struct {
		cfg  Config
		want string // "" for none
	}{
		{Config{Host: "0.0.0.0"}, ""},
		{Config{Host: "::1", Port: num(8000)}, ""},
		{Config{Host: "[fe80::1%eth0]", Port: num(1)}, ""},
		{Config{Host: "h", Port: num(65536)}, "--port 65536: must be between 1 and 65535"},
		{Config{Host: "localhost:3000"}, "--host localhost:3000: give the port with --port (--host localhost --port 3000)"},
		{Config{Host: "http://localhost:3000"}, "--host http://localhost:3000: a host name, not a URL; use --base-url http://localhost:3000"},
		{Config{Host: "a:b:c"}, "--host a:b:c: not a host name or IP address"},
		{Config{BaseURL: str("https://api.example.com/v1/")}, ""},
		{Config{BaseURL: str("http://[::1]:8000")}, ""},
		{Config{BaseURL: str("localhost:3000")}, "--base-url localhost:3000: no scheme; did you mean --base-url http://localhost:3000?"},
		{Config{BaseURL: str("127.0.0.1:3000")}, "--base-url 127.0.0.1:3000: no scheme; did you mean --base-url http://127.0.0.1:3000?"},
		{Config{BaseURL: str("htp://x")}, "--base-url htp://x: unsupported scheme htp:// (use http:// or https://)"},
		{Config{BaseURL: str("http://")}, "--base-url http://: no host"},
		{Config{BaseURL: str("http://u:secret@h:0")}, "--base-url http://u:xxxxx@h:0: port 0 is out of range (1-65535)"},
		{Config{BaseURL: str("http://h:x")}, "--base-url http://h:x: not a URL (invalid port \":x\" after host)"},
	}
	for _, c := range cases {
		got := ""
		if err := checkTarget(&c.cfg); err != nil {
			got = err.Error()
			if ee, ok := err.(*ExitError); !ok || ee.Code != ExitUsage {
				t.Errorf("%+v: %#v is not a usage error", c.cfg, err)
			}
		}
		if got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.cfg, got, c.want)
		}
	}
}
