package bench

import (
	"net/http"
	"strings"
	"testing"

	"benchserve/internal/exit"
)

func TestBaseURL(t *testing.T) {
	str := func(s string) *string { return &s }
	cases := []struct {
		cfg  Config
		port int
		want string
	}{
		{Config{Host: "0.0.0.0"}, 30000, "http://0.0.0.0:30000"},
		{Config{Host: "::1"}, 8000, "http://[::1]:8000"},
		{Config{Host: "fe80::1%eth0"}, 8000, "http://[fe80::1%eth0]:8000"},
		{Config{Host: "[::1]"}, 8000, "http://[::1]:8000"},
		{Config{Host: "x", BaseURL: str("https://api.example.com/v1/")}, 1, "https://api.example.com/v1"},
	}
	for _, c := range cases {
		if got := baseURL(&c.cfg, c.port); got != c.want {
			t.Errorf("baseURL(%+v) = %q, want %q", c.cfg.Host, got, c.want)
		}
	}
}

func TestHeaders(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-1", "API_KEY": "raw"}
	if got := authHeader(func(k string) string { return env[k] }).Get("Authorization"); got != "Bearer sk-1" {
		t.Errorf("OPENAI_API_KEY gives %q", got)
	}
	delete(env, "OPENAI_API_KEY")
	if got := authHeader(func(k string) string { return env[k] }).Get("Authorization"); got != "raw" {
		t.Errorf("API_KEY gives %q, want it verbatim", got)
	}
	if got := authHeader(func(string) string { return "" }); len(got) != 0 {
		t.Errorf("no key gives %v", got)
	}
	h := customHeaders([]string{"X-A=1", "x-b=a=b", "novalue=", "=nokey", "bare", "Authorization=Bearer t"})
	want := http.Header{"X-A": {"1"}, "X-B": {"a=b"}, "Authorization": {"Bearer t"}}
	if len(h) != len(want) {
		t.Fatalf("customHeaders = %v, want %v", h, want)
	}
	for k, v := range want {
		if h.Get(k) != v[0] {
			t.Errorf("%s = %q, want %q", k, h.Get(k), v[0])
		}
	}
}

func TestCheckSupported(t *testing.T) {
	base := func() *Config {
		return &Config{Backend: "sglang", DatasetName: "random", LoraZipfAlpha: 1.5, LoraDistribution: "uniform"}
	}
	if err := checkSupported(base()); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	cases := []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Backend = "gserver" }, "--backend gserver"},
		{func(c *Config) { c.PrintRequests = true }, "--print-requests"},
		{func(c *Config) { c.Backend = "vllm"; c.TokenizePrompt = true }, "--tokenize-prompt"},
		{func(c *Config) { c.LoraDistribution = "skewed"; c.LoraName = []string{"a"} }, "needs at least 2 names"},
		{func(c *Config) { c.LoraZipfAlpha = 1 }, "--lora-zipf-alpha: must be greater than 1, got 1"},
		{func(c *Config) { c.NumPrompts = -1 }, "--num-prompts"},
	}
	for _, c := range cases {
		cfg := base()
		c.edit(cfg)
		err := checkSupported(cfg)
		ee, ok := err.(*exit.Error)
		if !ok || ee.Code != exit.Usage || !strings.Contains(ee.Msg, c.want) {
			t.Errorf("%q: got %v", c.want, err)
		}
	}
}

func TestSettleArgs(t *testing.T) {
	c := &Config{DatasetName: "mmmu"}
	settleArgs(c, 8000)
	if c.Port == nil || *c.Port != 8000 || !c.ApplyChatTemplate {
		t.Errorf("mmmu: port %v, apply_chat_template %v; want 8000 and true", c.Port, c.ApplyChatTemplate)
	}
	p := 1
	c = &Config{DatasetName: "random", Port: &p}
	settleArgs(c, 8000)
	if *c.Port != 1 || c.ApplyChatTemplate {
		t.Errorf("random: port %v, apply_chat_template %v; want 1 and false", *c.Port, c.ApplyChatTemplate)
	}
}
