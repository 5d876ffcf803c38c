package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"benchserve/sim"
)

// --base-url given several times, as a comma-separated list, or both,
// reads as one comma-joined value (one value stays as it was), and the
// Namespace prints it so, credentials redacted.
func TestBaseURLFlagsRepeatedCommaMixed(t *testing.T) {
	for _, c := range []struct {
		args     []string
		want     string
		strategy string
	}{
		{[]string{"--base-url", "http://a:1/"}, "http://a:1/", "round-robin"},
		{[]string{"--base-url", "http://a:1", "--base-url", "http://b:2/"}, "http://a:1,http://b:2/", "round-robin"},
		{[]string{"--base-url", "http://a:1,http://b:2", "--url-strategy", "random"}, "http://a:1,http://b:2", "random"},
		{[]string{"--base-url", "http://a:1,http://b:2", "--base-url=http://u:pw@c:3"}, "http://a:1,http://b:2,http://u:pw@c:3", "round-robin"},
	} {
		cfg, _, err := parse(c.args, 80)
		if err != nil {
			t.Errorf("parse(%q): %v", c.args, err)
			continue
		}
		if cfg.BaseURL == nil || *cfg.BaseURL != c.want || cfg.URLStrategy != c.strategy {
			t.Errorf("parse(%q): base URL %v, strategy %q; want %q, %q", c.args, cfg.BaseURL, cfg.URLStrategy, c.want, c.strategy)
			continue
		}
		ns := Namespace(cfg)
		shown := strings.ReplaceAll(c.want, "u:pw@", "u:xxxxx@")
		if !strings.Contains(ns, "base_url='"+shown+"',") || strings.Contains(ns, "pw@") {
			t.Errorf("Namespace after %q does not show base_url=%q:\n%s", c.args, shown, ns)
		}
	}
	if _, _, err := parse([]string{"--url-strategy", "sticky"}, 80); err == nil || !strings.Contains(err.Error(), "--url-strategy") {
		t.Errorf("--url-strategy sticky: %v, want an invalid choice naming the flag", err)
	}
}

// --url-strategy with one URL does nothing, and a note says so.
func TestURLStrategyOneURLNote(t *testing.T) {
	cfg, _ := sim.Preset(sim.PresetInstant)
	_, a := newSim(t, cfg)
	code, stdout, stderr := run(t, nil, "--base-url", a, "--url-strategy", "random", "--dataset-name", "random-ids",
		"--random-input-len", "8", "--random-output-len", "4", "--num-prompts", "2", "--output-file", filepath.Join(t.TempDir(), "r.jsonl"))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "--url-strategy") || !strings.Contains(stderr, "several --base-url") {
		t.Errorf("no note about --url-strategy with one URL:\n%s", stderr)
	}
}
