package hub

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestFromEnv(t *testing.T) {
	hfHome := t.TempDir()
	if err := os.WriteFile(filepath.Join(hfHome, "token"), []byte("  hf_file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenPath := filepath.Join(t.TempDir(), "tok")
	if err := os.WriteFile(tokenPath, []byte("hf_path"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                   string
		env                    map[string]string
		endpoint, cache, token string
		offline                bool
	}{
		{"defaults", nil, DefaultEndpoint, "/home/u/.cache/huggingface/hub", "", false},
		{"xdg", map[string]string{"XDG_CACHE_HOME": "/x"}, DefaultEndpoint, "/x/huggingface/hub", "", false},
		{"hf home with token file", map[string]string{"HF_HOME": hfHome, "XDG_CACHE_HOME": "/x"}, DefaultEndpoint, filepath.Join(hfHome, "hub"), "hf_file", false},
		{"tilde", map[string]string{"HF_HOME": "~/hf"}, DefaultEndpoint, "/home/u/hf/hub", "", false},
		{"hub cache wins", map[string]string{"HF_HOME": "/h", "HF_HUB_CACHE": "/c"}, DefaultEndpoint, "/c", "", false},
		{"legacy hub cache", map[string]string{"HUGGINGFACE_HUB_CACHE": "~/old"}, DefaultEndpoint, "/home/u/old", "", false},
		{"env token wins", map[string]string{"HF_HOME": hfHome, "HF_TOKEN": "hf_env"}, DefaultEndpoint, filepath.Join(hfHome, "hub"), "hf_env", false},
		{"token path", map[string]string{"HF_HOME": hfHome, "HF_TOKEN_PATH": tokenPath}, DefaultEndpoint, filepath.Join(hfHome, "hub"), "hf_path", false},
		{"endpoint", map[string]string{"HF_ENDPOINT": "https://mirror.example/"}, "https://mirror.example", "/home/u/.cache/huggingface/hub", "", false},
		{"offline 1", map[string]string{"HF_HUB_OFFLINE": "1"}, DefaultEndpoint, "/home/u/.cache/huggingface/hub", "", true},
		{"offline yes", map[string]string{"HF_HUB_OFFLINE": "Yes"}, DefaultEndpoint, "/home/u/.cache/huggingface/hub", "", true},
		{"offline ON", map[string]string{"HF_HUB_OFFLINE": "ON"}, DefaultEndpoint, "/home/u/.cache/huggingface/hub", "", true},
		{"offline true", map[string]string{"HF_HUB_OFFLINE": "true"}, DefaultEndpoint, "/home/u/.cache/huggingface/hub", "", true},
		{"offline 0", map[string]string{"HF_HUB_OFFLINE": "0"}, DefaultEndpoint, "/home/u/.cache/huggingface/hub", "", false},
		{"offline no", map[string]string{"HF_HUB_OFFLINE": "no"}, DefaultEndpoint, "/home/u/.cache/huggingface/hub", "", false},
		{"transformers offline", map[string]string{"TRANSFORMERS_OFFLINE": "1"}, DefaultEndpoint, "/home/u/.cache/huggingface/hub", "", true},
	}
	for _, tt := range tests {
		c := fromEnv(func(k string) string { return tt.env[k] }, "/home/u")
		if c.Endpoint != tt.endpoint || c.CacheDir != tt.cache || c.Token != tt.token || c.Offline != tt.offline {
			t.Errorf("%s: got endpoint %q cache %q token %q offline %v; want %q %q %q %v",
				tt.name, c.Endpoint, c.CacheDir, c.Token, c.Offline, tt.endpoint, tt.cache, tt.token, tt.offline)
		}
	}
}

func TestFromEnvProcess(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HF_HUB_CACHE", dir)
	t.Setenv("HF_TOKEN", "hf_t")
	t.Setenv("HF_HUB_OFFLINE", "1")
	t.Setenv("HF_ENDPOINT", "")
	c := FromEnv(os.Getenv)
	if c.CacheDir != dir || c.Token != "hf_t" || !c.Offline || c.Endpoint != DefaultEndpoint {
		t.Errorf("FromEnv(os.Getenv) = %+v", c)
	}
	// A library never reads the process's environment on its own.
	if c := FromEnv(nil); c.CacheDir == dir || c.Token != "" || c.Offline {
		t.Errorf("FromEnv(nil) = %+v, want none of the process's variables", c)
	}
}

func TestProgressThrottled(t *testing.T) {
	var out bytes.Buffer
	clock := time.Unix(0, 0)
	p := newProgress(&out, "f.json", 0, 30e6)
	p.now = func() time.Time { return clock }
	p.last = clock
	chunk := make([]byte, 3e6)
	for range 10 {
		clock = clock.Add(time.Second) // a line every second write
		p.Write(chunk)
	}
	p.finish(true)
	want := "hub: f.json: 6.0 / 30.0 MB\n" +
		"hub: f.json: 12.0 / 30.0 MB\n" +
		"hub: f.json: 18.0 / 30.0 MB\n" +
		"hub: f.json: 24.0 / 30.0 MB\n" +
		"hub: f.json: 30.0 / 30.0 MB\n" +
		"hub: f.json: 30.0 / 30.0 MB done\n"
	if out.String() != want {
		t.Errorf("progress:\n%s\nwant:\n%s", out.String(), want)
	}

	out.Reset()
	p = newProgress(&out, "g.json", 5e6, -1)
	p.Write(make([]byte, 1e6))
	p.finish(false)
	if want := "hub: g.json: 6.0 MB stopped\n"; out.String() != want {
		t.Errorf("unknown size: %q, want %q", out.String(), want)
	}
}
