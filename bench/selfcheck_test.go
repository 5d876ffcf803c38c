package bench

import (
	"strings"
	"sync"
	"testing"
)

// A reply past its length warns once a run, naming the likely cause.
func TestRunawayWarnsOnce(t *testing.T) {
	var errb strings.Builder
	p := &Plan{Config: &Config{}, Env: Env{Stderr: &errb}, runawayOnce: &sync.Once{}}
	p.Config.Backend = "vllm-chat"
	p.runaway(100, 264)
	p.runaway(100, 300)
	if n := strings.Count(errb.String(), "warning:"); n != 1 || !strings.Contains(errb.String(), "ignore max_completion_tokens") ||
		!strings.Contains(errb.String(), "--request-timeout") {
		t.Errorf("%d warnings:\n%s", n, errb.String())
	}
}
