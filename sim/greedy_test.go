package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// At temperature 0 a reply is a function of its prompt: the same prompt
// gets the same words and stops at the same token (EOS on); another
// prompt, or a sampled request, gets other words.
func TestGreedyIsDeterministic(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.EOSProbability = 0.05 })
	text := func(prompt, temp string, header ...string) string {
		t.Helper()
		body := `{"model":"benchserve-sim","prompt":"` + prompt + `","max_tokens":200` + temp + `}`
		r := do(t, http.MethodPost, url+"/v1/completions", body, header...)
		var c struct{ Choices []struct{ Text string } }
		if r.status != 200 || json.Unmarshal(r.body, &c) != nil || len(c.Choices) != 1 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		return c.Choices[0].Text
	}
	a := text("the same prompt", `,"temperature":0`)
	for range 5 {
		if b := text("the same prompt", `,"temperature":0.0`); b != a {
			t.Fatalf("temperature 0: %q then %q", a, b)
		}
	}
	if b := text("another prompt", `,"temperature":0`); b == a {
		t.Errorf("two prompts, one reply %q", a)
	}
	s1, s2 := text("the same prompt", `,"temperature":1`), text("the same prompt", "")
	if s1 == a || s2 == a || s1 == s2 {
		t.Errorf("sampled replies equal the greedy one or each other: %q %q %q", a, s1, s2)
	}

	// diverge:0 diverges with one request running (more than 0), at the
	// token the truth names; diverge:1 alone does not.
	if b := text("the same prompt", `,"temperature":0`, FaultHeader, "diverge:1"); b != a {
		t.Errorf("diverge:1 alone changed the reply: %q, want %q", b, a)
	}
	d := text("the same prompt", `,"temperature":0`, FaultHeader, "diverge:0")
	var truth struct {
		Requests []struct {
			Fault      string `json:"fault"`
			DivergedAt *int   `json:"diverged_at"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(do(t, http.MethodGet, url+"/sim/truth", "").body, &truth); err != nil {
		t.Fatal(err)
	}
	last := truth.Requests[len(truth.Requests)-1]
	before := truth.Requests[len(truth.Requests)-2]
	if last.Fault != "diverge" || last.DivergedAt == nil || before.Fault != "diverge" || before.DivergedAt != nil {
		t.Fatalf("truth %+v, %+v", before, last)
	}
	aw, dw := strings.Fields(a), strings.Fields(d)
	k := *last.DivergedAt
	if k >= len(aw) || len(dw) != len(aw) || strings.Join(aw[:k], " ") != strings.Join(dw[:k], " ") || aw[k] == dw[k] {
		t.Errorf("diverged at %d: %q vs %q", k, a, d)
	}
}
