package sim

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A client that closes its connection mid-stream (as benchserve's
// --request-cancellation-rate does) is in the truth as cancelled: when the
// simulator saw it go (after the chunk it read, before the truth was
// asked for), the request aborted with fewer tokens than asked, and its
// place in the engine freed (the cache can be flushed: nothing runs). A
// request that completes has no cancelled_at.
func TestClientGoneTruth(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.DecodeBase = 2e6 })
	if got := post(t, url+"/v1/completions", `{"model": "benchserve-sim", "prompt": "hi", "max_tokens": 3}`); got.status != 200 {
		t.Fatalf("complete request: %d %s", got.status, got.body)
	}
	resp, err := http.Post(url+"/v1/completions", "application/json",
		strings.NewReader(`{"model": "benchserve-sim", "prompt": "hi", "max_tokens": 1000, "ignore_eos": true, "stream": true}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var doc truthDoc
	for deadline := time.Now().Add(5 * time.Second); len(doc.Requests) < 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		doc = decode[truthDoc](t, do(t, http.MethodGet, url+"/sim/truth", "").body)
	}
	if len(doc.Requests) != 2 {
		t.Fatalf("%d records", len(doc.Requests))
	}
	done, gone := doc.Requests[0], doc.Requests[1]
	if done.CancelledAt != nil || done.FinishReason != "length" {
		t.Errorf("completed request: cancelled_at %v, finish %q", done.CancelledAt, done.FinishReason)
	}
	if gone.CancelledAt == nil || gone.FirstChunk == nil || *gone.CancelledAt < *gone.FirstChunk || *gone.CancelledAt > doc.Now {
		t.Fatalf("cancelled request: cancelled_at %v, first chunk %v, now %v", gone.CancelledAt, gone.FirstChunk, doc.Now)
	}
	if gone.FinishReason != "abort" || gone.Error == "" || gone.CompletionTokens >= 1000 {
		t.Errorf("cancelled request: finish %q, error %q, %d tokens", gone.FinishReason, gone.Error, gone.CompletionTokens)
	}
	if got := post(t, url+"/flush_cache?timeout=5", ""); got.status != 200 {
		t.Errorf("flush: %d %s", got.status, got.body)
	}
}
