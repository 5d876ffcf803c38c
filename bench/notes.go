package bench

import (
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"

	"benchserve/record"
	"benchserve/report"
)

// runaway warns, once a run, that a reply ran far past its requested
// length: the server may ignore the limit, and replies may then run on for
// as long as the request timeout allows (6 hours by default).
func (r *runner) runaway(requested, got int) {
	r.runawayOnce.Do(func() {
		field := "max_tokens"
		if isChat(r.cfg.Backend) {
			field = "max_completion_tokens"
		}
		fmt.Fprintf(r.env.Stderr, "benchserve: warning: a reply has run past twice its requested length (%d tokens asked for, %d so far): "+
			"the server seems to ignore %s (Ollama's OpenAI chat API does), so replies may run until the model stops or --request-timeout passes; "+
			"try --backend vllm (completions, max_tokens), --extra-request-body '{\"max_tokens\": %d}', or --request-timeout\n", requested, got, field, requested)
	})
}

// isChat reports a chat-completions backend.
func isChat(name string) bool {
	return name == "sglang-oai-chat" || name == "vllm-chat" || name == "lmdeploy-chat"
}

// commonErrors is a section of the n most common error texts of the failed
// requests, with their counts and kinds, most frequent first.
func commonErrors(recs []record.Record, n int) []report.Row {
	type entry struct {
		text, kind string
		count      int
		first      int
	}
	by := map[string]*entry{}
	for i := range recs {
		r := &recs[i]
		if r.Success || !r.Sent {
			continue
		}
		e := by[r.Error]
		if e == nil {
			e = &entry{text: r.Error, kind: r.ErrorKind, first: i}
			by[r.Error] = e
		}
		e.count++
	}
	all := make([]*entry, 0, len(by))
	for _, e := range by {
		all = append(all, e)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].count != all[j].count {
			return all[i].count > all[j].count
		}
		return all[i].first < all[j].first
	})
	var rows []report.Row
	for _, e := range all[:min(n, len(all))] {
		text := e.text
		if len(text) > 300 {
			cut := 300
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text = text[:cut] + "..."
		}
		kind := e.kind
		if kind == "" {
			kind = record.KindOther
		}
		rows = append(rows, report.Row{Label: strconv.Itoa(e.count) + " requests, " + kind + ":", Value: text})
	}
	return rows
}
