package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"benchserve/dataset"
	"benchserve/record"
)

// converse runs a multi-turn conversation (spec §4.5): each round adds its
// messages to the history and sends the whole history; the reply joins the
// history as the assistant's message. A round's intended start is the end
// of the round before. Unlike the reference, which reports no input tokens
// for conversations, each round's input is the server's prompt_tokens, or
// else our count of the history.
// stop ends the conversation before a round (the interrupt: later rounds
// are not sent), and its think time; ctx is what the rounds run under.
// Round k > 0 is due the think time of (session, k) after round k-1
// ended: its intended start is then, and it waits for it on the pacer,
// holding the conversation's concurrency slot. session is the plan
// position (-1: a warmup request, which does not think).
func (r *runner) converse(stop, ctx context.Context, session int, row *dataset.Row, lora string, outputLen int, recs []record.Record, epoch time.Time, ended func()) {
	var history []json.RawMessage
	for k, turn := range row.Turns {
		if stop.Err() != nil {
			return
		}
		rec := &recs[k]
		var msgs []json.RawMessage
		if err := json.Unmarshal(turn, &msgs); err != nil {
			rec.Sent, rec.Error, rec.ErrorKind = true, fmt.Sprintf("round %d: its messages are not a JSON array: %v", k+1, err), record.KindOther
			skipRest(recs, k)
			return
		}
		if row.Snapshots {
			history = msgs // the trace's whole request
		} else {
			history = append(history, msgs...)
		}
		round := *row
		round.Messages = joinMessages(history)
		in := r.input(&round, turnOutput(row, k, outputLen, session < 0), lora)
		if k > 0 {
			var delay time.Duration
			if session >= 0 {
				delay = r.traffic.think.before(session, k, row)
			}
			due, at := dueAt(epoch, recs[k-1].End, delay)
			rec.Intended, rec.PlannedDelay = due, delay.Seconds()
			if delay > 0 && !r.waitUntil(stop, at) {
				return // interrupted, or the run's time is up, while it thought
			}
		}
		rec.PromptLen = 0
		var free func()
		if r.sessions != nil && session >= 0 {
			// Under --max-sessions each turn takes a request slot, given
			// back when its reply has ended, so none is held while thinking.
			if !r.acquire(stop) {
				return
			}
			free = r.release
		}
		r.send(ctx, in, rec, epoch, ended, free)
		if !rec.Sent {
			return
		}
		if rec.PromptLen > 0 {
			rec.InputLen = rec.PromptLen
		} else {
			rec.InputLen = r.countMessages(history)
			rec.PromptLen = rec.InputLen
		}
		rec.InputTextLen, rec.InputVisionLen = rec.InputLen, 0
		if !rec.Success {
			skipRest(recs, k) // the conversation cannot go on without the reply
			return
		}
		if row.Snapshots {
			continue
		}
		reply, _ := json.Marshal(map[string]string{"role": "assistant", "content": rec.Text})
		history = append(history, reply)
	}
}

// turnOutput is turn k's output length: the trace's for the turn when it
// gave one (at most outputLen in a warmup), else outputLen.
func turnOutput(row *dataset.Row, k, outputLen int, warmup bool) int {
	if k >= len(row.TurnInfo) || row.TurnInfo[k].OutputLen <= 0 {
		return outputLen
	}
	if warmup {
		return min(row.TurnInfo[k].OutputLen, outputLen)
	}
	return row.TurnInfo[k].OutputLen
}

// skipRest marks the rounds after round k, which failed, as not sent
// for that reason.
func skipRest(recs []record.Record, k int) {
	for i := k + 1; i < len(recs); i++ {
		recs[i].Error = fmt.Sprintf("not sent: round %d of its conversation failed", k+1)
	}
}

// skippedRounds takes out the conversation rounds not sent because a
// round before them failed (skipRest), and counts them: they are neither
// requests of the run nor its failures.
func skippedRounds(recs []record.Record) (kept []record.Record, n int) {
	skipped := func(rec *record.Record) bool { return !rec.Sent && rec.Error != "" }
	for i := range recs {
		if skipped(&recs[i]) {
			n++
		}
	}
	if n == 0 {
		return recs, 0 // no copy: at 10,000 streams the records are tens of MB
	}
	kept = make([]record.Record, 0, len(recs)-n)
	for i := range recs {
		if !skipped(&recs[i]) {
			kept = append(kept, recs[i])
		}
	}
	return kept, n
}

// countMessages counts a history's tokens: through the chat template when
// the tokenizer has one, else the contents' tokens.
func (r *runner) countMessages(history []json.RawMessage) int {
	n := 0
	for _, m := range history {
		var v struct {
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m, &v) != nil {
			continue
		}
		var s string
		if json.Unmarshal(v.Content, &s) == nil {
			n += r.Tok.Count(s)
		} else {
			n += r.Tok.Count(string(v.Content))
		}
	}
	return n
}

func joinMessages(ms []json.RawMessage) []byte {
	b := []byte{'['}
	for i, m := range ms {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, m...)
	}
	return append(b, ']')
}
