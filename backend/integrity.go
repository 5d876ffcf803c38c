package backend

import (
	"errors"

	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
	"benchserve/record"
)

// The stream integrity check (record.Integrity, docs/metrics.md "Stream
// integrity"): what a streamed reply lacked or got wrong, noted as the
// parser reads it. The rules are conservative: each flags only what no
// conforming server sends.

// integrity completes the check of a stream that ended with err: one read
// to its end (err nil, or its missing terminator) or to an error event is
// checked; one that broke off otherwise (reset, timeout, bad JSON) is not.
func (p *parser) integrity(err error) {
	if p.whole || !p.c.streams() {
		return
	}
	var se serverError
	switch {
	case err == nil || p.integ.Has(record.NoTerminator):
	case errors.As(err, &se):
		if p.chunks > 0 {
			p.integ |= record.ErrorAfterContent
		}
	default:
		return
	}
	p.rec.Stream = p.integ | record.StreamRead
}

// streamEndChecks notes, at a stream's end, a missing terminator and, in a
// stream that has its terminator, a missing finish reason.
func (p *parser) streamEndChecks() {
	switch {
	case !p.sse:
	case !p.done && p.proto.end != "":
		p.integ |= record.NoTerminator
	case p.done && p.proto.finishes && !p.finished:
		p.integ |= record.NoFinish
	}
}

// usageSlack is how many more content chunks than reported tokens a
// server may send: a reasoning parser may split the token that ends the
// reasoning into two deltas.
func usageSlack(reported int) int { return 2 + reported/8 }

// usageChecks compares the server's final token count with the content
// received: every chunk with content carries at least one token, so more
// chunks than tokens (beyond usageSlack) is a count that disagrees.
func (p *parser) usageChecks() {
	if p.served && p.reported > 0 && p.chunks > p.reported+usageSlack(p.reported) {
		p.integ |= record.UsageMismatch
	}
}

// runningCount notes a count of completion tokens: one lower than the
// count before it (a running count that went back) disagrees.
func (p *parser) runningCount(n int) {
	if p.served && n < p.reported {
		p.integ |= record.UsageMismatch
	}
}

// retokenizedCheck flags a streamed reply whose text holds more than
// twice the tokens the server reported, and 16 more: a tokenizer that
// differs from the server's moves a count by tens of percent, not by half.
// The other way (the server counting far more) is allowed: hidden
// reasoning, special tokens and stop strings are counted but not sent.
func retokenizedCheck(r *record.Record) {
	if r.Stream.Has(record.StreamRead) && r.Success && r.OutputSource == record.OutputServer &&
		r.TextCounted && r.TextTokens > 2*r.OutputLen+16 {
		r.Stream |= record.UsageMismatch
	}
}

// choiceIndex checks an OpenAI choice's index: a request for one choice
// gets index 0 only.
func (p *parser) choiceIndex(choice jsonscan.Value) {
	if p.multi {
		return
	}
	if n, ok := intMember(choice, "index"); ok && n != 0 {
		p.integ |= record.BadIndex
	}
}

// sequence checks a Responses event's sequence_number: each is higher
// than the one before.
func (p *parser) sequence(v jsonscan.Value) {
	n, ok := v.Int()
	if !ok {
		return
	}
	if p.seqSeen && int(n) <= p.lastSeq {
		p.integ |= record.BadIndex
	}
	p.lastSeq, p.seqSeen = int(n), true
}

// blockIndex checks a Messages content block's index: each block starts
// at a higher index than the one before, and a delta goes to a block that
// has started.
func (p *parser) blockIndex(v jsonscan.Value, start bool) {
	n, ok := v.Int()
	if !ok {
		return
	}
	switch {
	case start:
		if p.lastBlock >= 0 && int(n) <= p.lastBlock {
			p.integ |= record.BadIndex
		}
		p.lastBlock = int(n)
	case p.lastBlock >= 0 && int(n) > p.lastBlock:
		p.integ |= record.BadIndex
	}
}

// multiChoice reports an extra body that asks for more than one choice.
func multiChoice(extra *pyjson.Object) bool {
	if extra == nil {
		return false
	}
	raw, ok := extra.Get("n")
	if !ok {
		return false
	}
	v, err := jsonscan.Parse(raw)
	if err != nil {
		return false
	}
	n, ok := v.Int()
	return ok && n != 1
}
