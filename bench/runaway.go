package bench

import (
	"fmt"

	"benchserve/backend"
)

// runaway warns, once a run, that a reply ran far past its requested
// length: the server may ignore the limit, and replies may then run on for
// as long as the request timeout allows (6 hours by default).
func (p *Plan) runaway(requested, got int) {
	p.runawayOnce.Do(func() {
		field := "max_tokens"
		if s, _ := backend.Lookup(p.Config.Backend); s.Chat {
			field = "max_completion_tokens"
		}
		fmt.Fprintf(p.Env.Stderr, "benchserve: warning: a reply has run past twice its requested length (%d tokens asked for, %d so far): "+
			"the server seems to ignore %s (Ollama's OpenAI chat API does), so replies may run until the model stops or --request-timeout passes; "+
			"try --backend vllm (completions, max_tokens), --extra-request-body '{\"max_tokens\": %d}', or --request-timeout\n", requested, got, field, requested)
	})
}
