package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// The truth keeps each request body's SHA-256 as received, a batch's on
// each of its prompts: a replayed plan's bytes are checked against it.
func TestTruthBodyHash(t *testing.T) {
	_, url := newTestServer(t, nil)
	bodies := map[string]string{
		"/v1/completions": `{"prompt": "a b c", "max_tokens": 2, "stream": true}`,
		"/generate":       `{"text": ["a", "b c"], "sampling_params": {"max_new_tokens": 2}}`,
	}
	for path, body := range bodies {
		if got := post(t, url+path, body); got.status != 200 {
			t.Fatalf("%s: %d %s", path, got.status, got.body)
		}
	}
	doc := decode[struct {
		Requests []struct {
			Endpoint string `json:"endpoint"`
			Body     string `json:"body_sha256"`
		} `json:"requests"`
	}](t, do(t, "GET", url+"/sim/truth", "").body)
	if len(doc.Requests) != 3 {
		t.Fatalf("%d truth records, want 3 (one, and a batch of two)", len(doc.Requests))
	}
	for _, r := range doc.Requests {
		sum := sha256.Sum256([]byte(bodies[r.Endpoint]))
		if r.Body != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: body_sha256 %q, want the body's", r.Endpoint, r.Body)
		}
	}
}
